/// Redefines a live query in place: new SQL, new parameters, or both.
///
/// The name stays, and the version goes on from where it was, as if a new
/// query had been reloaded into the same state. `diff` and `maxRows`,
/// when given, change what its notifications carry and its row cap.
///
/// ```json
/// --> {"jsonrpc": "2.0", "id": 6, "method": "liveQuery/update",
///      "params": {"name": "leaders", "sql": "SELECT name FROM players"}}
/// <-- {"jsonrpc": "2.0", "id": 6, "result": {"name": "leaders", "version": 2, ...}}
/// ```
public enum LiveQueryUpdateRequest: RequestType {
    public static let method = "liveQuery/update"

    public struct Params: Codable, Sendable {
        public var name: String
        public var sql: String?
        public var params: RPCParameters?
        public var diff: DiffOption?
        public var maxRows: Int?

        public init(
            name: String, sql: String? = nil, params: RPCParameters? = nil, diff: DiffOption? = nil,
            maxRows: Int? = nil
        ) {
            self.name = name
            self.sql = sql
            self.params = params
            self.diff = diff
            self.maxRows = maxRows
        }
    }

    public typealias Result = LiveQuerySnapshotResult
}
