import GRDBSQLite

/// Tells whether SQL text ends in a complete statement.
///
/// The REPL keeps reading lines until this says yes. It wraps
/// `sqlite3_complete`, which knows about string literals, comments and the
/// `BEGIN ... END` of `CREATE TRIGGER`.
public enum SQLStatementCompleteness {
    /// Whether the text ends in a complete statement (a `;` outside of
    /// literals, comments and trigger bodies).
    public static func isComplete(_ sql: String) -> Bool {
        sqlite3_complete(sql) != 0
    }
}
