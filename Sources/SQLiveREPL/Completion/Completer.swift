import Foundation
import SQLiveEngine

/// Schema-aware Tab completion, as a pure value.
///
/// Given the text before the cursor (every line of the statement being
/// typed), it proposes replacements for the word under the cursor:
/// dot-commands and their arguments, SQL keywords and functions, table and
/// view names, columns of the tables the statement names (`alias.column`
/// too), live query names after `.unwatch`, `.wait`, `.pause` and
/// `.resume`, file paths after `.open`, `.read`, `.import`, `.output` and
/// `.once`, table names after `.dump`, `.indexes` and `.import FILE`.
///
/// ```swift
/// let completer = Completer(schema: schema, liveQueryNames: ["leaders"])
/// completer.complete(before: "SELECT * FROM pl").candidates   // ["players"]
/// ```
public struct Completer: Sendable {
    /// The proposals for one Tab.
    public struct Completions: Hashable, Sendable {
        /// Full replacements of the word, sorted, without duplicates.
        public var candidates: [String]
        /// Whether a space should follow a single candidate (not after a directory).
        public var appendSpace: Bool = true
    }

    /// Characters that end a word, as readline is told.
    public static let wordBreakCharacters = " \t\n\"'`@$><=;|&{(,)"

    public var schema: CompletionSchema
    public var liveQueryNames: [String]
    /// The columns of a CTE's or a subquery's SQL, as SQLite prepares it
    /// (`SQLChecker.columnNames(of:)`); `nil` when unknown.
    public var columnNames: @Sendable (String) -> [String]?
    /// Lists a directory: names and whether each is a directory.
    public var listDirectory: @Sendable (String) -> [(name: String, isDirectory: Bool)]

    public init(
        schema: CompletionSchema, liveQueryNames: [String] = [],
        columnNames: @escaping @Sendable (String) -> [String]? = { _ in nil },
        listDirectory: @escaping @Sendable (String) -> [(name: String, isDirectory: Bool)] = Completer.list
    ) {
        self.schema = schema
        self.liveQueryNames = liveQueryNames
        self.columnNames = columnNames
        self.listDirectory = listDirectory
    }

    /// The word under the cursor: the text after the last word-break character.
    public static func word(before text: String) -> Substring {
        let start = text.lastIndex { wordBreakCharacters.contains($0) }.map { text.index(after: $0) } ?? text.startIndex
        return text[start...]
    }

    /// The proposals for the word ending `before`.
    public func complete(before text: String) -> Completions {
        let word = Self.word(before: text)
        let head = text[..<word.startIndex]
        let leading = text.drop { $0 == " " || $0 == "\t" }
        if leading.hasPrefix(".") && !text.contains("\n") {
            return completeDotCommand(head: head.drop { $0 == " " || $0 == "\t" }, word: String(word))
        }
        return Completions(candidates: completeSQL(text: text, head: head, word: String(word)))
    }

    // MARK: - Dot-commands

    private func completeDotCommand(head: Substring, word: String) -> Completions {
        let tokens = head.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let first = tokens.first else {
            return Completions(candidates: Self.matching(DotCommandHelp.all.map { "." + $0.name }, word))
        }
        guard let spec = DotCommandHelp.spec(named: String(first.dropFirst()).lowercased()) else {
            return Completions(candidates: [])
        }
        let arguments = Array(tokens.dropFirst())
        let options = { (names: [String]) in Completions(candidates: Self.matching(names, word)) }
        switch spec.name {
        case "open", "read", "output", "once":
            if word.hasPrefix("-") { return options(spec.name == "open" ? ["--readonly"] : []) }
            return completePath(word)
        case "import":
            if word.hasPrefix("-") { return options(["--csv", "--tsv", "--skip", "--schema"]) }
            if let last = arguments.last, ["--skip", "-skip", "--schema", "-schema"].contains(last) {
                return options([])
            }
            // FILE, then TABLE.
            let operands = arguments.enumerated().filter { index, argument in
                !argument.hasPrefix("-")
                    && !(index > 0 && ["--skip", "-skip", "--schema", "-schema"].contains(arguments[index - 1]))
            }
            return operands.isEmpty ? completePath(word) : options(tableArguments)
        case "dump", "indexes":
            return options(tableArguments)
        case "unwatch":
            return arguments.isEmpty ? options(liveQueryNames + ["--all"]) : options([])
        case "wait":
            if arguments.last == "--timeout" { return options([]) }
            return options(liveQueryNames + ["--timeout"])
        case "pause", "resume":
            return arguments.isEmpty ? options(liveQueryNames) : options([])
        case "mode":
            return options(OutputMode.allCases.filter { $0 != .count && $0 != .off }.map(\.rawValue))
        case "headers", "timer", "panel", "changes":
            return options(["on", "off"])
        case "trace":
            return options(DotCommand.TraceMode.allCases.map(\.rawValue))
        case "help":
            return options(DotCommandHelp.all.map(\.name))
        case "schema", "tables":
            return options(schema.relations.map(\.name))
        case "watch":
            let name = arguments.first { !$0.hasPrefix("--") }
            if name == nil {
                return word.hasPrefix("-")
                    ? options(["--changes", "--diff", "--max-rows", "--replace"]) : options(liveQueryNames)
            }
            let sql = Self.textAfter(tokenCount: arguments.prefix { $0.hasPrefix("--") }.count + 2, in: head)
            return Completions(candidates: completeSQL(text: sql + word, head: sql[...], word: word))
        case "explain":
            if word.hasPrefix("-") && arguments.isEmpty { return options(["--bytecode"]) }
            let sql = Self.textAfter(tokenCount: arguments.first == "--bytecode" ? 2 : 1, in: head)
            return Completions(candidates: completeSQL(text: sql + word, head: sql[...], word: word))
        default:
            return options([])
        }
    }

