import GRDBSQLite
import SQLiveEngine

/// `.lint fkey-indexes [-verbose] [-groupbyparent]`: the foreign keys of
/// the main database whose child columns no index serves, each with the
/// `CREATE INDEX` that would, as the sqlite3 3.40.1 shell reports them.
///
/// ```text
/// CREATE INDEX 'c1_y' ON 'c1'('y'); --> p1(a)
/// ```
///
/// For each foreign key, it asks SQLite's planner for the plan of the
/// lookup the key's checks make in the child table (`SELECT 1 FROM child
/// WHERE child.col=? AND …`, with the parent column's collation where the
/// child's differs), and reports the key unless the plan searches a
/// covering index on those columns or the rowid. `-verbose` also says which
/// keys are served; `-groupbyparent` orders by parent table, under a
/// `-- Parent table NAME` line. Everything runs on the session's connection.
struct ForeignKeyIndexLint {
    var verbose = false
    var groupByParent = false

    /// One foreign key: the query to plan, the plan that serves it, and the texts of the report.
    private static let keysQuery = """
        SELECT 'EXPLAIN QUERY PLAN SELECT 1 FROM ' || quote(child.name) || ' WHERE '
                 || group_concat(quote(child.name) || '.' || quote(fk.[from]) || '=?'
                      || fkey_collate_clause(fk.[table], coalesce(fk.[to], parent.name), child.name, fk.[from]),
                    ' AND '),
               'SEARCH ' || child.name || ' USING COVERING INDEX*(' || group_concat('*=?', ' AND ') || ')',
               child.name || '(' || group_concat(fk.[from], ', ') || ')',
               fk.[table] || '(' || group_concat(coalesce(fk.[to], parent.name)) || ')',
               'CREATE INDEX ' || quote(child.name || '_' || group_concat(fk.[from], '_'))
                 || ' ON ' || quote(child.name) || '('
                 || group_concat(quote(fk.[from])
                      || fkey_collate_clause(fk.[table], coalesce(fk.[to], parent.name), child.name, fk.[from]),
                    ', ')
                 || ');',
               fk.[table]
        FROM sqlite_schema AS child, pragma_foreign_key_list(child.name) AS fk
        LEFT JOIN pragma_table_info AS parent ON (pk - 1 = seq AND parent.arg = fk.[table])
        GROUP BY child.name, fk.id
        ORDER BY (CASE WHEN ?1 THEN fk.[table] ELSE child.name END)
        """

    /// A plan that searches the child table by its rowid also serves.
    private static let rowidPlan = "SEARCH * USING INTEGER PRIMARY KEY (rowid=?)"

    /// What the command printed: the report (standard output) and an error (standard error).
    struct Report {
        var output = ""
        var error: String?
    }

    /// Runs on `connection` (the session's).
    func run(on connection: OpaquePointer) -> Report {
        var report = Report()
        Self.registerCollateClause(on: connection)
        var keys: OpaquePointer?
        guard sqlite3_prepare_v2(connection, Self.keysQuery, -1, &keys, nil) == SQLITE_OK else {
            report.error = Self.message(connection) + "\n"
            return report
        }
        sqlite3_bind_int(keys, 1, groupByParent ? 1 : 0)
        let indent = groupByParent ? "    " : ""
        var previousParent: String?
        var failed = false
        while sqlite3_step(keys) == SQLITE_ROW {
            let texts = (0..<6).map { column in sqlite3_column_text(keys, column).map { String(cString: $0) } }
            guard let query = texts[0], let pattern = texts[1] else { continue }
            // NULL prints as C's printf prints it (a key to a missing table has no columns).
            let (child, parentColumns, createIndex, parent) = (
                texts[2] ?? "(null)", texts[3] ?? "(null)", texts[4] ?? "(null)", texts[5]
            )
            var plan: OpaquePointer?
            guard sqlite3_prepare_v2(connection, query, -1, &plan, nil) == SQLITE_OK else {
                failed = true
                break
            }
            var served: Bool?
            if sqlite3_step(plan) == SQLITE_ROW {
                let detail = sqlite3_column_text(plan, 3).map { String(cString: $0) }
                served =
                    detail.map { sqlite3_strglob(pattern, $0) == 0 || sqlite3_strglob(Self.rowidPlan, $0) == 0 }
                    ?? false
            }
            guard sqlite3_finalize(plan) == SQLITE_OK else {
                failed = true
                break
            }
            guard let served else {
                report.error = "Error: internal error"
                break
            }
            if groupByParent && (verbose || !served)
                && (previousParent == nil || !Self.equalIgnoringCase(parent, previousParent))
            {
                report.output += "-- Parent table \(parent ?? "(null)")\n"
                previousParent = parent ?? ""
            }
            if !served {
                report.output += "\(indent)\(createIndex) --> \(parentColumns)\n"
            } else if verbose {
                report.output += "\(indent)/* no extra indexes required for \(child) -> \(parentColumns) */\n"
            }
        }
        if failed { report.error = (report.error ?? "") + Self.message(connection) + "\n" }
        if sqlite3_finalize(keys) != SQLITE_OK && !failed {
            report.error = (report.error ?? "") + Self.message(connection) + "\n"
        }
        return report
    }

