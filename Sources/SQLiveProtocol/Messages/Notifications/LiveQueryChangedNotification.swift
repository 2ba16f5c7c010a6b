/// A live query's result changed.
///
/// Sent once per refresh whose result differs from the previous one; a
/// burst of commits is coalesced (`coalesced` tells how many changes the
/// refresh covered). `version` strictly increases. `cause` is `"local"` for
/// a commit made through this server, `"external"` for one made by another
/// process or connection. `diff` is there when the live query was
/// registered with `diff: true`. `tables` names the tables the covered
/// commits wrote, when all of them are known (sqlive's own commits, and
/// other processes' commits read from the WAL).
///
/// ```json
/// <-- {"jsonrpc": "2.0", "method": "liveQuery/changed", "params": {"name": "leaders", "version": 2,
///      "columns": ["name", "score"], "rows": [["Bob", 15], ["Ann", 12]], "truncated": false,
///      "cause": "external", "coalesced": 1, "elapsedMs": 0.21}}
/// ```
public enum LiveQueryChangedNotification: NotificationType {
    public static let method = "liveQuery/changed"

    public struct Params: Codable, Sendable {
        public var name: String
        public var version: Int
        public var columns: [String]
        public var rows: RPCRows
        public var truncated: Bool
        /// How many rows the query really has (more than `rows` when
        /// `truncated`).
        public var total: Int?
        /// `"local"` or `"external"`.
        public var cause: String
        public var coalesced: Int
        public var elapsedMs: Double
        public var diff: Diff?
        /// The tables the covered commits wrote, lowercased and sorted; absent when unknown.
        public var tables: [String]?

        public init(
            name: String, version: Int, columns: [String], rows: RPCRows, truncated: Bool, cause: String,
            coalesced: Int, elapsedMs: Double, diff: Diff? = nil, tables: [String]? = nil, total: Int? = nil
        ) {
            self.name = name
            self.version = version
            self.columns = columns
            self.rows = rows
            self.truncated = truncated
            self.cause = cause
            self.coalesced = coalesced
            self.elapsedMs = elapsedMs
            self.diff = diff
            self.tables = tables
            self.total = total
        }
    }

    /// The rows added and removed since the previous notification, as multisets.
    public struct Diff: Codable, Sendable {
        public var added: RPCRows
        public var removed: RPCRows

        public init(added: RPCRows, removed: RPCRows) {
            self.added = added
            self.removed = removed
        }
    }
}

extension LiveQueryChangedNotification.Params: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("cause")
        writer.write(string: cause)
        writer.key("coalesced")
        writer.write(integer: Int64(coalesced))
        writer.key("columns")
        writer.write(strings: columns)
        if let diff {
            writer.key("diff")
            writer.beginObject()
            writer.key("added")
            writer.write(rows: diff.added)
            writer.key("removed")
            writer.write(rows: diff.removed)
            writer.endObject()
        }
        writer.key("elapsedMs")
        writer.write(double: elapsedMs)
        writer.key("name")
        writer.write(string: name)
        writer.key("rows")
        writer.write(rows: rows)
        if let tables {
            writer.key("tables")
            writer.write(strings: tables)
        }
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
