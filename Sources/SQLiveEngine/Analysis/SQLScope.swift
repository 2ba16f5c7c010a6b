import Foundation

/// The tables a statement reads, by the names it gives them: tables and
/// views under their aliases, common table expressions, subqueries in
/// `FROM`.
///
/// Found from the tokens, without a parser: `FROM`, `JOIN`, `,` in a
/// `FROM` clause, `UPDATE`, `INTO` and `WITH` introduce names. The
/// columns of CTEs and subqueries are asked of SQLite, by preparing them.
///
/// ```swift
/// let scope = SQLScope(source, statement, catalog: catalog) { checker.columnNames(of: $0) }
/// scope.entry(named: "p")?.relation   // "players", for "... FROM players AS p"
/// ```
public struct SQLScope: Sendable {
    public struct Entry: Hashable, Sendable {
        public enum Kind: Hashable, Sendable {
            case table, view, commonTableExpression, subquery
        }
        /// The name the statement uses: the alias, else the table's name.
        public var name: String
        /// The table or view it reads, for tables and views.
        public var relation: String?
        public var kind: Kind
        public var columns: [SchemaInfo.Column]
    }

    public var entries: [Entry] = []
    /// The CTEs the statement defines (also in `entries` when read).
    public var commonTableExpressions: [Entry] = []

    /// The entry a name stands for: an alias, a table's name, a CTE.
    public func entry(named name: String) -> Entry? {
        entries.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
            ?? commonTableExpressions.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
    }

    /// The words that end a `FROM` clause's list of tables.
    private static let clauseEnds: Set<String> = [
        "WHERE", "GROUP", "ORDER", "LIMIT", "HAVING", "WINDOW", "UNION", "EXCEPT", "INTERSECT", "SET",
        "RETURNING", "VALUES", "SELECT", "DEFAULT",
    ]

    public init(
        _ source: SQLSource, _ statement: SQLSource.Statement, catalog: SQLCatalog,
        columnNames: (String) -> [String]?
    ) {
        let tokens = source.significantTokens(of: statement).map { source.tokens[$0] }
        func word(_ index: Int) -> String? {
            guard index >= 0, index < tokens.count, tokens[index].kind == .word else { return nil }
            return source.text(of: tokens[index]).uppercased()
        }
        func isAlias(_ index: Int) -> Bool {
            guard index < tokens.count else { return false }
            if tokens[index].kind == .quotedName { return true }
            guard let word = word(index) else { return false }
            return !SQLToken.keywords.contains(word)
        }
        /// The index of the `)` that closes the `(` at `open`.
        func closing(_ open: Int) -> Int {
            var depth = 0
            for index in open..<tokens.count {
                switch tokens[index].kind {
                case .openParenthesis: depth += 1
                case .closeParenthesis:
                    depth -= 1
                    if depth == 0 { return index }
                default: break
                }
            }
            return tokens.count - 1
        }
        func text(_ range: ClosedRange<Int>) -> String {
            guard range.lowerBound < tokens.count else { return "" }
            let upper = min(range.upperBound, tokens.count - 1)
            return String(
                decoding: source.bytes[tokens[range.lowerBound].range.lowerBound..<tokens[upper].range.upperBound],
                as: UTF8.self)
        }
        func columns(named names: [String]) -> [SchemaInfo.Column] {
            names.map { SchemaInfo.Column(name: $0, type: "", notNull: false, primaryKeyIndex: 0) }
        }

        // WITH name [(columns)] AS [NOT] [MATERIALIZED] (query), ...
        var index = 0
        if word(0) == "WITH" {
            index = word(1) == "RECURSIVE" ? 2 : 1
            while index < tokens.count, tokens[index].isName {
                let name = source.name(of: tokens[index])
                var declared: [String] = []
                index += 1
                if index < tokens.count, tokens[index].kind == .openParenthesis {
                    let end = closing(index)
                    declared = tokens[(index + 1)..<end].filter(\.isName).map { source.name(of: $0) }
                    index = end + 1
                }
                guard word(index) == "AS" else { break }
                index += 1
                while let modifier = word(index), modifier == "NOT" || modifier == "MATERIALIZED" { index += 1 }
                guard index < tokens.count, tokens[index].kind == .openParenthesis else { break }
                let end = closing(index)
                var names = declared
                if names.isEmpty {
                    names = columnNames(text(0...end) + " SELECT * FROM " + SQLToken.quoted(name)) ?? []
                }
                commonTableExpressions.append(
                    Entry(name: name, relation: nil, kind: .commonTableExpression, columns: columns(named: names)))
                index = end + 1
                guard index < tokens.count, tokens[index].kind == .comma else { break }
                index += 1
            }
        }

        // The tables read, with their aliases. `inFrom[depth]` tells whether
        // a `,` at that depth of parentheses separates tables.
        var depth = 0
        var inFrom: [Int: Bool] = [:]
        while index < tokens.count {
            let current = word(index)
            var introducesTable = false
            switch current {
            case "FROM", "JOIN":
                inFrom[depth] = true
                introducesTable = true
            case "UPDATE", "INTO":
                introducesTable = true
            case let word? where Self.clauseEnds.contains(word):
                inFrom[depth] = false
            default:
                switch tokens[index].kind {
                case .comma: introducesTable = inFrom[depth] ?? false
                case .openParenthesis:
                    depth += 1
                    inFrom[depth] = false
                case .closeParenthesis:
                    inFrom[depth] = false
                    depth = max(0, depth - 1)
                default: break
                }
            }
            index += 1
            guard introducesTable, index < tokens.count else { continue }
            if tokens[index].kind == .openParenthesis {
                // A subquery, or a parenthesized join.
                let end = closing(index)
                let inner = index + 1 < end ? text((index + 1)...(end - 1)) : ""
                var alias = end + 1
                if word(alias) == "AS" { alias += 1 }
                if isAlias(alias), let names = columnNames(inner) {
                    entries.append(
                        Entry(
                            name: source.name(of: tokens[alias]), relation: nil, kind: .subquery,
                            columns: columns(named: names)))
                    index = alias + 1
                }
                // Otherwise the tokens inside are read as they come.
                continue
            }
            guard tokens[index].isName else { continue }
            var name = source.name(of: tokens[index])
            // schema.table
            if index + 2 < tokens.count, tokens[index + 1].kind == .dot, tokens[index + 2].isName {
                index += 2
                name = source.name(of: tokens[index])
            }
            index += 1
            // A table-valued function: pragma_table_info('t') (but not
            // INSERT INTO t(a, b)).
            if current != "INTO", index < tokens.count, tokens[index].kind == .openParenthesis {
                index = closing(index) + 1
                continue
            }
            var alias = name
            if word(index) == "AS", index + 1 < tokens.count, tokens[index + 1].isName {
                alias = source.name(of: tokens[index + 1])
                index += 2
            } else if isAlias(index) {
                alias = source.name(of: tokens[index])
                index += 1
            }
            if let cte = commonTableExpressions.first(where: { $0.name.caseInsensitiveCompare(name) == .orderedSame }) {
                entries.append(Entry(name: alias, relation: nil, kind: .commonTableExpression, columns: cte.columns))
            } else if let relation = catalog.relation(named: name) {
                entries.append(
                    Entry(
                        name: alias, relation: relation.name, kind: relation.kind == .view ? .view : .table,
                        columns: relation.columns))
            }
        }
    }
}