    /// Table names as dot-command arguments: in double quotes when they hold a space.
    private var tableArguments: [String] {
        schema.relations.map { $0.name.contains(where: \.isWhitespace) ? "\"" + $0.name + "\"" : $0.name }
    }

    /// The text after the first `tokenCount` space-separated tokens.
    private static func textAfter(tokenCount: Int, in text: Substring) -> String {
        var rest = text
        for _ in 0..<tokenCount {
            rest = rest.drop { $0 == " " || $0 == "\t" }
            rest = rest.drop { $0 != " " && $0 != "\t" }
        }
        return String(rest)
    }

    private func completePath(_ word: String) -> Completions {
        let expanded = word.hasPrefix("~") ? (word as NSString).expandingTildeInPath : word
        let directory: String
        let prefix: String
        let shown: String
        if let slash = word.lastIndex(of: "/") {
            shown = String(word[...slash])
            prefix = String(word[word.index(after: slash)...])
            let expandedSlash = expanded.lastIndex(of: "/")!
            directory = String(expanded[...expandedSlash])
        } else {
            shown = ""
            prefix = word
            directory = "."
        }
        let entries = listDirectory(directory)
            .filter { $0.name.hasPrefix(prefix) && ($0.name.hasPrefix(".") == prefix.hasPrefix(".")) }
        let candidates = entries.map { shown + $0.name + ($0.isDirectory ? "/" : "") }.sorted()
        let appendSpace = !(candidates.count == 1 && entries[0].isDirectory)
        return Completions(candidates: Array(Set(candidates)).sorted(), appendSpace: appendSpace)
    }

    /// Lists a directory of the file system.
    public static func list(_ directory: String) -> [(name: String, isDirectory: Bool)] {
        let manager = FileManager.default
        guard let names = try? manager.contentsOfDirectory(atPath: directory) else { return [] }
        return names.map { name in
            var isDirectory: ObjCBool = false
            let path = (directory as NSString).appendingPathComponent(name)
            _ = manager.fileExists(atPath: path, isDirectory: &isDirectory)
            return (name, isDirectory.boolValue)
        }
    }

    // MARK: - SQL

    /// The SQL candidates for the word ending `text`, as the language
    /// server finds them (`SQLCompletion`: aliases, CTEs, subqueries), in
    /// the REPL's form: quoted where needed, `qualifier.column` after a
    /// dot, keywords in the case the word is typed in.
    private func completeSQL(text: String, head: Substring, word: String) -> [String] {
        let source = SQLSource(text)
        let end = source.bytes.count
        let start = SQLCompletion.wordStart(in: source.bytes, at: end)
        let typed = String(decoding: source.bytes[start..<end], as: UTF8.self)
        // What the word holds before the name being typed (`p.`, a quote).
        let lead = String(word.dropLast(typed.count))
        let candidates = SQLCompletion.candidates(
            source, wordStart: start, catalog: schema.catalog, functions: schema.functions, columnNames: columnNames)
        let lowercase = !typed.isEmpty && typed == typed.lowercased() && typed != typed.uppercased()
        var names: [String] = []
        for candidate in candidates {
            switch candidate.kind {
            case .keyword:
                // Keywords only once a word is begun (not after a bare `WHERE `).
                guard !typed.isEmpty else { continue }
                names.append(lowercase ? candidate.name.lowercased() : candidate.name)
            case .function:
                guard !typed.isEmpty else { continue }
                names.append(candidate.name)
            default:
                names.append(Self.quotedIfNeeded(candidate.name))
            }
        }
        if lead.hasSuffix(".") {
            return Self.matching(names, typed).map { lead + $0 }
        }
        return Self.matching(names, word)
    }

    static func quotedIfNeeded(_ name: String) -> String {
        SQLToken.quoted(name)
    }

    /// The names that start with the prefix, ignoring case.
    static func matching(_ names: [String], _ prefix: String) -> [String] {
        let lowered = prefix.lowercased()
        var seen = Set<String>()
        return names.filter { name in
            let bare = name.hasPrefix("\"") && !prefix.hasPrefix("\"") ? name.dropFirst() : name[...]
            return bare.lowercased().hasPrefix(lowered) && seen.insert(name).inserted
        }.sorted()
    }
}
