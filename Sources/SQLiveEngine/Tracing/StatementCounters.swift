import GRDBSQLite

/// SQLite's own counters for one run of a statement (`sqlite3_stmt_status`):
/// what the statement cost, in the planner's terms.
///
/// A full-scan step is a row read by walking a table or index from one end
/// (an index would let SQLite search); a sort is a temporary b-tree built
/// for ORDER BY, GROUP BY or DISTINCT; automatic-index rows are rows copied
/// into an index SQLite builds for this statement alone.
public struct StatementCounters: Hashable, Sendable {
    /// `SQLITE_STMTSTATUS_FULLSCAN_STEP`.
    public var fullScanSteps: Int
    /// `SQLITE_STMTSTATUS_SORT`.
    public var sorts: Int
    /// `SQLITE_STMTSTATUS_AUTOINDEX`: rows inserted into automatic indexes.
    public var autoIndexRows: Int
    /// `SQLITE_STMTSTATUS_VM_STEP`: virtual machine operations.
    public var vmSteps: Int
    /// `SQLITE_STMTSTATUS_MEMUSED`: bytes the prepared statement holds.
    public var memoryBytes: Int

    public init(fullScanSteps: Int = 0, sorts: Int = 0, autoIndexRows: Int = 0, vmSteps: Int = 0, memoryBytes: Int = 0)
    {
        self.fullScanSteps = fullScanSteps
        self.sorts = sorts
        self.autoIndexRows = autoIndexRows
        self.vmSteps = vmSteps
        self.memoryBytes = memoryBytes
    }

    /// The counters of a statement that has run (before it is reset or
    /// finalized).
    init(_ statement: OpaquePointer) {
        func read(_ counter: Int32) -> Int { Int(sqlite3_stmt_status(statement, counter, 0)) }
        self.init(
            fullScanSteps: read(SQLITE_STMTSTATUS_FULLSCAN_STEP), sorts: read(SQLITE_STMTSTATUS_SORT),
            autoIndexRows: read(SQLITE_STMTSTATUS_AUTOINDEX), vmSteps: read(SQLITE_STMTSTATUS_VM_STEP),
            memoryBytes: read(SQLITE_STMTSTATUS_MEMUSED))
    }

    /// The non-zero counters, compactly: `full scan 10000 steps, 1 sort,
    /// automatic index 500 rows, 30012 VM steps, 18 KB`.
    public var summary: String {
        var parts: [String] = []
        if fullScanSteps > 0 { parts.append("full scan \(fullScanSteps) step\(fullScanSteps == 1 ? "" : "s")") }
        if sorts > 0 { parts.append("\(sorts) sort\(sorts == 1 ? "" : "s")") }
        if autoIndexRows > 0 { parts.append("automatic index \(autoIndexRows) row\(autoIndexRows == 1 ? "" : "s")") }
        if vmSteps > 0 { parts.append("\(vmSteps) VM step\(vmSteps == 1 ? "" : "s")") }
        if memoryBytes > 0 { parts.append(Self.bytes(memoryBytes)) }
        return parts.joined(separator: ", ")
    }

    static func bytes(_ count: Int) -> String {
        if count < 1024 { return "\(count) B" }
        if count < 1024 * 1024 { return "\((count + 512) / 1024) KB" }
        return String(format: "%.1f MB", Double(count) / 1_048_576)
    }
}
