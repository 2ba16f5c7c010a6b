/// What may be typed at a place in SQL text: the names and words both
/// front ends offer (the language server's `textDocument/completion`, the
/// REPL's Tab), resolved through `SQLScope` — aliases, common table
/// expressions and subqueries of the statement being typed.
///
/// ```swift
/// let source = SQLSource(text)
/// let start = SQLCompletion.wordStart(in: source.bytes, at: cursor)
/// SQLCompletion.candidates(source, wordStart: start, catalog: catalog, functions: names) { _ in nil }
///     .filter { $0.name.lowercased().hasPrefix(typed.lowercased()) }
/// ```
public enum SQLCompletion {
    public struct Candidate: Hashable, Sendable {
        public enum Kind: Hashable, Sendable {
            case column, table, view, commonTableExpression, function, keyword
        }
        public var name: String
        public var kind: Kind
        /// For a column, the table or view it belongs to (the name the
        /// statement gives a CTE or a subquery).
        public var relation: String?
        /// For a column, what the schema says of it.
        public var column: SchemaInfo.Column?
    }

    /// Where the name being typed at `offset` starts.
    public static func wordStart(in bytes: [UInt8], at offset: Int) -> Int {
        var start = offset
        while start > 0, SQLToken.isNameByte(bytes[start - 1]) { start -= 1 }
        return start
    }

    /// The candidates for the name that starts at `wordStart` (the typed
    /// part is not filtered on: each front end matches it its own way).
    ///
    /// - After `name.`: the columns of what `name` stands for (an alias, a
    ///   CTE, a table), or the relations of `main.` and `temp.`.
    /// - Where a table is expected (`FROM`, `JOIN`, `INTO`, `UPDATE`,
    ///   `TABLE`, `CREATE INDEX … ON`, a `,` in `FROM`): CTEs, tables, views.
    /// - Elsewhere: the columns of what the statement reads, then CTEs,
    ///   tables and views, `functions`, and SQLite's keywords.
    ///
    /// `columnNames` gives the columns of a CTE's or a subquery's SQL (the
    /// language server asks its checker; `nil` when unknown).
    public static func candidates(
        _ source: SQLSource, wordStart start: Int, catalog: SQLCatalog, functions: [String],
        columnNames: (String) -> [String]?
    ) -> [Candidate] {
        let statement = source.statementBeingTyped(at: start)
        let before =
            statement.map { statement in
                source.significantTokens(of: statement).filter { source.tokens[$0].range.upperBound <= start }
            } ?? []
        let scope = statement.map { SQLScope(source, $0, catalog: catalog, columnNames: columnNames) }

        if let last = before.last, source.tokens[last].kind == .dot, source.tokens[last].range.upperBound == start {
            guard before.count >= 2, source.tokens[before[before.count - 2]].isName else { return [] }
            let qualifier = source.name(of: source.tokens[before[before.count - 2]])
            if let entry = scope?.entry(named: qualifier) {
                return columns(entry.columns, of: entry.relation ?? entry.name)
            } else if let relation = catalog.relation(named: qualifier) {
                return columns(relation.columns, of: relation.name)
            } else if ["main", "temp"].contains(qualifier.lowercased()) {
                return relations(catalog, scope: nil)
            }
            return []
        }
        if expectsTable(source, before) {
            return relations(catalog, scope: scope)
        }
        var candidates: [Candidate] = []
        var seen = Set<String>()
        for entry in scope?.entries ?? [] {
            for candidate in columns(entry.columns, of: entry.relation ?? entry.name)
            where seen.insert(candidate.name.lowercased()).inserted {
                candidates.append(candidate)
            }
        }
        candidates += relations(catalog, scope: scope)
        candidates += functions.map { Candidate(name: $0, kind: .function) }
        candidates += SQLToken.keywords.sorted().map { Candidate(name: $0, kind: .keyword) }
        return candidates
    }

    /// Whether the word being typed names a table: after `FROM`, `JOIN`,
    /// `INTO`, `UPDATE`, `TABLE`, `CREATE INDEX ... ON`, or a `,` in `FROM`.
    static func expectsTable(_ source: SQLSource, _ before: [Int]) -> Bool {
        guard let last = before.last else { return false }
        let token = source.tokens[last]
        if token.kind == .comma {
            // In a FROM clause, if FROM is the last clause word before it.
            for index in before.reversed() where source.tokens[index].kind == .word {
                let word = source.text(of: source.tokens[index]).uppercased()
                if word == "FROM" || word == "JOIN" { return true }
                if ["SELECT", "WHERE", "GROUP", "ORDER", "BY", "SET", "VALUES", "ON", "HAVING"].contains(word) {
                    return false
                }
            }
            return false
        }
        guard token.kind == .word else { return false }
        switch source.text(of: token).uppercased() {
        case "FROM", "JOIN", "INTO", "UPDATE", "TABLE": return true
        case "ON":
            // CREATE [UNIQUE] INDEX [IF NOT EXISTS] name ON |
            return before.contains {
                source.tokens[$0].kind == .word && source.text(of: source.tokens[$0]).uppercased() == "INDEX"
            }
        default: return false
        }
    }

    private static func columns(_ columns: [SchemaInfo.Column], of relation: String) -> [Candidate] {
        columns.map { Candidate(name: $0.name, kind: .column, relation: relation, column: $0) }
    }

    private static func relations(_ catalog: SQLCatalog, scope: SQLScope?) -> [Candidate] {
        (scope?.commonTableExpressions ?? []).map { Candidate(name: $0.name, kind: .commonTableExpression) }
            + catalog.relations.map { Candidate(name: $0.name, kind: $0.kind == .view ? .view : .table) }
    }
}
