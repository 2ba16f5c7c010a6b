import CSQLiveSupport

/// Statements that would change the connection they are prepared on.
///
/// Many PRAGMAs act while SQLite *prepares* them, not when they run:
/// `PRAGMA locking_mode = EXCLUSIVE` prepared on the checker's connection
/// made it keep its lock and never see another writer's `CREATE TABLE`
/// again; `query_only`, `cache_size`, `soft_heap_limit`, `temp_store`,
/// `journal_mode` act the same way. sqlive prepares the text of documents,
/// hovers, inline results and live queries on connections it shares, so such
/// a statement is refused there with this reason — by SQLite's authorizer on
/// the checker's connection (`sqlive_keep_connection_state`), and by reading
/// the text before a live query is prepared anywhere. The PRAGMAs that only
/// read (`sqlive_pragma_only_reads`: a setting without an argument, a list
/// such as `table_info(t)`) are allowed; so are the `pragma_…` table-valued
/// functions, which SQLite only offers for PRAGMAs without side effects.
///
/// ```swift
/// ConnectionSetting.settingPragma(in: "PRAGMA locking_mode = EXCLUSIVE")  // "locking_mode"
/// ConnectionSetting.settingPragma(in: "PRAGMA table_info(t)")             // nil
/// ```
public enum ConnectionSetting {
    /// The name of the PRAGMA the text's first statement is, if it is one
    /// (after an `EXPLAIN` or `EXPLAIN QUERY PLAN`, which prepare it too).
    public static func pragmaName(in bytes: some Collection<UInt8>) -> String? {
        pragma(in: Array(bytes))?.name
    }

    /// The name of the PRAGMA the text's first statement is when it may
    /// change the connection (it does not only read); `nil` otherwise.
    public static func settingPragma(in sql: String) -> String? {
        guard let pragma = pragma(in: Array(sql.utf8)) else { return nil }
        let readsOnly = pragma.name.withCString { name in
            sqlive_pragma_only_reads(name, pragma.hasArgument ? "" : nil) != 0
        }
        return readsOnly ? nil : pragma.name
    }

    /// Why such a statement is not prepared here.
    public static func refusal(pragma name: String) -> String {
        "PRAGMA \(name) may change the connection it is prepared on, and this one is shared: sqlive does not "
            + "prepare it here (run it as a statement of the session: the REPL, query/execute)"
    }

    private static func pragma(in bytes: [UInt8]) -> (name: String, hasArgument: Bool)? {
        var tokens = SQLToken.tokenize(bytes).filter { $0.kind != .comment }[...]
        func word(_ token: SQLToken?) -> String? {
            guard let token, token.kind == .word else { return nil }
            return SQLToken.name(of: token, in: bytes).uppercased()
        }
        if word(tokens.first) == "EXPLAIN" {
            tokens = tokens.dropFirst()
            if word(tokens.first) == "QUERY" { tokens = tokens.dropFirst(2) }
        }
        guard word(tokens.first) == "PRAGMA" else { return nil }
        tokens = tokens.dropFirst()
        guard var nameToken = tokens.first, nameToken.isName else { return nil }
        tokens = tokens.dropFirst()
        if tokens.first?.kind == .dot, let next = tokens.dropFirst().first, next.isName {
            // schema.name
            nameToken = next
            tokens = tokens.dropFirst(2)
        }
        let next = tokens.first
        let hasArgument =
            next?.kind == .openParenthesis
            || (next?.kind == .punctuation && next.map { bytes[$0.range] == [UInt8(ascii: "=")] } ?? false)
        return (SQLToken.name(of: nameToken, in: bytes), hasArgument)
    }
}
