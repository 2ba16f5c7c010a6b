/// SQL words offered by completion.
enum SQLKeywords {
    static let keywords: [String] = [
        "ABORT", "ACTION", "ADD", "AFTER", "ALL", "ALTER", "ALWAYS", "ANALYZE", "AND", "AS", "ASC", "ATTACH",
        "AUTOINCREMENT", "BEFORE", "BEGIN", "BETWEEN", "BY", "CASCADE", "CASE", "CAST", "CHECK", "COLLATE",
        "COLUMN", "COMMIT", "CONFLICT", "CONSTRAINT", "CREATE", "CROSS", "CURRENT_DATE", "CURRENT_TIME",
        "CURRENT_TIMESTAMP", "DEFAULT", "DEFERRED", "DELETE", "DESC", "DETACH", "DISTINCT", "DO", "DROP",
        "EACH", "ELSE", "END", "ESCAPE", "EXCEPT", "EXCLUSIVE", "EXISTS", "EXPLAIN", "FALSE", "FILTER",
        "FOREIGN", "FROM", "FULL", "GENERATED", "GLOB", "GROUP", "HAVING", "IF", "IGNORE", "IMMEDIATE", "IN",
        "INDEX", "INNER", "INSERT", "INSTEAD", "INTERSECT", "INTO", "IS", "ISNULL", "JOIN", "KEY", "LEFT",
        "LIKE", "LIMIT", "MATCH", "MATERIALIZED", "NATURAL", "NO", "NOT", "NOTHING", "NOTNULL", "NULL",
        "NULLS", "OF", "OFFSET", "ON", "OR", "ORDER", "OUTER", "OVER", "PARTITION", "PLAN", "PRAGMA",
        "PRIMARY", "QUERY", "RECURSIVE", "REFERENCES", "REINDEX", "RELEASE", "RENAME", "REPLACE", "RETURNING",
        "RIGHT", "ROLLBACK", "ROW", "ROWS", "SAVEPOINT", "SELECT", "SET", "STRICT", "TABLE", "TEMP",
        "TEMPORARY", "THEN", "TO", "TRANSACTION", "TRIGGER", "TRUE", "UNION", "UNIQUE", "UPDATE", "USING",
        "VACUUM", "VALUES", "VIEW", "VIRTUAL", "WHEN", "WHERE", "WINDOW", "WITH", "WITHOUT",
    ]

    static let functions: [String] = [
        "abs", "avg", "char", "coalesce", "count", "date", "datetime", "glob", "group_concat", "hex", "ifnull",
        "iif", "instr", "json", "json_array", "json_extract", "json_group_array", "json_group_object",
        "json_object", "julianday", "length", "like", "lower", "ltrim", "max", "min", "nullif", "printf",
        "quote", "random", "randomblob", "replace", "round", "rtrim", "strftime", "substr", "sum", "time",
        "total", "trim", "typeof", "unicode", "upper", "zeroblob",
    ]

    static let keywordSet: Set<String> = Set(keywords)

    /// Keywords after which a table or view name comes.
    static let relationContext: Set<String> = ["FROM", "JOIN", "INTO", "UPDATE", "TABLE", "ON"]
}
