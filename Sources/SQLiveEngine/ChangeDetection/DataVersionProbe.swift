import Foundation
import GRDB

/// Confirms that another connection committed, and that the file is still there.
///
/// `PRAGMA data_version`, read on sqlive's writer connection, changes only
/// when *another* connection commits — so sqlive's own commits are never
/// taken for external ones, and a monitor's false alarms (a checkpoint, a
/// rollback, sqlive's own write to `-wal`) cost one pragma, microseconds.
///
/// The probe also compares the file's device and inode with those seen at
/// start, to report a database deleted or replaced under sqlive.
struct DataVersionProbe: Sendable {
    struct FileIdentity: Equatable, Sendable {
        var device: UInt64
        var inode: UInt64
    }

    /// What a probe found.
    enum Finding: Equatable, Sendable {
        case unchanged
        case externalCommit
        case fileChanged(String)
    }

    let writer: any DatabaseWriter
    let path: String?

    /// Reads the current data version.
    func dataVersion() async throws -> Int {
        try await writer.writeWithoutTransaction { db in
            try Int.fetchOne(db, sql: "PRAGMA data_version") ?? 0
        }
    }

    /// The identity of the database file, or `nil` when it does not exist.
    func fileIdentity() -> FileIdentity? {
        guard let path else { return nil }
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }
}
