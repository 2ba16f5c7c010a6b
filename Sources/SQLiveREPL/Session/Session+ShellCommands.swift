import SQLiveEngine

// Dot-commands of the sqlite3 shell that read or change the session's
// connection: .parameter, .limits, .fullschema.

extension Session {
    /// `.parameter`, as the sqlite3 shell's (3.40.1): the bindings are rows
    /// of `temp.sqlite_parameters(key, value)`, and every statement the
    /// session runs binds its parameters from there by name
    /// (`QueryParameters.shell`), NULL when unbound. What the shell ignores
    /// (an `unset` or `clear` that fails) is ignored here too.
    func parameter(_ arguments: [String]) throws {
        let database = try requireDatabase()
        @discardableResult
        func run(_ sql: String) throws -> [[SQLValue]] {
            var collector = ResultCollector()
            try database.run(sql, traced: false, consumer: &collector)
            return collector.results.first?.rows ?? []
        }
        switch (arguments.first, arguments.count) {
        case ("clear", 1):
            _ = try? run("DROP TABLE IF EXISTS temp.sqlite_parameters;")
        case ("init", 1):
            try? database.createShellParameters()
        case ("list", 1):
            // Keys padded to the longest (40 at most), values quoted.
            guard
                case .integer(let longest)? = (try? run("SELECT max(length(key)) FROM temp.sqlite_parameters;"))?
                    .first?.first, longest > 0
            else { return }
            let width = Int(min(longest, 40))
            let rows = (try? run("SELECT key, quote(value) FROM temp.sqlite_parameters;")) ?? []
            var text = ""
            for row in rows {
                let key = Self.parameterText(row.first)
                let padding = max(0, width - key.utf8.count)
                text +=
                    key + String(repeating: " ", count: padding) + " " + Self.parameterText(row.dropFirst().first)
                    + "\n"
            }
            try sink.write(text)
        case ("set", 3):
            try? database.createShellParameters()
            let key = DumpText.quotedLiteral(arguments[1])
            // The value as an expression, else as text (when the first does
            // not prepare: a bare word is a column that does not exist).
            let asExpression = "REPLACE INTO temp.sqlite_parameters(key,value) VALUES(\(key),\(arguments[2]));"
            do {
                guard SQLScript.statementCount(asExpression) == 1 else {
                    throw SQLiveError.invalidSQL("more than one statement")
                }
                try run(asExpression)
                return
            } catch let failure as SQLiteFailure where failure.phase != .prepare {
                return  // Prepared, then failed: the shell does not say so either.
            } catch {}
            do {
                try run(
                    "REPLACE INTO temp.sqlite_parameters(key,value) VALUES(\(key),\(DumpText.quotedLiteral(arguments[2])));"
                )
            } catch let failure as SQLiteFailure where failure.phase == .prepare {
                try sink.write("Error: \(failure.message)\n")
                throw CommandFailure.reported
            } catch {}
        case ("unset", 2):
            _ = try? run("DELETE FROM temp.sqlite_parameters WHERE key=\(DumpText.quotedLiteral(arguments[1]))")
        default:
            try sink.write(DotCommandHelp.shellHelp["parameter"]!)
        }
    }

    private static func parameterText(_ value: SQLValue?) -> String {
        switch value {
        case .text(let text)?: text
        case .integer(let number)?: String(number)
        case .real(let number)?: String(number)
        default: ""
        }
    }
}

extension Session {
    /// SQLite's run-time limits, by sqlite3's names and in its order.
    static let limitNames: [(name: String, code: Int32)] = [
        ("length", 0), ("sql_length", 1), ("column", 2), ("expr_depth", 3), ("compound_select", 4),
        ("vdbe_op", 5), ("function_arg", 6), ("attached", 7), ("like_pattern_length", 8),
        ("variable_number", 9), ("trigger_depth", 10), ("worker_threads", 11),
    ]

    /// `.limits [NAME [VALUE]]`, as sqlite3 3.40.1: every limit, or the one
    /// NAME begins (an ambiguous or unknown name is an error), set to VALUE
    /// first if given; each printed as `%20s %d` on standard output.
    func limits(name: String?, value: Int64?) throws {
        let database = try requireDatabase()
        func line(_ limit: (name: String, code: Int32), _ current: Int32) -> String {
            String(repeating: " ", count: max(0, 20 - limit.name.utf8.count)) + limit.name + " \(current)\n"
        }
        guard let name else {
            write(Self.limitNames.map { line($0, database.limit($0.code)) }.joined())
            return
        }
        let matches = Self.limitNames.filter { $0.name.lowercased().hasPrefix(name.lowercased()) }
        guard matches.count <= 1 else { throw CommandFailure(verbatim: "ambiguous limit: \"\(name)\"") }
        guard let limit = matches.first else {
            throw CommandFailure(
                verbatim: "unknown limit: \"\(name)\"\nenter \".limits\" with no arguments for a list.")
        }
        let current = database.limit(limit.code, setTo: value.map { Int32(truncatingIfNeeded: $0) } ?? -1)
        write(line(limit, current))
    }
}

extension Session {
    /// `.fullschema [--indent]`, as sqlite3 3.40.1: every CREATE statement
    /// of main and temp but SQLite's own (`sqlite_%`), each with `;`, then
    /// the statistics `ANALYZE` left (`sqlite_stat1`, `sqlite_stat4`) as
    /// INSERT statements between two `ANALYZE sqlite_schema;`, or a comment
    /// saying there are none. (`--indent` is taken and prints the same.)
    func fullSchema() throws {
        let database = try requireDatabase()
        var statements = ResultCollector()
        try database.run(
            "SELECT sql FROM (SELECT sql sql, type type, tbl_name tbl_name, name name, rowid x FROM sqlite_schema "
                + "UNION ALL SELECT sql, type, tbl_name, name, rowid FROM sqlite_temp_schema) "
                + "WHERE type!='meta' AND sql NOTNULL AND name NOT LIKE 'sqlite_%' ORDER BY x",
            traced: false, consumer: &statements)
        var text = ""
        for row in statements.results.first?.rows ?? [] {
            if case .text(let sql) = row.first { text += sql + ";\n" }
        }
        var stats = ResultCollector()
        try? database.run(
            "SELECT rowid FROM sqlite_schema WHERE name GLOB 'sqlite_stat[134]'", traced: false, consumer: &stats)
        guard stats.results.first?.rows.isEmpty == false else {
            try sink.write(text + "/* No STAT tables available */\n")
            return
        }
        try sink.write(text + "ANALYZE sqlite_schema;\n")
        for table in ["sqlite_stat1", "sqlite_stat4"] {
            var settings = renderSettings
            settings.mode = .insert
            settings.headers = false
            settings.insertTable = table
            var consumer = RenderingConsumer(
                settings: settings, sink: sink, trace: .off, signals: nil, stats: 0, flushesRows: false)
            // A table ANALYZE did not make (sqlite_stat4, in most builds): nothing.
            try? database.run("SELECT * FROM \(table)", traced: false, consumer: &consumer)
            flush(&consumer)
        }
        try sink.write("ANALYZE sqlite_schema;\n")
    }
}
