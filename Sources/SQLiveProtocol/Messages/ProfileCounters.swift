/// SQLite's counters for one run of a statement (`sqlite3_stmt_status`),
/// in `trace/statement` with `profile: true` and in `liveQuery/list`.
/// Only the counters that are not zero are present.
///
/// ```json
/// {"fullScanSteps": 9999, "sorts": 1, "vmSteps": 70123, "memoryBytes": 18432}
/// ```
public struct ProfileCounters: Codable, Hashable, Sendable {
    /// Rows read by walking a table or index from one end.
    public var fullScanSteps: Int?
    /// Temporary b-trees built for ORDER BY, GROUP BY or DISTINCT.
    public var sorts: Int?
    /// Rows inserted into automatic indexes.
    public var autoIndexRows: Int?
    /// Virtual machine operations.
    public var vmSteps: Int?
    /// Bytes the prepared statement holds.
    public var memoryBytes: Int?

    /// Zeros are left out.
    public init(fullScanSteps: Int, sorts: Int, autoIndexRows: Int, vmSteps: Int, memoryBytes: Int) {
        func nonZero(_ value: Int) -> Int? { value == 0 ? nil : value }
        self.fullScanSteps = nonZero(fullScanSteps)
        self.sorts = nonZero(sorts)
        self.autoIndexRows = nonZero(autoIndexRows)
        self.vmSteps = nonZero(vmSteps)
        self.memoryBytes = nonZero(memoryBytes)
    }
}
