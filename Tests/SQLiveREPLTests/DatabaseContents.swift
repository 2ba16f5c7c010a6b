import Foundation
import Testing

/// Everything a database holds, read by the sqlite3 CLI, to compare two
/// databases: the schema (without root pages) and every table's rows, each
/// value as SQLite's `quote()` writes it (so 1 and 1.0 differ, and every
/// REAL is written with enough digits to tell it from its neighbours).
///
/// Two sqlite3 processes per database: one lists the schema and the
/// tables' columns, one reads every table.
struct DatabaseContents: Equatable, CustomStringConvertible {
    /// `type|name|tbl_name|sql` of each schema entry, quoted, sorted.
    var schema: [String]
    /// Each table's rows, as `quote(a),quote(b),…`, sorted (row order is not content).
    var tables: [String: [String]]

    /// Marks the start of a table's rows in the output (a unit separator cannot be in quoted values).
    private static let marker = "\u{1F}table "

    static func read(_ path: String, directory: TemporaryDirectory) async throws -> DatabaseContents {
        let listing = try await Processes.sqlite3Shell(
            [
                path, "-list", "-separator", "|",
                "SELECT quote(type), quote(name), quote(tbl_name), quote(sql) FROM sqlite_schema",
                "SELECT '\(marker)' || s.name || char(31) || group_concat(c.name, char(31)) FROM sqlite_schema AS s,"
                    + " pragma_table_info(s.name) AS c WHERE s.type = 'table' GROUP BY s.name ORDER BY s.name",
            ], directory: directory)
        #expect(listing.status == 0, "sqlite3 cannot read \(path): \(listing.stderr)")
        let lines = listing.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let schema = lines.filter { !$0.isEmpty && !$0.hasPrefix(marker) }.sorted()
        let tableColumns = lines.filter { $0.hasPrefix(marker) }.map {
            $0.dropFirst(marker.count).split(separator: "\u{1F}", omittingEmptySubsequences: false).map(String.init)
        }
        guard !tableColumns.isEmpty else { return DatabaseContents(schema: schema, tables: [:]) }
        // Each row on one line: quote() writes line breaks inside text as
        // they are; they are shown as ␤ and ␍.
        let selects = tableColumns.map { names -> String in
            let table = names[0]
            let values = names.dropFirst().map { "quote(" + quoted($0) + ")" }.joined(separator: " || ',' || ")
            return "SELECT '\(marker)' || \(literal(table)); SELECT replace(replace(\(values), char(10), char(9252)),"
                + " char(13), char(9229)) FROM \(quoted(table));"
        }
        let rows = try await Processes.sqlite3Shell(
            [path, "-list"], stdin: selects.joined(separator: "\n"), directory: directory)
        #expect(rows.status == 0, "sqlite3 cannot read \(path): \(rows.stderr)")
        var tables: [String: [String]] = [:]
        var current: String?
        // A row is never empty (quote() writes at least NULL or ''): empty lines are not rows.
        for line in rows.stdout.split(separator: "\n").map(String.init) {
            if line.hasPrefix(marker) {
                current = String(line.dropFirst(marker.count))
                tables[current!] = []
            } else if let current {
                tables[current]?.append(line)
            }
        }
        for name in tables.keys { tables[name]?.sort() }
        return DatabaseContents(schema: schema, tables: tables)
    }

    private static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    private static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// The tables whose rows differ between two databases.
    func differences(from other: DatabaseContents) -> [String] {
        Set(tables.keys).union(other.tables.keys).filter { tables[$0] != other.tables[$0] }.sorted()
    }

    var description: String {
        (schema + tables.keys.sorted().flatMap { ["-- \($0)"] + tables[$0]! }).joined(separator: "\n")
    }
}
