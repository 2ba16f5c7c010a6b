/// The shape of a live query that can be kept from the rows a commit
/// changed instead of being run again (`MaintainedState`), read from its
/// SQL: one table, no join, no subquery, no `DISTINCT`, `HAVING`, window,
/// `COLLATE`, parameter or function whose value is not a function of the row.
///
/// - **rows**: `SELECT exprs FROM t [WHERE w] [ORDER BY terms] [LIMIT n]`.
///   Without `ORDER BY` the rows come in the table's order (rowid);
///   `MaintainedBase` checks the plan is a scan of the table, whose ties
///   SQLite leaves in rowid order.
/// - **groups**: `SELECT keys and aggregates FROM t [WHERE w] [GROUP BY
///   columns] [ORDER BY output columns] [LIMIT n]`, where each output is a
///   `GROUP BY` term or one of `count(*)`, `count(x)`, `sum(x)`,
///   `total(x)`, `avg(x)`, `min(x)`, `max(x)` over an expression of the row.
///
/// The expressions are kept as the user wrote them, and SQLite evaluates
/// them: over the changed rows in a scratch copy of the table, and over the
/// database when the state is read whole.
struct MaintainedPlan: Hashable, Sendable {
    enum Aggregate: String, Hashable, Sendable {
        case countAll, count, sum, total, avg, min, max
    }

    enum Output: Hashable, Sendable {
        /// The `GROUP BY` term at this index.
        case key(Int)
        /// An aggregate over `arguments[argument]` (`nil` for `count(*)`).
        case aggregate(Aggregate, argument: Int?)
    }

    struct OrderTerm: Hashable, Sendable {
        /// An expression of the row (rows), or an output column's index (groups).
        var expression: String
        var output: Int?
        var descending: Bool
        var nullsFirst: Bool
    }

    enum Kind: Hashable, Sendable {
        case rows
        case groups
    }

    var kind: Kind
    /// The table, as named in the query (unquoted).
    var table: String
    /// What follows `FROM`, as written (the table and its alias).
    var from: String
    /// The `WHERE` expression, as written.
    var filter: String?
    /// rows: the output expressions.
    var outputs: [String]
    var order: [OrderTerm]
    var limit: Int?
    /// groups: the `GROUP BY` terms, the aggregates' arguments, and what each output is.
    var keys: [String] = []
    var arguments: [String] = []
    var columns: [Output] = []

    /// Functions whose value is not a function of the row (or its table):
    /// a query that calls them is run again.
    private static let unstable: Set<String> = [
        "random", "randomblob", "changes", "total_changes", "last_insert_rowid", "date", "time", "datetime",
        "julianday", "strftime", "unixepoch", "current_date", "current_time", "current_timestamp", "sqlite_version",
        "load_extension", "sqlite_offset", "regexp", "match",
    ]

    private static let aggregates: [String: Aggregate] = [
        "count": .count, "sum": .sum, "total": .total, "avg": .avg, "min": .min, "max": .max,
    ]

    /// The plan of a query, or why it cannot be kept from rows.
    static func of(_ sql: String) -> Result<MaintainedPlan, Unsupported> {
        let bytes = Array(sql.utf8)
        let tokens = SQLToken.tokenize(bytes).filter { $0.kind != .comment }
        return Parser(bytes: bytes, tokens: tokens).parse()
    }

    struct Unsupported: Error, Hashable, Sendable {
        var reason: String
    }

    private struct Parser {
        let bytes: [UInt8]
        var tokens: [SQLToken]

        init(bytes: [UInt8], tokens: [SQLToken]) {
            self.bytes = bytes
            var tokens = tokens
            while tokens.last?.kind == .semicolon { tokens.removeLast() }
            self.tokens = tokens
        }

        func word(_ index: Int) -> String? {
            guard index < tokens.count, tokens[index].kind == .word else { return nil }
            return String(decoding: bytes[tokens[index].range], as: UTF8.self).uppercased()
        }

        func text(_ range: Range<Int>) -> String {
            guard !range.isEmpty else { return "" }
            return String(
                decoding: bytes[
                    tokens[range.lowerBound].range.lowerBound..<tokens[range.upperBound - 1].range.upperBound],
                as: UTF8.self)
        }

        func fail(_ reason: String) -> Result<MaintainedPlan, Unsupported> { .failure(Unsupported(reason: reason)) }

