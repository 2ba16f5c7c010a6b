import Foundation
import GRDB
import GRDBSQLite
import SQLiveLocks

/// Refuses the session's writes while its path no longer leads to the file
/// its connection has open: the file was deleted under it, or another was
/// put at the path and is not followed yet.
///
/// A write to a deleted file is acknowledged and lost with it (nothing will
/// ever read that inode again); a write that lands on the old file while a
/// new one sits at the path is lost the same way. So before each script,
/// on the session's connection, one `stat(2)` of the path is compared with
/// the identity the file had when it was opened; while they differ the
/// connection is `query_only` (SQLite refuses every write: statements,
/// `.import`'s inserts) and reads go on. When the path leads to the file
/// again (a hard link put back), writes are allowed again; a new file at
/// the path is followed (`LiveDatabase.follow`), whose connection starts
/// afresh.
final class PathGuard: Sendable {
    let path: String
    private let identity: DataVersionProbe.FileIdentity?

    // Mutable State: guarded by the mutex; changed only on the session's
    // connection (its queue runs one caller at a time). Whether this guard
    // set `query_only` on it.
    private let refusing = Locked(false)

    /// Takes the identity of the file at `path` now, just after the
    /// session's connection opened it; nil for no file (in memory), for
    /// which the guard does nothing.
    init?(location: DatabaseLocation) {
        guard let path = location.filePath, !location.isImmutable else { return nil }
        self.path = path
        identity = Self.identity(of: path)
        guard identity != nil else { return nil }
    }

    private static func identity(of path: String) -> DataVersionProbe.FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return DataVersionProbe.FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// Called on the session's connection before each script.
    func check(_ db: Database) {
        guard let connection = db.sqliteConnection else { return }
        let moved = Self.identity(of: path) != identity
        let change = refusing.withLock { refusing -> Bool? in
            guard moved != refusing else { return nil }
            refusing = moved
            return moved
        }
        guard let change else { return }
        sqlite3_exec(connection, change ? "PRAGMA query_only = 1" : "PRAGMA query_only = 0", nil, nil, nil)
        if change {
            Log.engine.debug("\(path) is no longer the file sqlive opened: writes are refused until it is")
        }
    }

    /// Whether writes are refused now.
    var isRefusing: Bool {
        refusing.withLock { $0 }
    }

    /// A write SQLite refused because of this guard, said as what it is.
    func explain(_ failure: SQLiteFailure) -> SQLiteFailure {
        guard failure.code == SQLITE_READONLY, isRefusing else { return failure }
        var failure = failure
        let state = FileManager.default.fileExists(atPath: path) ? "was replaced by another file" : "was deleted"
        failure.message =
            "attempt to write a readonly database: \(path) \(state) while open, and a write would be lost "
            + "with the file sqlive has open; writes are refused until the path leads to a database again "
            + "(a new file there is followed, or .open it)"
        return failure
    }
}
