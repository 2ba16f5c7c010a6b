/// Runs a script of one or more SQL statements; answers with one result
/// per statement.
///
/// Statements run in order, outside any implicit transaction. Each result
/// holds at most `maxRows` rows (1000 by default); `truncated` tells when
/// rows were left unread. When a statement fails, the error (-32001) tells
/// which one in `data.statementIndex`, and `data.results` holds the results
/// of the statements before it, which stay applied.
///
/// ```json
/// --> {"jsonrpc": "2.0", "id": 4, "method": "query/execute",
///      "params": {"sql": "SELECT id, title FROM games WHERE id = ?", "params": [1]}}
/// <-- {"jsonrpc": "2.0", "id": 4, "result": {"results": [{"sql": "SELECT id, title FROM games WHERE id = ?",
///      "columns": ["id", "title"], "rows": [[1, "Chess"]], "truncated": false, "changes": 0, "elapsedMs": 0.05}]}}
/// ```
public enum QueryExecuteRequest: RequestType {
    public static let method = "query/execute"

    /// The rows returned per statement when the request gives no `maxRows`.
    public static let defaultMaxRows = 1000

    public struct Params: Codable, Sendable {
        public var sql: String
        /// An array for `?` parameters, an object for named ones.
        public var params: RPCParameters?
        /// The most rows returned per statement.
        public var maxRows: Int?

        public init(sql: String, params: RPCParameters? = nil, maxRows: Int? = nil) {
            self.sql = sql
            self.params = params
            self.maxRows = maxRows
        }
    }

    public struct Result: Codable, Sendable {
        public var results: [StatementResult]

        public init(results: [StatementResult]) {
            self.results = results
        }
    }

    /// The result of one statement.
    public struct StatementResult: Codable, Sendable {
        public var sql: String
        /// Empty for statements that return no rows.
        public var columns: [String]
        public var rows: RPCRows
        public var truncated: Bool
        /// Rows inserted, updated or deleted.
        public var changes: Int
        public var elapsedMs: Double

        public init(sql: String, columns: [String], rows: RPCRows, truncated: Bool, changes: Int, elapsedMs: Double) {
            self.sql = sql
            self.columns = columns
            self.rows = rows
            self.truncated = truncated
            self.changes = changes
            self.elapsedMs = elapsedMs
        }
    }
}

extension QueryExecuteRequest.Params: JSONReadable {
    /// Reads `{"sql": …}` with an integer `maxRows` and positional `params`,
    /// as `Decodable` would; nil for anything else (named params included),
    /// which `Decodable` then reads or refuses, naming the field.
    public init?(json: JSONValue) {
        guard case .object(let members) = json, case .string(let sql)? = members["sql"] else { return nil }
        var maxRows: Int?
        switch members["maxRows"] {
        case nil, .null?: maxRows = nil
        case .integer(let integer)?:
            guard let exact = Int(exactly: integer) else { return nil }
            maxRows = exact
        default: return nil
        }
        var params: RPCParameters?
        switch members["params"] {
        case nil, .null?: params = nil
        case .array(let values)?:
            var positional: [RPCValue] = []
            positional.reserveCapacity(values.count)
            for value in values {
                guard let read = try? RPCValue(json: value) else { return nil }
                positional.append(read)
            }
            params = .positional(positional)
        default: return nil
        }
        self.init(sql: sql, params: params, maxRows: maxRows)
    }
}

extension QueryExecuteRequest.Result: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("results")
        writer.beginArray()
        for result in results {
            result.write(to: &writer)
        }
        writer.endArray()
        writer.endObject()
    }
}

extension QueryExecuteRequest.StatementResult: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("changes")
        writer.write(integer: Int64(changes))
        writer.key("columns")
        writer.write(strings: columns)
        writer.key("elapsedMs")
        writer.write(double: elapsedMs)
        writer.key("rows")
        writer.write(rows: rows)
        writer.key("sql")
        writer.write(string: sql)
        writer.key("truncated")
        writer.write(bool: truncated)
        writer.endObject()
    }
}