        /// The top-level clause keywords, by position.
        func parse() -> Result<MaintainedPlan, Unsupported> {
            guard word(0) == "SELECT" else { return fail("not a SELECT") }
            // What no kept query may hold, anywhere.
            var depth = 0
            for (index, token) in tokens.enumerated() {
                switch token.kind {
                case .openParenthesis: depth += 1
                case .closeParenthesis: depth -= 1
                case .parameter: return fail("it has parameters")
                case .semicolon: return fail("several statements")
                case .word:
                    let name = word(index)!
                    if [
                        "OVER", "COLLATE", "DISTINCT", "WINDOW", "HAVING", "JOIN", "UNION", "EXCEPT", "INTERSECT",
                        "VALUES", "WITH", "OFFSET", "FILTER", "EXISTS", "MATCH", "REGEXP", "RAISE", "INDEXED",
                        "NATURAL",
                    ].contains(name) {
                        return fail("it uses \(name)")
                    }
                    if name == "SELECT", index != 0 { return fail("it has a subquery") }
                    if index + 1 < tokens.count, tokens[index + 1].kind == .openParenthesis,
                        unstable.contains(name.lowercased())
                    {
                        return fail("it calls \(name.lowercased())()")
                    }
                default: break
                }
                if depth < 0 { return fail("unbalanced parentheses") }
            }
            // Clause boundaries at depth 0.
            var marks: [(String, Int)] = []
            depth = 0
            for index in tokens.indices {
                switch tokens[index].kind {
                case .openParenthesis: depth += 1
                case .closeParenthesis: depth -= 1
                case .word where depth == 0:
                    switch word(index)! {
                    case "FROM", "WHERE", "LIMIT": marks.append((word(index)!, index))
                    case "GROUP", "ORDER":
                        guard word(index + 1) == "BY" else { return fail("\(word(index)!) without BY") }
                        marks.append((word(index)!, index))
                    default: break
                    }
                default: break
                }
            }
            let order = ["FROM", "WHERE", "GROUP", "ORDER", "LIMIT"]
            let names = marks.map(\.0)
            guard names.first == "FROM", Set(names).count == names.count,
                names == names.sorted(by: { order.firstIndex(of: $0)! < order.firstIndex(of: $1)! })
            else { return fail("its clauses are not one table's") }
            func clause(_ name: String) -> Range<Int>? {
                guard let at = marks.firstIndex(where: { $0.0 == name }) else { return nil }
                let start = marks[at].1 + (name == "GROUP" || name == "ORDER" ? 2 : 1)
                let end = at + 1 < marks.count ? marks[at + 1].1 : tokens.count
                return start..<end
            }
            var first = 1
            if word(1) == "ALL" { first = 2 }
            let selectList = first..<marks[0].1
            guard !selectList.isEmpty else { return fail("no result columns") }

            // FROM: one table, with an alias or none.
            let fromRange = clause("FROM")!
            let from = Array(fromRange)
            guard let tableAt = from.first, tokens[tableAt].isName else { return fail("FROM is not one table") }
            switch from.count {
            case 1: break
            case 2 where tokens[from[1]].isName && word(from[1]).map { !SQLToken.keywords.contains($0) } ?? true: break
            case 3 where word(from[1]) == "AS" && tokens[from[2]].isName: break
            default: return fail("FROM is not one table")
            }
            let table = SQLToken.name(of: tokens[tableAt], in: bytes)
            guard !table.lowercased().hasPrefix("sqlite_"), !table.lowercased().hasPrefix("pragma_") else {
                return fail("it reads SQLite's own tables")
            }

            let filter = clause("WHERE").map(text)
            if let range = clause("WHERE"), range.isEmpty { return fail("an empty WHERE") }
            var limit: Int?
            if let range = clause("LIMIT") {
                guard range.count == 1, tokens[range.lowerBound].kind == .number,
                    let value = Int(text(range)), value >= 0
                else { return fail("LIMIT is not a number") }
                limit = value
            }
            let outputs = split(selectList)
            guard !outputs.isEmpty else { return fail("no result columns") }
            var aliases: [String: Int] = [:]
            var expressions: [String] = []
            for (position, output) in outputs.enumerated() {
                var range = output
                if range.count >= 3, word(range.upperBound - 2) == "AS", tokens[range.upperBound - 1].isName {
                    aliases[SQLToken.name(of: tokens[range.upperBound - 1], in: bytes).lowercased()] = position
                    range = range.lowerBound..<(range.upperBound - 2)
                }
                let expression = text(range)
                if expression == "*" || expression.hasSuffix(".*") { return fail("it selects *") }
                expressions.append(expression)
            }

            var plan = MaintainedPlan(
                kind: .rows, table: table, from: text(fromRange), filter: filter, outputs: expressions, order: [],
                limit: limit)
            let grouped = clause("GROUP") != nil || expressions.contains { aggregate(of: $0) != nil }
            if !grouped {
                // An aggregate inside an expression: its value is not one row's.
                for index in tokens.indices.dropLast() where tokens[index + 1].kind == .openParenthesis {
                    if let name = word(index)?.lowercased(),
                        aggregates[name] != nil
                            || [
                                "group_concat", "string_agg", "json_group_array",
                                "json_group_object",
                            ].contains(name)
                    {
                        return fail("it aggregates inside an expression")
                    }
                }
            }
            if grouped {
                plan.kind = .groups
                var keys: [String] = []
                if let range = clause("GROUP") {
                    for term in split(range) {
                        guard term.count == 1, tokens[term.lowerBound].isName else {
                            return fail("a GROUP BY term is not a column")
                        }
                        keys.append(text(term))
                    }
                }
                plan.keys = keys
                for expression in expressions {
                    if let key = keys.firstIndex(where: { same($0, expression) }) {
                        plan.columns.append(.key(key))
                    } else if let (function, argument) = aggregate(of: expression) {
                        var index: Int?
                        if let argument {
                            if let known = plan.arguments.firstIndex(where: { same($0, argument) }) {
                                index = known
                            } else {
                                plan.arguments.append(argument)
                                index = plan.arguments.count - 1
                            }
                        }
                        plan.columns.append(.aggregate(function, argument: index))
                    } else {
                        return fail("a result column is neither a GROUP BY term nor an aggregate")
                    }
                }
            }
            if let range = clause("ORDER") {
                for term in split(range) {
                    var end = term.upperBound
                    var descending = false
                    var nullsFirst: Bool?
                    if end - 2 >= term.lowerBound, word(end - 2) == "NULLS", let which = word(end - 1) {
                        guard which == "FIRST" || which == "LAST" else { return fail("an ORDER BY term") }
                        nullsFirst = which == "FIRST"
                        end -= 2
                    }
                    if let direction = word(end - 1), direction == "ASC" || direction == "DESC" {
                        descending = direction == "DESC"
                        end -= 1
                    }
                    guard end > term.lowerBound else { return fail("an empty ORDER BY term") }
                    let expression = text(term.lowerBound..<end)
                    var output: Int?
                    if end - term.lowerBound == 1, tokens[term.lowerBound].kind == .number {
                        guard let position = Int(expression), position >= 1, position <= expressions.count else {
                            return fail("ORDER BY a column that is not there")
                        }
                        output = position - 1
                    } else if end - term.lowerBound == 1, tokens[term.lowerBound].isName,
                        let aliased = aliases[SQLToken.name(of: tokens[term.lowerBound], in: bytes).lowercased()]
                    {
                        output = aliased
                    } else if let same = expressions.firstIndex(where: { self.same($0, expression) }) {
                        output = same
                    }
                    if plan.kind == .groups, output == nil { return fail("ORDER BY what the result does not show") }
                    plan.order.append(
                        OrderTerm(
                            expression: output.map { expressions[$0] } ?? expression, output: output,
                            descending: descending, nullsFirst: nullsFirst ?? !descending))
                }
            }
            return .success(plan)
        }

