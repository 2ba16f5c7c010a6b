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
///
/// Registered with `diff: "only"`, a notification has no `rows` but
/// `changes`, which turn the rows last received into the new ones (remove
/// the rows at `removed[].from` and `changed[].from`, then insert the
/// `added` and `changed` rows at their `at`, ascending). `key` names the
/// columns rows were matched by (their table's rowid or primary key), or
/// is absent when rows were matched by content. When the columns changed,
/// it carries `rows` in full instead:
///
/// ```json
/// <-- {"jsonrpc": "2.0", "method": "liveQuery/changed", "params": {"name": "items", "version": 3,
///      "columns": ["id", "qty"], "changes": {"key": ["id"], "removed": [], "added": [],
///      "changed": [{"from": 776, "at": 776, "row": [777, 100]}]}, "truncated": false, "total": 1000000,
///      "cause": "external", "coalesced": 1, "elapsedMs": 412.7}}
/// ```
public enum LiveQueryChangedNotification: NotificationType {
    public static let method = "liveQuery/changed"

    public struct Params: Codable, Sendable {
        public var name: String
        public var version: Int
        public var columns: [String]
        /// The rows; absent when `changes` replaces them.
        public var rows: RPCRows?
        /// What changed, for a live query registered with `diff: "only"`.
        public var changes: Changes?
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
            name: String, version: Int, columns: [String], rows: RPCRows?, truncated: Bool, cause: String,
            coalesced: Int, elapsedMs: Double, diff: Diff? = nil, tables: [String]? = nil, total: Int? = nil,
            changes: Changes? = nil
        ) {
            self.name = name
            self.version = version
            self.columns = columns
            self.rows = rows
            self.changes = changes
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

    /// What turns the rows last received into the new ones.
    public struct Changes: Codable, Sendable {
        public struct Removed: Codable, Sendable {
            public var from: Int
            public var row: [RPCValue]
            public init(from: Int, row: [RPCValue]) {
                self.from = from
                self.row = row
            }
        }
        public struct Added: Codable, Sendable {
            public var at: Int
            public var row: [RPCValue]
            public init(at: Int, row: [RPCValue]) {
                self.at = at
                self.row = row
            }
        }
        public struct Changed: Codable, Sendable {
            public var from: Int
            public var at: Int
            public var row: [RPCValue]
            public init(from: Int, at: Int, row: [RPCValue]) {
                self.from = from
                self.at = at
                self.row = row
            }
        }
        /// The columns rows were matched by; `nil`: by content.
        public var key: [String]?
        public var removed: [Removed]
        public var added: [Added]
        public var changed: [Changed]

        public init(key: [String]?, removed: [Removed], added: [Added], changed: [Changed]) {
            self.key = key
            self.removed = removed
            self.added = added
            self.changed = changed
        }

        func write(to writer: inout JSONWriter) {
            writer.beginObject()
            Self.write("added", added.map { ([("at", $0.at)], $0.row) }, to: &writer)
            Self.write("changed", changed.map { ([("at", $0.at), ("from", $0.from)], $0.row) }, to: &writer)
            if let key {
                writer.key("key")
                writer.write(strings: key)
            }
            Self.write("removed", removed.map { ([("from", $0.from)], $0.row) }, to: &writer)
            writer.endObject()
        }

        /// A list of entries: each its positions (keys sorted) and its row.
        private static func write(
            _ name: String, _ entries: [(positions: [(String, Int)], row: [RPCValue])], to writer: inout JSONWriter
        ) {
            writer.key(name)
            writer.beginArray()
            for entry in entries {
                writer.beginObject()
                for (key, position) in entry.positions {
                    writer.key(key)
                    writer.write(integer: Int64(position))
                }
                writer.key("row")
                writer.write(row: entry.row)
                writer.endObject()
            }
            writer.endArray()
        }
    }
}

extension LiveQueryChangedNotification.Params: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("cause")
        writer.write(string: cause)
        if let changes {
            writer.key("changes")
            changes.write(to: &writer)
        }
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
        if let rows {
            writer.key("rows")
            writer.write(rows: rows)
        }
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
