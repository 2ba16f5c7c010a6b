import CSQLiveSupport
import GRDBSQLite

/// Where a committed state of a database file stands in its history: the
/// wal-index's change counter (`iChange`, one more per commit, WAL mode)
/// or the header's file change counter (offset 24, one more per commit,
/// rollback-journal modes). The change feed tags each commit with the
/// position it leads to, and a state read whole is tagged with the position
/// of its snapshot, so that a kept result applies exactly the commits its
/// snapshot did not include.
struct FilePosition: Hashable, Sendable, CustomStringConvertible {
    var wal: Bool
    var value: UInt32

    /// Whether this position comes after another; `nil` when they are not
    /// of the same kind (the journal mode changed) and cannot be compared.
    /// Counters wrap around: the difference decides.
    func isAfter(_ other: FilePosition) -> Bool? {
        guard wal == other.wal else { return nil }
        return Int32(bitPattern: value &- other.value) > 0
    }

    var description: String { "\(wal ? "wal" : "counter") \(value)" }
}

extension FilePosition {
    /// Where a connection's read transaction stands, at the latest: in WAL
    /// mode (an observer connection whose last read was a WAL one) the
    /// wal-index's counter now, which is at or past its snapshot's; else
    /// the file change counter its transaction's state of the file has.
    static func latest(_ connection: OpaquePointer?) -> FilePosition? {
        var request = sqlive_observer_pages_request()
        request.op = SQLIVE_PAGES_LAST_WAS_WAL
        if sqlive_observer_pages(connection, &request) == SQLITE_OK {
            guard let connection, let header = WALStorage(connection: connection).indexHeader() else { return nil }
            return FilePosition(wal: true, value: header.change)
        }
        guard let header = DatabaseHeader.read(100, of: connection), header.count == 100 else { return nil }
        return FilePosition(wal: false, value: header.withUnsafeBytes { $0.bigEndianUInt32(at: 24) })
    }
}
