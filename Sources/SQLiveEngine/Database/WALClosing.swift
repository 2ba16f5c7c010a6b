import CSQLiveSupport
import Foundation
import GRDBSQLite
import SQLiveLocks

/// What closing sqlive's connections may do to a WAL database: nothing,
/// unless the user's own statements wrote.
///
/// SQLite's last connection to a WAL file checkpoints the WAL into the
/// database and deletes it as it closes. The sqlite3 shell does so after a
/// mere `SELECT`: a `-wal` that a stopped application left behind is
/// copied into the file, which changes bytes and modification time (a
/// database under version control shows as modified after a look). So
/// every connection sqlive opens is told not to (`prepare`), and only the
/// session's connection is allowed to again:
///
/// - when a statement of the user's that may write runs on it
///   (`sessionMayWrite`): then closing does what the sqlite3 shell does;
/// - and, once the program has closed them all (`finish`), a file whose
///   `-wal` did not exist before it was opened and is still empty has it
///   removed, as it came: the checkpoint copies nothing.
public enum WALClosing {
    /// Called on every connection sqlive opens to a file, as it opens.
    static func prepare(_ connection: OpaquePointer?) {
        guard let connection else { return }
        _ = sqlive_set_checkpoint_on_close(connection, 0)
    }

    /// Called on the session's connection before a statement that may write.
    static func sessionMayWrite(_ connection: OpaquePointer?) {
        guard let connection else { return }
        _ = sqlive_set_checkpoint_on_close(connection, 1)
    }

    /// Files whose `-wal` did not exist when this process first opened
    /// them: the empty `-wal` SQLite makes for a read goes at `finish`.
    private static let walsToRemove = Locked<[String: Bool]>([:])

    /// Called before a session opens the file at `path` (a file database's
    /// own path): notes whether it has a `-wal`, the first time only.
    static func noteOpening(_ path: String?) {
        guard let path else { return }
        let exists = access(path + "-wal", F_OK) == 0
        walsToRemove.withLock { files in
            if files[path] == nil { files[path] = !exists }
        }
    }

    /// Called by a program once every connection it opened is closed (the
    /// `sqlive` executable, as it exits): for each file whose `-wal` did
    /// not exist before this process opened it and is empty now, a
    /// read-write connection joins the WAL and closes, which removes the
    /// empty `-wal` if no other process has the file open, as the sqlite3
    /// shell's reads leave it. Read-only sessions too: their own
    /// connection cannot remove it. Skipped where the file or its
    /// directory may not be written.
    public static func finish() {
        let files = walsToRemove.withLock { files in
            defer { files = [:] }
            return files.filter(\.value).map(\.key)
        }
        for path in files where walIsEmpty(besides: path) && access(path, W_OK) == 0 {
            let directory = (path as NSString).deletingLastPathComponent
            guard access(directory.isEmpty ? "." : directory, W_OK) == 0 else { continue }
            guard let closer = try? RawConnection(path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX),
                let statement = try? closer.prepare("SELECT 1 FROM sqlite_master LIMIT 1")
            else { continue }
            _ = statement.step()
            withExtendedLifetime(statement) {}
            _ = sqlive_set_checkpoint_on_close(closer.handle, 1)
        }
    }

    private static func walIsEmpty(besides path: String) -> Bool {
        var status = stat()
        return stat(path + "-wal", &status) == 0 && status.st_size == 0
    }
}
