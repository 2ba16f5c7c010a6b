import SQLiveEngine

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

    func write() throws {
        let literals = try RealLiterals()
        try sink.write("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n")
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
            if name == "sqlite_sequence" {
                try sink.write("DELETE FROM sqlite_sequence;\n")
            } else if Self.isStatisticsTable(name) {
                try sink.write("ANALYZE sqlite_schema;\n")
            } else if name.hasPrefix("sqlite_") {
                continue
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
        for object in try rows(
            "SELECT sql FROM sqlite_schema AS o WHERE (\(filter)) AND sql NOT NULL"
                + " AND type IN ('index', 'trigger', 'view')")
        {
            guard case .text(let sql) = object[0] else { continue }
            try sink.write(DumpText.statementLine(sql))
        }
        if writableSchema { try sink.write("PRAGMA writable_schema=OFF;\n") }
        released = true
        try run("RELEASE sqlive_dump")
        try sink.write("COMMIT;\n")
    }

    /// `INSERT INTO table VALUES(…);` for each row of the table.
    private func writeRows(of table: String, literals: RealLiterals) throws {
        let columns = try rows("SELECT name FROM pragma_table_info(?1)", .positional([.text(table)])).compactMap {
            row -> String? in
            if case .text(let name) = row[0] { return name }
            return nil
        }
        guard !columns.isEmpty else { return }
        let select =
            "SELECT " + columns.map(SQLToken.quoted).joined(separator: ",") + " FROM " + SQLToken.quoted(table)
        var writer = InsertWriter(table: table, literals: literals, sink: sink)
        try database.run(select, traced: false, consumer: &writer)
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

    init(table: String, literals: RealLiterals, sink: OutputSink) {
        prefix = "INSERT INTO " + SQLToken.quoted(table) + " VALUES("
        self.literals = literals
        self.sink = sink
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
            case .text: row.withUTF8(at: column) { DumpText.appendTextLiteral($0, to: &buffer) }
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
