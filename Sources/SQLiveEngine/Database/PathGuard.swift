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
    // connection (its queue runs one caller at a time). While refusing, the
    // `query_only` the user had set, restored when the path leads to the
    // file again; nil while not refusing.
    private let userQueryOnly = Locked<Bool?>(nil)

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
        DataVersionProbe.status(of: path)?.identity
    }

    /// Called on the session's connection before each script.
    ///
    /// While the path leads elsewhere, `query_only` is set before every
    /// script (a script that turned it off does not let the next one
    /// write); once it leads to the file again, the user's own setting
    /// comes back.
    ///
    /// The `stat` is skipped where no commit can follow: a script that only
    /// reads (it starts with SELECT, VALUES or EXPLAIN), or one inside a
    /// transaction that cannot end it (no COMMIT, END or RELEASE in its
    /// text): a transaction of 50,000 INSERTs costs two, not 50,000.
    func check(_ db: Database, script: String?) {
        guard let connection = db.sqliteConnection else { return }
        let saved = userQueryOnly.withLock { $0 }
        if saved == nil, let script, Self.cannotCommit(script, inTransaction: sqlite3_get_autocommit(connection) == 0) {
            return
        }
        let moved = Self.identity(of: path) != identity
        if moved {
            if saved == nil {
                let user = Self.queryOnly(connection)
                userQueryOnly.withLock { $0 = user }
                Log.engine.debug("\(path) is no longer the file sqlive opened: writes are refused until it is")
            }
            sqlite3_exec(connection, "PRAGMA query_only = 1", nil, nil, nil)
        } else if let saved {
            userQueryOnly.withLock { $0 = nil }
            sqlite3_exec(connection, saved ? "PRAGMA query_only = 1" : "PRAGMA query_only = 0", nil, nil, nil)
        }
    }

    /// Whether a script can make no commit: it only reads, or it runs
    /// inside a transaction it cannot end. Words, not parsing: a script
    /// that fools it (a comment first) is merely checked.
    private static let words: [[UInt8]] = ["commit", "end", "release"].map { Array($0.utf8) }

    static func cannotCommit(_ script: String, inTransaction: Bool) -> Bool {
        script.utf8.withContiguousStorageIfAvailable { cannotCommit(bytes: $0, inTransaction: inTransaction) }
            ?? cannotCommit(bytes: Array(script.utf8)[...], inTransaction: inTransaction)
    }

    private static func cannotCommit<Bytes: RandomAccessCollection<UInt8>>(bytes: Bytes, inTransaction: Bool) -> Bool
    where Bytes.Index == Int {
        var start = bytes.startIndex
        while start < bytes.endIndex, isBlank(bytes[start]) { start += 1 }
        func startsWith(_ word: [UInt8]) -> Bool {
            guard bytes.endIndex - start > word.count else { return false }
            for (offset, letter) in word.enumerated() where bytes[start + offset] | 0x20 != letter { return false }
            let next = bytes[start + word.count] | 0x20
            return !(next >= 0x61 && next <= 0x7A) && next != 0x5F | 0x20
        }
        if Self.reads.contains(where: startsWith) {
            // One statement that reads, and nothing after it that writes
            // (a semicolon in a literal is merely checked): a semicolon, if
            // any, only at the end.
            guard let semicolon = bytes[start...].firstIndex(of: 0x3B) else { return true }
            return bytes[(semicolon + 1)...].allSatisfy(isBlank)
        }
        guard inTransaction else { return false }
        // Bytes, not Foundation's string search (20% of a 50,000-INSERT
        // script's time when it was).
        return !Self.words.contains { String.holds($0, in: bytes) }
    }

    private static let reads: [[UInt8]] = ["select", "values", "explain"].map { Array($0.utf8) }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// The connection's `query_only` now.
    private static func queryOnly(_ connection: OpaquePointer) -> Bool {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(connection, "PRAGMA query_only", -1, &statement, nil) == SQLITE_OK else {
            return false
        }
        defer { sqlite3_finalize(statement) }
        return sqlite3_step(statement) == SQLITE_ROW && sqlite3_column_int(statement, 0) != 0
    }

    /// Whether writes are refused now.
    var isRefusing: Bool {
        userQueryOnly.withLock { $0 != nil }
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
