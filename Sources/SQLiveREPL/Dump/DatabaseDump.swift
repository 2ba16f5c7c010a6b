import GRDBSQLite
import SQLiveEngine

/// `.dump`'s options, as sqlite3 3.40.1 has them.
public struct DumpOptions: Hashable, Sendable {
    /// `--preserve-rowids`: each row's rowid too, as
    /// `INSERT INTO t(rowid,a,b) VALUES(…)`, where the table has one that
    /// is not a column (no INTEGER PRIMARY KEY, not WITHOUT ROWID) and a
    /// name for it that no column has.
    public var preserveRowids = false
    /// `--newlines`: text is written as it is, line breaks included,
    /// rather than through `replace(…, char(10))`.
    public var newlines = false
    /// `--data-only`: the INSERT statements alone.
    public var dataOnly = false
    /// `--nosys`: no `sqlite_sequence` and `sqlite_stat` tables.
    public var noSystemTables = false

    public init() {}
}

/// `.dump`: the main database as SQL text that the sqlite3 shell loads back
/// into the same database, written as the shell's own `.dump` writes it.
///
/// ```text
/// PRAGMA foreign_keys=OFF;
/// BEGIN TRANSACTION;
/// CREATE TABLE games(id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT);
/// INSERT INTO games VALUES(1,'Gin');
/// DELETE FROM sqlite_sequence;
/// INSERT INTO sqlite_sequence VALUES('games',1);
/// CREATE INDEX games_title ON games(title);
/// COMMIT;
/// ```
///
/// Tables come first, in the order they were created (`sqlite_sequence`
/// last), each followed by its rows; then indexes, triggers and views.
/// Statistics are rebuilt with `ANALYZE sqlite_schema` and their rows; a
/// virtual table is written into the schema directly
/// (`PRAGMA writable_schema`). With LIKE patterns, only the tables whose
/// name matches (and the shadow tables of a matching virtual table), and
/// the indexes, triggers and views whose own name matches, as in sqlite3.
///
/// Values are written as SQL literals that read back as the same value:
/// REALs through `RealLiterals` (exact, where sqlite3's `%!.20g` loses
/// some very small numbers), text with line breaks as `replace(…)`, blobs
/// as `X'…'`. Everything is read in one transaction (a savepoint), so the
/// text is one consistent state of the database, and rows stream to the
/// output in constant memory.
struct DatabaseDump {
    let database: LiveDatabase
    /// LIKE patterns (with `\` as escape); empty dumps everything.
    let patterns: [String]
    let sink: OutputSink
    var options = DumpOptions()

    func write() throws {
        let literals = try RealLiterals()
        if !options.dataOnly { try sink.write("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n") }
        try run("SAVEPOINT sqlive_dump")
        var released = false
        defer {
            if !released {
                do { try run("RELEASE sqlive_dump") } catch { /* The failure being reported matters more. */  }
            }
        }
        var writableSchema = false
        let tables = try rows(
            "SELECT name, type, sql FROM sqlite_schema AS o WHERE (\(filter)) AND type == 'table' AND sql NOT NULL"
                + " ORDER BY tbl_name = 'sqlite_sequence', rowid")
        for table in tables {
            guard case .text(let name) = table[0], case .text(let sql) = table[2] else { continue }
            let system = !options.noSystemTables
            if name == "sqlite_sequence" && system {
                if !options.dataOnly { try sink.write("DELETE FROM sqlite_sequence;\n") }
            } else if Self.isStatisticsTable(name) && system {
                if !options.dataOnly { try sink.write("ANALYZE sqlite_schema;\n") }
            } else if name.hasPrefix("sqlite_") {
                continue
            } else if options.dataOnly {
                // The rows alone (a virtual table's too).
            } else if sql.hasPrefix("CREATE VIRTUAL TABLE") {
                if !writableSchema {
                    try sink.write("PRAGMA writable_schema=ON;\n")
                    writableSchema = true
                }
                try sink.write(DumpText.virtualTableLine(name: name, sql: sql))
                continue
            } else {
                try sink.write(DumpText.schemaLine(sql))
            }
            try writeRows(of: name, literals: literals)
        }
        let others =
            options.dataOnly
            ? []
            : try rows(
                "SELECT sql FROM sqlite_schema AS o WHERE (\(filter)) AND sql NOT NULL"
                    + " AND type IN ('index', 'trigger', 'view')")
        for object in others {
            guard case .text(let sql) = object[0] else { continue }
            try sink.write(DumpText.statementLine(sql))
        }
        if writableSchema { try sink.write("PRAGMA writable_schema=OFF;\n") }
        released = true
        try run("RELEASE sqlive_dump")
        if !options.dataOnly { try sink.write("COMMIT;\n") }
    }

