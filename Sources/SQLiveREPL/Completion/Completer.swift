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
    /// Lists a directory: names and whether each is a directory.
    public var listDirectory: @Sendable (String) -> [(name: String, isDirectory: Bool)]

    public init(
        schema: CompletionSchema, liveQueryNames: [String] = [],
        listDirectory: @escaping @Sendable (String) -> [(name: String, isDirectory: Bool)] = Completer.list
    ) {
        self.schema = schema
        self.liveQueryNames = liveQueryNames
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
            return options(OutputMode.allCases.map(\.rawValue))
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

    private func completeSQL(text: String, head: Substring, word: String) -> [String] {
        let identifiers = Self.identifiers(in: text.dropLast(word.count))
        let aliases = aliasMap(identifiers)

        if let dot = word.lastIndex(of: ".") {
            let qualifier = String(word[..<dot])
            let prefix = String(word[word.index(after: dot)...])
            let table = aliases[qualifier.lowercased()] ?? schema.relation(named: qualifier)
            guard let table else { return [] }
            return Self.matching(table.columns.map(Self.quotedIfNeeded), prefix).map { qualifier + "." + $0 }
        }

        let previous = identifiers.last?.uppercased()
        let relationNames = schema.relations.map { Self.quotedIfNeeded($0.name) }
        if let previous, SQLKeywords.relationContext.contains(previous), previous != "ON" {
            return Self.matching(relationNames, word)
        }
        var mentioned: [CompletionSchema.Relation] = []
        for identifier in identifiers {
            if let relation = schema.relation(named: identifier), !mentioned.contains(relation) {
                mentioned.append(relation)
            }
        }
        let lowercase = !word.isEmpty && word == word.lowercased() && word != word.uppercased()
        let keywords = lowercase ? SQLKeywords.keywords.map { $0.lowercased() } : SQLKeywords.keywords
        let columns = mentioned.flatMap(\.columns).map(Self.quotedIfNeeded)
        var candidates = Self.matching(columns, word) + Self.matching(relationNames, word)
        if !word.isEmpty {
            candidates += Self.matching(keywords, word) + Self.matching(SQLKeywords.functions, word)
        }
        var seen = Set<String>()
        return candidates.filter { seen.insert($0).inserted }.sorted()
    }

    /// Aliases of the statement: `players p`, `players AS p`.
    private func aliasMap(_ identifiers: [String]) -> [String: CompletionSchema.Relation] {
        var aliases: [String: CompletionSchema.Relation] = [:]
        for (index, identifier) in identifiers.enumerated() {
            guard let relation = schema.relation(named: identifier) else { continue }
            var next = index + 1
            if next < identifiers.count, identifiers[next].uppercased() == "AS" { next += 1 }
            if next < identifiers.count, !SQLKeywords.keywordSet.contains(identifiers[next].uppercased()) {
                aliases[identifiers[next].lowercased()] = relation
            }
        }
        return aliases
    }

    /// The identifiers and keywords of SQL text, in order (strings and comments skipped).
    static func identifiers(in text: Substring) -> [String] {
        var result: [String] = []
        var current = ""
        var quote: Character?
        for character in text {
            if let open = quote {
                if character == open {
                    if open == "\"" || open == "`" || open == "]" { result.append(current) }
                    current = ""
                    quote = nil
                } else {
                    current.append(character)
                }
                continue
            }
            if character.isLetter || character.isNumber || character == "_" {
                current.append(character)
                continue
            }
            if !current.isEmpty, !(current.first?.isNumber ?? false) { result.append(current) }
            current = ""
            switch character {
            case "'", "\"", "`": quote = character
            case "[": quote = "]"
            default: break
            }
        }
        if !current.isEmpty, quote == nil, !(current.first?.isNumber ?? false) { result.append(current) }
        return result
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
