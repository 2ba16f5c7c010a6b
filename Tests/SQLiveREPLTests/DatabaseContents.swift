import Foundation
import Testing

/// Everything a database holds, read by the sqlite3 CLI, to compare two
/// databases: the schema (without root pages) and every table's rows, each
/// value as SQLite's `quote()` writes it (so 1 and 1.0 differ, and every
/// REAL is written with enough digits to tell it from its neighbours).
struct DatabaseContents: Equatable, CustomStringConvertible {
    /// `type|name|tbl_name|sql` of each schema entry, sorted.
    var schema: [String]
    /// Each table's rows, as `quote(a),quote(b),…`, sorted (row order is not content).
    var tables: [String: [String]]

    static func read(_ path: String) throws -> DatabaseContents {
        let schema = try Processes.sqlite3Output(
            path, "SELECT quote(type), quote(name), quote(tbl_name), quote(sql) FROM sqlite_schema",
            options: ["-list", "-separator", "|"]
        ).split(separator: "\n").map(String.init).sorted()
        let names = try Processes.sqlite3Output(
            path, "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name"
        ).split(separator: "\n").map(String.init)
        var tables: [String: [String]] = [:]
        for name in names {
            let quoted = "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            let columns = try Processes.sqlite3Output(
                path, "SELECT name FROM pragma_table_info('\(name.replacingOccurrences(of: "'", with: "''"))')"
            ).split(separator: "\n").map { "quote(\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\")" }
            guard !columns.isEmpty else { continue }
            // Each row on one line: quote() writes line breaks inside text as
            // they are; they are shown as ␤ and ␍.
            let rows = try Processes.sqlite3Output(
                path,
                "SELECT replace(replace(" + columns.joined(separator: " || ',' || ")
                    + ", char(10), char(9252)), char(13), char(9229)) FROM \(quoted)"
            ).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init).sorted()
            tables[name] = rows
        }
        return DatabaseContents(schema: schema, tables: tables)
    }

    /// The tables whose rows differ between two databases.
    func differences(from other: DatabaseContents) -> [String] {
        Set(tables.keys).union(other.tables.keys).filter { tables[$0] != other.tables[$0] }.sorted()
    }

    var description: String {
        (schema + tables.keys.sorted().flatMap { ["-- \($0)"] + tables[$0]! }).joined(separator: "\n")
    }
}
