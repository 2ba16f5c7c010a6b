import SQLiveEngine

/// The table `.import` creates from a file's first row, made as the
/// sqlite3 shell makes it: every column `TEXT`, an empty name `?`, and
/// names that repeat (ignoring ASCII case) suffixed with `_` and their
/// position, zero-padded only if that is needed to keep them apart.
///
/// ```swift
/// let table = ImportedTable(header: ["a", "a", "", "b"])
/// table.columns   // ["a_1", "a_2", "?", "b"]
/// table.createStatement(quotedName: "\"t\"")
/// // CREATE TABLE "t"(
/// // "a_1" TEXT, "a_2" TEXT, "?" TEXT, "b" TEXT)
/// ```
struct ImportedTable: Equatable {
    /// The columns' names, as created.
    let columns: [String]
    /// The names changed because they repeat, in column order.
    let renames: [Rename]

    struct Rename: Equatable {
        var from: String
        var to: String
    }

    init(header: [String]) {
        let names = header.map { $0.isEmpty ? "?" : $0 }
        var occurrences: [String: Int] = [:]
        for name in names { occurrences[Self.folded(name), default: 0] += 1 }
        let repeated = names.map { occurrences[Self.folded($0), default: 0] > 1 }
        guard repeated.contains(true) else {
            columns = names
            renames = []
            return
        }
        // The fewest leading zeros that keep every name apart.
        var columns = names
        for zeros in 0...8 {
            columns = names.indices.map { index in
                repeated[index]
                    ? names[index] + "_" + String(repeating: "0", count: zeros) + String(index + 1) : names[index]
            }
            if Set(columns.map(Self.folded)).count == columns.count { break }
        }
        self.columns = columns
        renames = names.indices.filter { repeated[$0] }.map { Rename(from: names[$0], to: columns[$0]) }
    }

    /// `CREATE TABLE name(` then the columns, four to a line, as sqlite3 writes it.
    func createStatement(quotedName: String) -> String {
        var statement = "CREATE TABLE \(quotedName)(\n"
        for (index, column) in columns.enumerated() {
            if index > 0 { statement += index % 4 == 0 ? ",\n " : ", " }
            statement += SQLToken.doubleQuoted(column) + " TEXT"
        }
        return statement + ")"
    }

    /// What the sqlite3 shell says when it renamed columns.
    func renameMessage(file: String) -> String? {
        guard !renames.isEmpty else { return nil }
        let lines = renames.map { SQLToken.doubleQuoted($0.from) + " to " + SQLToken.doubleQuoted($0.to) }
        return "Columns renamed during .import \(file) due to duplicates:\n" + lines.joined(separator: ",\n") + "\n"
    }

    /// A name as SQLite's NOCASE compares it: ASCII letters folded.
    private static func folded(_ name: String) -> String {
        String(decoding: name.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}