    private static func message(_ connection: OpaquePointer) -> String {
        String(cString: sqlite3_errmsg(connection))
    }

    /// SQLite's `sqlite3_stricmp`: ASCII letters folded; NULL only equals NULL.
    private static func equalIgnoringCase(_ a: String?, _ b: String?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return sqlite3_stricmp(a, b) == 0
    }

    /// `fkey_collate_clause(PARENT, PARENT_COLUMN, CHILD, CHILD_COLUMN)`:
    /// ` COLLATE X` when the parent column's collation X differs from the
    /// child column's, else empty (also when a table or column is missing).
    /// The shell registers it on its connection the first time `.lint` runs.
    private static func registerCollateClause(on connection: OpaquePointer) {
        sqlite3_create_function_v2(
            connection, "fkey_collate_clause", 4, SQLITE_UTF8, nil,
            { context, _, values in
                guard let values else { return }
                let names = (0..<4).map { sqlite3_value_text(values[$0]).map { String(cString: $0) } }
                let connection = sqlite3_context_db_handle(context)
                sqlite3_result_text(context, "", 0, ShellFunctions.transient)
                func collation(_ table: String?, _ column: String?) -> String? {
                    var sequence: UnsafePointer<CChar>?
                    let code = sqlite3_table_column_metadata(
                        connection, "main", table, column, nil, &sequence, nil, nil, nil)
                    return code == SQLITE_OK ? sequence.map { String(cString: $0) } : nil
                }
                guard let parent = collation(names[0], names[1]), let child = collation(names[2], names[3]),
                    sqlite3_stricmp(parent, child) != 0
                else { return }
                ShellFunctions.resultText(context, " COLLATE \(parent)")
            }, nil, nil, nil)
    }
}

extension ForeignKeyIndexLint {
    /// The switches after `fkey-indexes`, or the usage line to print (to
    /// standard error; the shell carries on as if the command had worked).
    /// Each switch may be shortened to two characters or more, in any case.
    static func parse(command: String, arguments: [String]) -> Result<ForeignKeyIndexLint, Usage> {
        guard let subcommand = arguments.first, isPrefix(subcommand, of: "fkey-indexes") else {
            return .failure(
                Usage(
                    text: "Usage \(command) sub-command ?switches...?\nWhere sub-commands are:\n    fkey-indexes\n"))
        }
        var lint = ForeignKeyIndexLint()
        for argument in arguments.dropFirst() {
            if argument.utf8.count > 1 && isPrefix(argument, of: "-verbose") {
                lint.verbose = true
            } else if argument.utf8.count > 1 && isPrefix(argument, of: "-groupbyparent") {
                lint.groupByParent = true
            } else {
                return .failure(Usage(text: "Usage: \(command) \(subcommand) ?-verbose? ?-groupbyparent?\n"))
            }
        }
        return .success(lint)
    }

    struct Usage: Error {
        var text: String
    }

    /// Whether `text` (one character at least) begins `word`, ASCII letters in any case.
    private static func isPrefix(_ text: String, of word: String) -> Bool {
        let text = Array(text.utf8)
        let word = Array(word.utf8)
        guard !text.isEmpty, text.count <= word.count else { return false }
        return zip(text, word).allSatisfy { a, b in
            (a >= 0x41 && a <= 0x5A ? a | 0x20 : a) == b
        }
    }
}
