import Foundation
import GRDB
import GRDBSQLite

extension LiveDatabase {
    /// Why a backup or a restore failed: the sqlite3 shell's message.
    public struct CopyFailure: Error, Hashable, Sendable {
        public var message: String
    }

    /// Copies the database `schema` (`main`, `temp` or an attached one)
    /// into a file at `path`, as the sqlite3 shell's `.backup` (and `.save`)
    /// does with SQLite's backup API, but never leaving a half-written file
    /// there: the copy is made in a new file beside it, closed, synced,
    /// then renamed over `path`, and the directory synced.
    ///
    /// The copy of a WAL database says WAL in its header, as sqlite3's does,
    /// but it is never opened in WAL mode here: no `-wal` or `-shm` is left
    /// beside it (nor beside its temporary name). When the copy fails,
    /// nothing is left: neither the temporary file nor its journal.
    ///
    /// This blocks the calling thread, as `run` does.
    public func backup(schema: String, to path: String) throws(CopyFailure) {
        let directory = (path as NSString).deletingLastPathComponent
        let temporary =
            (directory.isEmpty ? "" : directory + "/") + ".\((path as NSString).lastPathComponent).sqlive-\(getpid())"
        var failure: CopyFailure?
        do {
            var destination: RawConnection?
            do {
                destination = try RawConnection(
                    path: temporary, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX)
            } catch {
                // SQLite may have made the file before it failed.
                Self.removeCopy(temporary)
                throw CopyFailure(message: "Error: cannot open \"\(path)\"")
            }
            if let copy = destination {
                writer.writeWithoutTransaction { db in
                    guard let source = db.sqliteConnection else { return }
                    guard let backup = sqlite3_backup_init(copy.handle, "main", source, schema) else {
                        failure = CopyFailure(message: "Error: \(copy.lastError)")
                        return
                    }
                    var code: Int32
                    repeat { code = sqlite3_backup_step(backup, 100) } while code == SQLITE_OK
                    sqlite3_backup_finish(backup)
                    if code != SQLITE_DONE { failure = CopyFailure(message: "Error: \(copy.lastError)") }
                }
            }
            // Closed now (its journal gone), before the file is synced and
            // takes the name: nothing reads the copy, so a WAL database's
            // copy gets no `-wal` or `-shm`.
            destination = nil
        }
        if failure == nil {
            let descriptor = Glibc.open(temporary, O_RDONLY)
            if descriptor < 0 || fsync(descriptor) != 0 {
                failure = CopyFailure(message: "Error: \(String(cString: strerror(errno)))")
            }
            if descriptor >= 0 { Glibc.close(descriptor) }
        }
        if failure == nil && rename(temporary, path) != 0 {
            failure = CopyFailure(message: "Error: cannot open \"\(path)\"")
        }
        if let failure {
            Self.removeCopy(temporary)
            throw failure
        }
        // The new name on disk too.
        let descriptor = Glibc.open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY)
        if descriptor >= 0 {
            _ = fsync(descriptor)
            Glibc.close(descriptor)
        }
    }

    /// Removes a copy that failed, and whatever SQLite made beside it.
    private static func removeCopy(_ path: String) {
        for suffix in ["", "-journal", "-wal", "-shm"] { unlink(path + suffix) }
    }

    /// Replaces the database `schema` with the content of the file at
    /// `path`, as the sqlite3 shell's `.restore` does (SQLite's backup API,
    /// the busy source retried three times).
    ///
    /// This blocks the calling thread, as `run` does.
    public func restore(schema: String, from path: String) throws(CopyFailure) {
        let source: RawConnection
        do {
            source = try RawConnection(path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        } catch {
            throw CopyFailure(message: "Error: cannot open \"\(path)\"")
        }
        var failure: CopyFailure?
        writer.writeWithoutTransaction { db in
            guard let target = db.sqliteConnection else { return }
            WALClosing.sessionMayWrite(target)
            guard let backup = sqlite3_backup_init(target, schema, source.handle, "main") else {
                failure = CopyFailure(message: "Error: \(String(cString: sqlite3_errmsg(target)))")
                return
            }
            var code: Int32
            var busy = 0
            repeat {
                code = sqlite3_backup_step(backup, 100)
                if code == SQLITE_BUSY {
                    busy += 1
                    if busy > 3 { break }
                    usleep(100_000)
                }
            } while code == SQLITE_OK || code == SQLITE_BUSY
            sqlite3_backup_finish(backup)
            if code == SQLITE_BUSY || code == SQLITE_LOCKED {
                failure = CopyFailure(message: "Error: source database is busy")
            } else if code != SQLITE_DONE {
                failure = CopyFailure(message: "Error: \(String(cString: sqlite3_errmsg(target)))")
            }
            db.clearSchemaCache()
        }
        withExtendedLifetime(source) {}
        // Every page may have changed: every live query refreshes.
        live.pagesWereReplaced()
        if let failure { throw failure }
    }
}
