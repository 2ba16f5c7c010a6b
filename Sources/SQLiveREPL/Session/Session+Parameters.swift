import SQLiveEngine

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
            let key = Self.quotedParameter(arguments[1])
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
                    "REPLACE INTO temp.sqlite_parameters(key,value) VALUES(\(key),\(Self.quotedParameter(arguments[2])));"
                )
            } catch let failure as SQLiteFailure where failure.phase == .prepare {
                try sink.write("Error: \(failure.message)\n")
                throw CommandFailure.reported
            } catch {}
        case ("unset", 2):
            _ = try? run("DELETE FROM temp.sqlite_parameters WHERE key=\(Self.quotedParameter(arguments[1]))")
        default:
            try sink.write(DotCommandHelp.shellHelp["parameter"]!)
        }
    }

    /// Text as SQL's `%Q` writes it: in single quotes, each doubled.
    static func quotedParameter(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
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
