/// Registers a live query and answers with its first result, version 1.
///
/// From then on, each change of its result arrives as a `liveQuery/changed`
/// notification, whoever wrote the database. With `diff: true`, those
/// notifications also carry the rows added and removed; with
/// `diff: "only"`, they carry only `changes` (what was removed, added and
/// changed, with positions) instead of the rows. `maxRows` sets the cap on
/// the rows held and sent (10,000 by default); `total` counts them all.
/// The SQL must be a single read-only statement (-32602 otherwise); a taken
/// name is -32012.
///
/// ```json
/// --> {"jsonrpc": "2.0", "id": 5, "method": "liveQuery/register",
///      "params": {"name": "leaders", "sql": "SELECT name, score FROM players ORDER BY score DESC LIMIT 3"}}
/// <-- {"jsonrpc": "2.0", "id": 5, "result": {"name": "leaders", "version": 1, "columns": ["name", "score"],
///      "rows": [["Ann", 12]], "truncated": false, "tables": ["players"]}}
/// ```
public enum LiveQueryRegisterRequest: RequestType {
    public static let method = "liveQuery/register"

    public struct Params: Codable, Sendable {
        public var name: String
        public var sql: String
        public var params: RPCParameters?
        /// Whether `liveQuery/changed` notifications carry `diff`.
        public var diff: DiffOption?
        /// The most rows held and sent (1 or more; 10,000 by default).
        public var maxRows: Int?

        public init(
            name: String, sql: String, params: RPCParameters? = nil, diff: DiffOption? = nil, maxRows: Int? = nil
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

/// A live query as it stands: the answer to registering or redefining it.
public struct LiveQuerySnapshotResult: Codable, Sendable {
    public var name: String
    public var version: Int
    public var columns: [String]
    public var rows: RPCRows
    /// Whether rows past the live-query row cap were left out.
    public var truncated: Bool
    /// How many rows the query really has (more than `rows` when
    /// `truncated`).
    public var total: Int?
    /// The tables the query reads.
    public var tables: [String]

    public init(
        name: String, version: Int, columns: [String], rows: RPCRows, truncated: Bool, tables: [String],
        total: Int? = nil
    ) {
        self.name = name
        self.version = version
        self.columns = columns
        self.rows = rows
        self.truncated = truncated
        self.tables = tables
        self.total = total
    }
}

extension LiveQuerySnapshotResult: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("columns")
        writer.write(strings: columns)
        writer.key("name")
        writer.write(string: name)
        writer.key("rows")
        writer.write(rows: rows)
        writer.key("tables")
        writer.write(strings: tables)
        if let total {
            writer.key("total")
            writer.write(integer: Int64(total))
        }
        writer.key("truncated")
        writer.write(bool: truncated)
        writer.key("version")
        writer.write(integer: Int64(version))
        writer.endObject()
    }
}
