/// A statement ran, while the trace is on (`trace/set`).
///
/// `elapsedMs`, `rows` and `counters` (SQLite's, the non-zero ones) are
/// there with `profile: true`. `origin` is `"user"`, `"liveQuery"` or
/// `"housekeeping"`.
///
/// ```json
/// <-- {"jsonrpc": "2.0", "method": "trace/statement",
///      "params": {"sql": "SELECT * FROM games", "elapsedMs": 0.04, "rows": 3, "origin": "user"}}
/// ```
public enum TraceStatementNotification: NotificationType {
    public static let method = "trace/statement"

    public struct Params: Codable, Sendable {
        public var sql: String
        public var elapsedMs: Double?
        public var rows: Int?
        public var counters: ProfileCounters?
        public var origin: String

        public init(
            sql: String, elapsedMs: Double? = nil, rows: Int? = nil, counters: ProfileCounters? = nil,
            origin: String
        ) {
            self.sql = sql
            self.elapsedMs = elapsedMs
            self.rows = rows
            self.counters = counters
            self.origin = origin
        }
    }
}
