import Foundation
import SQLiveEngine
import SQLiveProtocol

/// Completion, hover and code lenses: read from the document as the last
/// notification left it, and from the checker of its database.
extension LanguageService {
    // MARK: - Completion

    /// `textDocument/completion`.
    func completion(_ params: TextDocumentPositionParams) async throws(ResponseError) -> CompletionRequest.Result {
        let document = try openDocument(params.textDocument.uri)
        let offset = document.offset(of: params.position, encoding: encoding)
        let source = SQLSource(bytes: document.bytes)
        let checker = try? await checker(for: document)
        let catalog = checker?.catalog() ?? SQLCatalog(relations: [])

        let start = SQLCompletion.wordStart(in: document.bytes, at: offset)
        let prefix = String(decoding: document.bytes[start..<offset], as: UTF8.self).lowercased()
        let candidates = SQLCompletion.candidates(
            source, wordStart: start, catalog: catalog, functions: checker?.functionNames() ?? []
        ) { checker?.columnNames(of: $0) }
        let items = candidates.filter { prefix.isEmpty || $0.name.lowercased().hasPrefix(prefix) }.map(Self.item)
        return CompletionRequest.Result(isIncomplete: false, items: items)
    }

    /// A candidate as the client shows it: columns first, then relations,
    /// functions and keywords.
    private static func item(_ candidate: SQLCompletion.Candidate) -> CompletionRequest.Item {
        let name = candidate.name
        switch candidate.kind {
        case .column:
            let detail = candidate.column.map { Self.describe($0) + " · " } ?? ""
            return CompletionRequest.Item(
                label: name, kind: .field, detail: detail + (candidate.relation ?? ""), sortText: "0" + name,
                insertText: insertText(name))
        case .table, .view, .commonTableExpression:
            let detail =
                switch candidate.kind {
                case .view: "view"
                case .commonTableExpression: "common table expression"
                default: "table"
                }
            return CompletionRequest.Item(
                label: name, kind: .class, detail: detail, sortText: "1" + name, insertText: insertText(name))
        case .function:
            return CompletionRequest.Item(label: name, kind: .function, detail: "function", sortText: "2" + name)
        case .keyword:
            return CompletionRequest.Item(label: name, kind: .keyword, detail: "keyword", sortText: "3" + name)
        }
    }

    private static func insertText(_ name: String) -> String? {
        let quoted = SQLToken.quoted(name)
        return quoted == name ? nil : quoted
    }

    /// A column's type and constraints: `INTEGER PRIMARY KEY NOT NULL`.
    static func describe(_ column: SchemaInfo.Column) -> String {
        var parts = [column.type.isEmpty ? "(no type)" : column.type]
        if column.isPrimaryKey { parts.append("PRIMARY KEY") }
        if column.notNull { parts.append("NOT NULL") }
        return parts.joined(separator: " ")
    }

    // MARK: - Hover

    /// `textDocument/hover`.
    func hover(_ params: TextDocumentPositionParams) async throws(ResponseError) -> HoverRequest.Result {
        let document = try openDocument(params.textDocument.uri)
        let encoding = self.encoding
        let offset = document.offset(of: params.position, encoding: encoding)
        let source = SQLSource(bytes: document.bytes)
        guard let statement = source.statement(at: offset) else { return OptionalResult(nil) }
        guard let checker = try? await checker(for: document) else { return OptionalResult(nil) }
        let catalog = checker.catalog()
        let scope = SQLScope(source, statement, catalog: catalog) { checker.columnNames(of: $0) }

        if let index = source.tokenIndex(at: offset), statement.tokens.contains(index), source.tokens[index].isName {
            let token = source.tokens[index]
            let name = source.name(of: token)
            let range = document.range(of: token.range, encoding: encoding)
            let significant = source.significantTokens(of: statement)
            let position = significant.firstIndex(of: index) ?? 0
            let afterDot = position >= 2 && source.tokens[significant[position - 1]].kind == .dot
            let beforeDot = position + 1 < significant.count && source.tokens[significant[position + 1]].kind == .dot
            if afterDot, source.tokens[significant[position - 2]].isName {
                // qualifier.column
                let qualifier = source.name(of: source.tokens[significant[position - 2]])
                if let entry = scope.entry(named: qualifier), let column = entry.columns.first(named: name) {
                    return hover(Self.describe(column, of: entry), range)
                }
                if let relation = catalog.relation(named: qualifier), let column = relation.column(named: name) {
                    return hover(Self.describe(column, in: relation.name), range)
                }
                if let relation = catalog.relation(named: name) {
                    return hover(Self.describe(relation), range)
                }
            } else {
                if let entry = scope.entry(named: name) {
                    if let relationName = entry.relation, let relation = catalog.relation(named: relationName) {
                        return hover(Self.describe(relation, alias: name), range)
                    }
                    return hover(Self.describe(entry), range)
                }
                if let relation = catalog.relation(named: name) {
                    return hover(Self.describe(relation), range)
                }
                if !beforeDot {
                    for entry in scope.entries {
                        if let column = entry.columns.first(named: name) {
                            return hover(Self.describe(column, of: entry), range)
                        }
                    }
                }
            }
        }
        // Anywhere else in the statement: its plan.
        let range = document.range(of: statement.range, encoding: encoding)
        do {
            let sql = source.text(of: statement)
            // A table too big to count in 20 ms is shown without its size:
            // a hover never waits for a count.
            var explanation = try checker.explain(sql, advise: false, countBudget: Self.hoverCountBudget)
            // Advice only where something is costly.
            if !explanation.hints.isEmpty {
                do {
                    explanation.advice = try checker.adviseIndexes(for: sql)
                } catch {
                    // The hover shows the plan without advice.
                    ServerLog.debug("index advice for a hover: \(error.description)")
                }
            }
            return hover(Self.describe(explanation), range)
        } catch {
            return hover("**SQLite:** \(error.description)", range)
        }
    }

