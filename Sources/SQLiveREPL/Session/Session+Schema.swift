import GRDB
import GRDBSQLite
import SQLiveEngine

// `.schema`, as the sqlite3 shell (3.40.1) prints it.
extension Session {
    /// The text of `.schema ?--nosys? ?PATTERN?`: every object of every
    /// database of the session's connection (main, temp, attached), in the
    /// order they were created, a view followed by a comment that names
    /// its columns (`/* v(a,b) */`), each statement ended with `;`.
    /// PATTERN is a LIKE pattern (a GLOB one when it holds `*`, `?` or
    /// `[`) on the lower-cased table name, or on `schema.table` when it
    /// holds a dot.
    func schemaText(pattern: String?, noSystemTables: Bool = false) throws -> String {
        let database = try requireDatabase()
        return try database.writer.writeWithoutTransaction { db in
            var text = ""
            if let pattern,
                ["sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema"]
                    .contains(where: { Self.like(pattern, $0, db) })
            {
                text += Self.schemaLine(
                    "CREATE TABLE \(pattern) (\n  type text,\n  name text,\n  tbl_name text,\n  rootpage integer,\n  sql text\n)"
                )
            }
            let schemas = try String.fetchAll(db, sql: "SELECT name FROM pragma_database_list")
            var selects: [String] = []
            for (index, schema) in schemas.enumerated() {
                selects.append(
                    "SELECT sql, type, tbl_name, name, rowid, \(index + 1) AS snum, \(schema.quotedLiteral) AS sname "
                        + "FROM \(schema.quotedDatabaseIdentifier).sqlite_schema")
            }
            var filter = ""
            var arguments: [DatabaseValueConvertible?] = []
            if let pattern {
                let glob = pattern.contains("*") || pattern.contains("?") || pattern.contains("[")
                filter += pattern.contains(".") ? "lower(printf('%s.%s', sname, tbl_name))" : "lower(tbl_name)"
                filter += glob ? " GLOB ? AND " : " LIKE ? ESCAPE '\\' AND "
                arguments.append(pattern)
            }
            if noSystemTables { filter += "name NOT LIKE 'sqlite_%' AND " }
            let sql =
                "SELECT sql, type, name, sname FROM (" + selects.joined(separator: " UNION ALL ") + ") WHERE "
                + filter + "sql IS NOT NULL ORDER BY snum, rowid"
            for row in try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments)) {
                let schema: String = row["sname"]
                text += Self.schemaLine(
                    try Self.withSchemaName(
                        row["sql"], schema: schema == "main" ? nil : schema, name: row["name"], db: db))
            }
            // With a pattern, the table-valued functions it names too (the
            // shell's `shell_module_schema`): `/* json_each(key,value,…) */`.
            if let pattern, !pattern.contains(".") {
                let glob = pattern.contains("*") || pattern.contains("?") || pattern.contains("[")
                let modules = try String.fetchAll(
                    db,
                    sql: "SELECT name FROM pragma_module_list WHERE lower(name) "
                        + (glob ? "GLOB ?" : "LIKE ? ESCAPE '\\'") + " ORDER BY name",
                    arguments: [pattern])
                for module in modules {
                    let columns = try String.fetchAll(
                        db, sql: "SELECT name FROM pragma_table_info(?)", arguments: [module])
                    guard !columns.isEmpty else { continue }
                    text += Self.schemaLine(
                        "/* \(Self.quotedIfNeeded(module))(\(columns.map(Self.quotedIfNeeded).joined(separator: ","))) */"
                    )
                }
            }
            return text
        }
    }

    private static func like(_ pattern: String, _ name: String, _ db: Database) -> Bool {
        (try? Bool.fetchOne(db, sql: "SELECT ? LIKE ? ESCAPE '\\'", arguments: [name, pattern])) == true
    }

    /// The shell's `shell_add_schema`: the schema's name after `CREATE
    /// TABLE` (and the other kinds) for a database other than main, and a
    /// view's columns in a comment after it.
    private static func withSchemaName(_ sql: String, schema: String?, name: String, db: Database) throws -> String {
        guard sql.hasPrefix("CREATE ") else { return sql }
        let body = sql.dropFirst(7)
        for prefix in ["TABLE", "INDEX", "UNIQUE INDEX", "VIEW", "TRIGGER", "VIRTUAL TABLE"] {
            guard body.hasPrefix(prefix + " ") else { continue }
            var result: String?
            if let schema {
                let rest = body.dropFirst(prefix.count + 1)
                let quoted =
                    needsQuotes(schema) && schema.lowercased() != "temp" ? schema.quotedDatabaseIdentifier : schema
                result = "CREATE \(prefix) \(quoted).\(rest)"
            }
            if prefix == "VIEW" {
                let columns = try String.fetchAll(
                    db, sql: "SELECT name FROM pragma_table_info(?, ?)", arguments: [name, schema ?? "main"])
                if !columns.isEmpty {
                    var fake = ""
                    if let schema {
                        fake +=
                            (needsQuotes(schema) && schema.lowercased() != "temp"
                                ? schema.quotedDatabaseIdentifier : schema)
                            + "."
                    }
                    fake += quotedIfNeeded(name) + "(" + columns.map(quotedIfNeeded).joined(separator: ",") + ")"
                    result = (result ?? sql) + "\n/* \(fake) */"
                }
            }
            return result ?? sql
        }
        return sql
    }

    private static func quotedIfNeeded(_ name: String) -> String {
        needsQuotes(name) ? name.quotedDatabaseIdentifier : name
    }

    /// The shell's `quoteChar`: a name that is not a plain identifier, or
    /// is a keyword, goes in double quotes.
    private static func needsQuotes(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCII,
            first.properties.isAlphabetic || first == "_"
        else { return true }
        for scalar in name.unicodeScalars
        where !(scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_")) {
            return true
        }
        return sqlite3_keyword_check(name, Int32(name.utf8.count)) != 0
    }

    /// The shell's `printSchemaLine` for `.schema`: the statement and `;`,
    /// closing a comment or a line comment it ends in first.
    static func schemaLine(_ sql: String) -> String {
        var statement = sql
        if sql.contains("/*") || sql.contains("--") {
            for terminator in ["", "*/", "\n"] where SQLStatementCompleteness.isComplete(sql + terminator + ";") {
                statement = sql + terminator
                break
            }
        }
        if statement.hasPrefix("CREATE TABLE '") || statement.hasPrefix("CREATE TABLE \"") {
            return "CREATE TABLE IF NOT EXISTS " + statement.dropFirst(13) + ";\n"
        }
        return statement + ";\n"
    }
}

extension String {
    /// The text as an SQL string literal.
    fileprivate var quotedLiteral: String { "'" + replacingOccurrences(of: "'", with: "''") + "'" }
}