        /// Splits a range at its top-level commas.
        func split(_ range: Range<Int>) -> [Range<Int>] {
            var parts: [Range<Int>] = []
            var depth = 0
            var start = range.lowerBound
            for index in range {
                switch tokens[index].kind {
                case .openParenthesis: depth += 1
                case .closeParenthesis: depth -= 1
                case .comma where depth == 0:
                    parts.append(start..<index)
                    start = index + 1
                default: break
                }
            }
            parts.append(start..<range.upperBound)
            return parts.contains(where: \.isEmpty) ? [] : parts
        }

        /// Two expressions written alike (case and spaces aside).
        func same(_ a: String, _ b: String) -> Bool {
            Self.normalized(a) == Self.normalized(b)
        }

        static func normalized(_ text: String) -> String {
            let bytes = Array(text.utf8)
            return SQLToken.tokenize(bytes).filter { $0.kind != .comment }.map {
                let spelled = String(decoding: bytes[$0.range], as: UTF8.self)
                return $0.kind == .word ? spelled.lowercased() : spelled
            }.joined(separator: " ")
        }

        /// `name(argument)` for a known aggregate; the argument is `nil` for `count(*)`.
        func aggregate(of expression: String) -> (Aggregate, String?)? {
            let bytes = Array(expression.utf8)
            let inner = SQLToken.tokenize(bytes).filter { $0.kind != .comment }
            guard inner.count >= 3, inner[0].kind == .word, inner[1].kind == .openParenthesis,
                inner.last!.kind == .closeParenthesis
            else { return nil }
            let name = String(decoding: bytes[inner[0].range], as: UTF8.self).lowercased()
            guard let function = aggregates[name] else { return nil }
            // The parentheses must be the call's own.
            var depth = 0
            for (index, token) in inner.enumerated().dropFirst() {
                if token.kind == .openParenthesis { depth += 1 }
                if token.kind == .closeParenthesis {
                    depth -= 1
                    if depth == 0, index != inner.count - 1 { return nil }
                }
                if depth == 1, token.kind == .comma { return nil }
            }
            let argument = String(
                decoding: bytes[inner[2].range.lowerBound..<inner[inner.count - 2].range.upperBound], as: UTF8.self)
            if inner.count == 3 { return nil }
            if argument == "*" { return function == .count ? (.countAll, nil) : nil }
            return (function, argument)
        }
    }
}
