import Foundation
import GRDBSQLite

/// Tells whether anyone committed to the database, through a connection of its own.
///
/// The probe's connection is sqlive's alone and never writes, so it sees
/// every commit to the file — other processes', other connections', and
/// sqlive's own session's. Telling sqlive's commits apart is the job of
/// the `LocalCommitLedger`. Because the connection is the probe's alone, a
/// probe never waits for a statement or a transaction of the session.
///
/// What it reads depends on the journal mode, found in the file header
/// (bytes 18–19 are 2 in WAL mode):
/// - **WAL**: `PRAGMA data_version`, which changes when a connection *other
///   than the one reading it* commits. In WAL mode readers never block
///   writers, so reading it costs other writers nothing.
/// - **Rollback journal**: the header's file change counter (offset 24),
///   which every commit increments — read through SQLite's own open file
///   (`SQLITE_FCNTL_FILE_POINTER`), without taking a lock. A read lock
///   here would make a writer that has no busy timeout (the sqlite3 CLI's
///   default) fail its commit with "database is locked".
///
/// The probe also compares the file's device and inode with those it saw
/// last, to report a database deleted or replaced under sqlive, and its
/// modification time and size, to notice writes to the file when no
/// inotify descriptor does.
///
/// Not thread-safe: it is confined to the `ExternalChangeWatcher`'s thread.
final class DataVersionProbe {
    struct FileIdentity: Equatable, Sendable {
        var device: UInt64
        var inode: UInt64
    }

    /// What one reading found.
    enum Reading: Equatable {
        /// `PRAGMA data_version` (WAL mode), or the change counter with
        /// bit 40 set (rollback journal), so a change of mode is a change.
        case version(Int64)
        /// Another connection holds a lock that keeps readers out (a
        /// rollback-journal commit in progress): look again soon.
        case busy
        case failed(String)
    }

    let path: String
    /// The probe's connection (its WAL and wal-index are read through it: `WALStorage`).
    private let raw: RawConnection
    private let version: RawStatement
    var connection: OpaquePointer { raw.handle }

    /// Whether the file is a Litestream follow target (known at opening).
    let isFollowTarget: Bool

    /// Opens the probe's read-only connection.
    init(path: String) throws(SQLiveError) {
        self.path = path
        isFollowTarget = ObserverVFS.isFollowTarget(path)
        let flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
        do {
            // A Litestream follow target: through the observer, which never
            // locks it (Litestream waits for its locks with no time-out).
            raw =
                isFollowTarget
                ? try RawConnection(
                    path: ObserverVFS.uri(path: path, vfs: ObserverVFS.observer), flags: flags | SQLITE_OPEN_URI)
                : try RawConnection(path: path, flags: flags)
            version = try raw.prepare("PRAGMA data_version")
        } catch {
            throw .cannotOpen(path: path, reason: "probe connection: \(error.message)")
        }
    }

    /// The database file as SQLite's open file sees it: its header, its
    /// size, and whether a writer holds a lock on it.
    struct FileState: Equatable {
        /// The first bytes, up to `DatabaseHeader.length` (fewer when the file is shorter).
        var header: [UInt8]
        var size: Int64
        /// Whether a connection holds a write lock (`RESERVED` or more) in
        /// a rollback-journal mode: a commit may be half written.
        var writerActive: Bool

        /// Whether the header says WAL mode (bytes 18 and 19 are 2).
        var isWAL: Bool { header.count >= 20 && header[18] == 2 && header[19] == 2 }
    }

    /// Reads the data version now. Costs a few microseconds.
    ///
    /// - parameter file: the file's state, read just before (its header
    ///   holds the rollback-journal change counter).
    func read(_ file: FileState?) -> Reading {
        if let header = file?.header, let counter = DatabaseHeader.rollbackChangeCounter(header) {
            return .version(Int64(counter) | (1 << 40))
        }
        defer { version.reset() }
        switch version.step() {
        case SQLITE_ROW:
            return .version(sqlite3_column_int64(version.handle, 0))
        case SQLITE_BUSY, SQLITE_LOCKED:
            return .busy
        case let code:
            return .failed(String(cString: sqlite3_errstr(code)))
        }
    }

    /// Reads the data version and the file's state together.
    func read() -> Reading {
        read(fileState())
    }

    /// The header and size of the file the probe opened, read through
    /// SQLite's own open file, without a lock; `nil` when it cannot be read.
    func fileState() -> FileState? {
        guard let (file, methods) = DatabaseHeader.openFile(of: connection),
            let xRead = methods.xRead, let xFileSize = methods.xFileSize
        else { return nil }
        var size: sqlite3_int64 = 0
        guard xFileSize(file, &size) == SQLITE_OK else { return nil }
        let length = Int(min(Int64(DatabaseHeader.length), size))
        var header = [UInt8](repeating: 0, count: length)
        if length > 0 {
            guard xRead(file, &header, Int32(length), 0) == SQLITE_OK else { return nil }
        }
        var reserved: Int32 = 0
        if let xCheckReservedLock = methods.xCheckReservedLock {
            _ = xCheckReservedLock(file, &reserved)
        }
        return FileState(header: header, size: Int64(size), writerActive: reserved != 0)
    }

    /// When the file's content last changed, as far as `stat(2)` tells:
    /// its modification time and its size.
    struct Modification: Equatable, Sendable {
        var seconds: Int
        var nanoseconds: Int
        var size: Int64
    }

    /// Who may do what with the file: its permission bits and its owner.
    struct Permissions: Equatable, Sendable {
        var mode: UInt32
        var owner: UInt32
        var group: UInt32
    }

    /// The database file's identity, modification and permissions, or
    /// `nil` when it does not exist. One `stat(2)`.
    func fileStatus() -> (identity: FileIdentity, modification: Modification, permissions: Permissions)? {
        Self.status(of: path)
    }

    /// The identity, modification and permissions of the file at `path`
    /// (symbolic links followed), or `nil` when there is none. One `stat(2)`.
    static func status(of path: String)
        -> (identity: FileIdentity, modification: Modification, permissions: Permissions)?
    {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (
            FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)),
            Modification(seconds: info.st_mtim.tv_sec, nanoseconds: info.st_mtim.tv_nsec, size: Int64(info.st_size)),
            Permissions(mode: UInt32(info.st_mode) & 0o7777, owner: info.st_uid, group: info.st_gid)
        )
    }
}
