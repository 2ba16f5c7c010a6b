import Foundation
import SQLiveEngine
import SQLiveProtocol

/// The change feed's rows as JSON, one form for every front end: the lines
/// `sqlive --changes` prints, the rows of `changes/rows`, and MCP's
/// `changes` tool.
///
/// ```json
/// {"commit": 7, "cause": "external", "table": "players", "op": "update", "key": {"rowid": 3},
///  "old": {"id": 3, "name": "Blob", "score": 60}, "new": {"id": 3, "name": "Blob", "score": 61}}
/// ```
///
/// `key` is `{"rowid": R}` or the primary-key columns; `old` and `new` are
/// `null` where the operation has none; values are in the protocol's form
/// (a BLOB is `{"$blob": "<base64>"}`). An `unknown` row has `key`, `old`
/// and `new` null and a `reason`.
public enum ChangeFeedJSON {
    /// A row without the commit's fields (as `changes/rows` carries them).
    public static func row(_ change: RowChange) -> JSONValue {
        .object(fields(change).reduce(into: [:]) { $0[$1.key] = $1.value })
    }

    /// The lines of one commit, each ending in a newline: what
    /// `sqlive --changes` prints, in order.
    public static func lines(_ commit: CommitRows) -> [UInt8] {
        var lines: [UInt8] = []
        for change in commit.changes {
            // A writer per line: one JSON value each.
            var writer = JSONWriter(capacity: 256)
            writer.beginObject()
            writer.key("commit")
            writer.write(integer: Int64(commit.commit))
            writer.key("cause")
            writer.write(string: commit.cause.rawValue)
            writer.key("table")
            writer.write(string: change.table)
            writer.key("op")
            writer.write(string: change.operation.rawValue)
            // Keys and columns in the table's order.
            writer.key("key")
            switch change.key {
            case nil: writer.writeNull()
            case .rowid(let rowid):
                writer.beginObject()
                writer.key("rowid")
                writer.write(integer: rowid)
                writer.endObject()
            case .primaryKey(let values): write(values, names: change.keyNames, into: &writer)
            }
            for (name, values) in [("old", change.old), ("new", change.new)] {
                writer.key(name)
                if let values { write(values, names: change.columns, into: &writer) } else { writer.writeNull() }
            }
            if let reason = change.reason {
                writer.key("reason")
                writer.write(string: reason)
            }
            writer.endObject()
            lines += writer.bytes
            lines.append(UInt8(ascii: "\n"))
        }
        return lines
    }

    private static func write(_ values: [SQLValue], names: [String], into writer: inout JSONWriter) {
        writer.beginObject()
        var seen = Set<String>()
        for (name, value) in zip(names, values) where seen.insert(name).inserted {
            writer.key(name)
            writer.write(RPCValue(value).json)
        }
        writer.endObject()
    }

    /// A row's fields.
    private static func fields(_ change: RowChange) -> [(key: String, value: JSONValue)] {
        var fields: [(String, JSONValue)] = [
            ("table", .string(change.table)),
            ("op", .string(change.operation.rawValue)),
            ("key", key(change)),
            ("old", values(change.old, columns: change.columns)),
            ("new", values(change.new, columns: change.columns)),
        ]
        if let reason = change.reason { fields.append(("reason", .string(reason))) }
        return fields
    }

    private static func key(_ change: RowChange) -> JSONValue {
        switch change.key {
        case nil: .null
        case .rowid(let rowid): .object(["rowid": .integer(rowid)])
        case .primaryKey(let values):
            .object(
                Dictionary(
                    zip(change.keyNames, values.map { RPCValue($0).json }), uniquingKeysWith: { first, _ in first }))
        }
    }

    private static func values(_ values: [SQLValue]?, columns: [String]) -> JSONValue {
        guard let values else { return .null }
        var object: [String: JSONValue] = [:]
        for (column, value) in zip(columns, values) where object[column] == nil {
            object[column] = RPCValue(value).json
        }
        return .object(object)
    }
}