    /// `INSERT INTO table VALUES(…);` for each row of the table.
    private func writeRows(of table: String, literals: RealLiterals) throws {
        let info = try rows("SELECT name, type, pk FROM pragma_table_info(?1)", .positional([.text(table)]))
        let columns = info.compactMap { row -> String? in
            if case .text(let name) = row[0] { return name }
            return nil
        }
        guard !columns.isEmpty else { return }
        let rowid = options.preserveRowids ? try rowidName(of: table, columns: info) : nil
        let select =
            "SELECT " + (rowid.map { $0 + "," } ?? "") + columns.map(SQLToken.quoted).joined(separator: ",")
            + " FROM " + SQLToken.quoted(table)
        var target = SQLToken.quoted(table)
        if let rowid { target += "(" + ([rowid] + columns.map(SQLToken.quoted)).joined(separator: ",") + ")" }
        var writer = InsertWriter(target: target, literals: literals, sink: sink, newlines: options.newlines)
        try database.run(select, traced: false, consumer: &writer)
    }

    /// The name under which `--preserve-rowids` writes the table's rowid,
    /// as sqlite3 decides: none when a single INTEGER primary key is the
    /// rowid itself (no `pk` index), else the first of `rowid`, `_rowid_`
    /// and `oid` that no column is named — if SQLite knows it as the rowid
    /// (a WITHOUT ROWID table has none).
    private func rowidName(of table: String, columns: [[SQLValue]]) throws -> String? {
        var keys = 0
        var integerKey = false
        for column in columns where column[2] != .integer(0) && column[2] != .null {
            keys += 1
            integerKey = keys == 1 && column[1].textValue.map { sqlite3_stricmp($0, "INTEGER") == 0 } == true
        }
        if integerKey {
            let index = try rows(
                "SELECT 1 FROM pragma_index_list(?1) WHERE origin='pk'", .positional([.text(table)]))
            guard !index.isEmpty else { return nil }
        }
        let names = columns.compactMap { $0[0].textValue }
        for candidate in ["rowid", "_rowid_", "oid"]
        where !names.contains(where: { sqlite3_stricmp($0, candidate) == 0 }) {
            let known = database.writer.writeWithoutTransaction { db in
                sqlite3_table_column_metadata(db.sqliteConnection, nil, table, candidate, nil, nil, nil, nil, nil)
            }
            return known == SQLITE_OK ? candidate : nil
        }
        return nil
    }

    /// The WHERE condition of the patterns, on `sqlite_schema AS o`.
    private var filter: String {
        guard !patterns.isEmpty else { return "true" }
        return patterns.indices.map { index in
            let pattern = DumpText.quotedLiteral(patterns[index])
            return "name LIKE \(pattern) ESCAPE '\\' OR EXISTS (SELECT 1 FROM sqlite_schema WHERE"
                + " name LIKE \(pattern) ESCAPE '\\' AND sql LIKE 'CREATE VIRTUAL TABLE%'"
                + " AND substr(o.name, 1, length(name) + 1) == (name || '_'))"
        }.joined(separator: " OR ")
    }

    /// `sqlite_stat1` … `sqlite_stat4`.
    private static func isStatisticsTable(_ name: String) -> Bool {
        name.count == 12 && name.hasPrefix("sqlite_stat")
    }

    private func rows(_ sql: String, _ parameters: QueryParameters = .none) throws -> [[SQLValue]] {
        var collector = ResultCollector()
        try database.run(sql, parameters: parameters, traced: false, consumer: &collector)
        return collector.results.first?.rows ?? []
    }

    private func run(_ sql: String) throws {
        var collector = ResultCollector()
        try database.run(sql, traced: false, consumer: &collector)
    }
}

/// Writes each row of a table's `SELECT` as `INSERT INTO table VALUES(…);`,
/// streaming to the output in chunks.
struct InsertWriter: ResultConsumer {
    private let prefix: String
    private let literals: RealLiterals
    private let sink: OutputSink
    private var buffer = OutputBuffer(capacity: 1 << 16)

    /// Text with line breaks as it is (`--newlines`).
    private let newlines: Bool

    /// `target` is the table's name, quoted as needed, and its columns if they are named.
    init(target: String, literals: RealLiterals, sink: OutputSink, newlines: Bool = false) {
        prefix = "INSERT INTO " + target + " VALUES("
        self.literals = literals
        self.sink = sink
        self.newlines = newlines
    }

    mutating func statementDidStart(_ header: StatementHeader) {}

    mutating func consume(row: StatementRow) throws {
        buffer.append(prefix)
        for column in 0..<row.count {
            if column > 0 { buffer.append(byte: UInt8(ascii: ",")) }
            switch row.type(at: column) {
            case .null: buffer.append("NULL")
            case .integer: buffer.append(integer: row.integer(at: column))
            case .real: buffer.append(literals.literal(for: row.real(at: column)))
            case .text:
                row.withUTF8(at: column) { text in
                    if newlines {
                        DumpText.appendQuotedText(text, to: &buffer)
                    } else {
                        DumpText.appendTextLiteral(text, to: &buffer)
                    }
                }
            case .blob: row.withBlob(at: column) { buffer.append(blobLiteral: $0) }
            }
        }
        buffer.append(");\n")
        if buffer.count >= 1 << 16 { try flush() }
    }

    mutating func statementDidFinish(_ summary: StatementSummary) throws {
        try flush()
    }

    private mutating func flush() throws {
        defer { buffer.removeAll() }
        try buffer.bytes.withUnsafeBytes { try sink.write($0) }
    }
}

extension SQLValue {
    /// The text of a TEXT value.
    fileprivate var textValue: String? {
        if case .text(let text) = self { return text }
        return nil
    }
}