    /// How long a hover may count a table's rows for its plan's hints.
    static let hoverCountBudget = Duration.milliseconds(20)

    /// A hover in the client's format: Markdown, or the same text plain.
    private func hover(_ markdown: String, _ range: TextRange) -> HoverRequest.Result {
        let contents =
            plainTextHover ? MarkupContent(plainText: Self.plainText(markdown)) : MarkupContent(markdown: markdown)
        return OptionalResult(HoverRequest.Hover(contents: contents, range: range))
    }

    /// Markdown as plain text: no code fences, no emphasis or code marks.
    static func plainText(_ markdown: String) -> String {
        markdown.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("```") && $0 != "|---|---|---|---|" }
            .map { $0.replacingOccurrences(of: "**", with: "").replacingOccurrences(of: "`", with: "") }
            .joined(separator: "\n")
    }

    private static func describe(_ column: SchemaInfo.Column, of entry: SQLScope.Entry) -> String {
        describe(column, in: entry.relation ?? entry.name)
    }

    private static func describe(_ column: SchemaInfo.Column, in relation: String) -> String {
        "**column** `\(relation).\(column.name)` — \(column.type.isEmpty ? "no declared type" : "`\(column.type)`")"
            + (column.isPrimaryKey ? ", primary key" : "") + (column.notNull ? ", NOT NULL" : "")
    }

    /// A table or view: its columns as a table, and its indexes.
    static func describe(_ relation: SQLCatalog.Relation, alias: String? = nil) -> String {
        var lines = ["**\(relation.kind == .view ? "view" : "table")** `\(relation.name)`"]
        if let alias, alias.caseInsensitiveCompare(relation.name) != .orderedSame {
            lines[0] += " (as `\(alias)`)"
        }
        if let rows = relation.estimatedRows { lines[0] += ", about \(rows) rows" }
        lines += ["", "| column | type | key | not null |", "|---|---|---|---|"]
        for column in relation.columns {
            lines.append(
                "| \(column.name) | \(column.type) | \(column.isPrimaryKey ? "PK" : "") | \(column.notNull ? "yes" : "") |"
            )
        }
        if !relation.indexes.isEmpty {
            lines += ["", "**indexes**"]
            for index in relation.indexes {
                let kind = index.isUnique ? "unique " : ""
                let origin = index.origin == "pk" ? " (primary key)" : index.origin == "u" ? " (UNIQUE constraint)" : ""
                lines.append("- `\(index.name)`: \(kind)on (\(index.columns.joined(separator: ", ")))\(origin)")
            }
        }
        return lines.joined(separator: "\n")
    }

    private static func describe(_ entry: SQLScope.Entry) -> String {
        let kind = entry.kind == .commonTableExpression ? "common table expression" : "subquery"
        return "**\(kind)** `\(entry.name)`: " + entry.columns.map { "`\($0.name)`" }.joined(separator: ", ")
    }

    /// A plan as a tree, with its costly steps in words; `scope` tells
    /// which table each alias of the plan stands for.
    static func describe(_ explanation: Explanation) -> String {
        var text = "**query plan**\n\n```text\n\(explanation.plan.rendered)\n```"
        if !explanation.hints.isEmpty {
            text += "\n\n" + explanation.hints.map { "- ⚠ " + $0.explanation }.joined(separator: "\n")
        }
        for proposal in explanation.advice?.proposals ?? [] {
            text +=
                "\n\n**advice:** `\(proposal.sql)` — the plan with it:\n\n```text\n\(proposal.planAfter.rendered)\n```"
        }
        return text
    }

    // MARK: - Inline results

    /// `textDocument/inlayHint`: at the end of each read-only statement in
    /// the range, its live result in brief.
    func inlayHints(_ params: InlayHintRequest.Params) async throws(ResponseError) -> InlayHintRequest.Result {
        let document = try openDocument(params.textDocument.uri)
        let encoding = self.encoding
        let source = SQLSource(bytes: document.bytes)
        let lower = document.offset(of: params.range.start, encoding: encoding)
        let upper = document.offset(of: params.range.end, encoding: encoding)
        let statements = source.statements.filter { $0.range.upperBound >= lower && $0.range.lowerBound <= upper }
        let briefs = await inlineBriefs(document, source, statements)
        return statements.compactMap { statement in
            briefs[source.text(of: statement)].map { brief in
                InlayHintRequest.InlayHint(
                    position: document.position(of: statement.range.upperBound, encoding: encoding), label: brief)
            }
        }
    }

    /// The live briefs of statements of a document, by their SQL; none when
    /// the document has no database.
    func inlineBriefs(_ document: TextDocument, _ source: SQLSource, _ statements: [SQLSource.Statement]) async
        -> [String: String]
    {
        guard !statements.isEmpty, let key = databaseKey(for: document),
            let database = try? await liveDatabase(for: key)
        else { return [:] }
        let checker = try? await checker(for: key)
        let items = statements.map { statement in
            let sql = source.text(of: statement)
            return (sql: sql, reads: Self.onlyReads(source, statement, sql, checker: checker))
        }
        return await inline.briefs(uri: document.uri, statements: items, database: database, reader: reader(for: key))
    }

    /// Whether a statement is one that only reads, as a live query must be
    /// (BEGIN is "read-only" too, for SQLite, hence its first word).
    static func onlyReads(_ source: SQLSource, _ statement: SQLSource.Statement, _ sql: String, checker: SQLChecker?)
        -> Bool
    {
        ["SELECT", "WITH", "VALUES"].contains(source.firstWord(of: statement) ?? "")
            && checker?.isReadOnly(sql) ?? true
    }

    // MARK: - Code lenses

    /// `textDocument/codeLens`: Run (its title carrying the statement's
    /// live result in brief), Watch (for statements that only read) and
    /// Explain over each statement.
    func codeLenses(_ params: CodeLensRequest.Params) async throws(ResponseError) -> CodeLensRequest.Result {
        let document = try openDocument(params.textDocument.uri)
        let encoding = self.encoding
        let source = SQLSource(bytes: document.bytes)
        let checker = try? await checker(for: document)
        let briefs = await inlineBriefs(document, source, source.statements)
        var lenses: [CodeLensRequest.CodeLens] = []
        for statement in source.statements {
            let start = document.position(of: statement.range.lowerBound, encoding: encoding)
            let range = TextRange(start: start, end: start)
            let sql = source.text(of: statement)
            let argument: JSONValue = .object([
                "uri": .string(document.uri), "line": .integer(Int64(start.line)), "sql": .string(sql),
            ])
            let title = briefs[sql].map { "▶ Run  \($0)" } ?? "▶ Run"
            lenses.append(
                .init(range: range, command: Command(title: title, command: "sqlive.run", arguments: [argument])))
            if Self.onlyReads(source, statement, sql, checker: checker) {
                lenses.append(
                    .init(
                        range: range, command: Command(title: "Watch", command: "sqlive.watch", arguments: [argument])))
            }
            lenses.append(
                .init(
                    range: range, command: Command(title: "Explain", command: "sqlive.explain", arguments: [argument])))
        }
        return lenses
    }

    /// An open document, or -32602 naming it.
    func openDocument(_ uri: String) throws(ResponseError) -> TextDocument {
        guard let document = document(uri) else {
            throw .invalidParams("no open document \(uri): send textDocument/didOpen first", field: "textDocument.uri")
        }
        return document
    }
}
