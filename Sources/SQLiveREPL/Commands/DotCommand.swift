/// A parsed dot-command.
///
/// ```swift
/// let command = try DotCommand.parse(".watch --diff leaders SELECT name FROM players")
/// // .watch(name: "leaders", sql: "SELECT name FROM players", diff: true, replace: false)
/// ```
public enum DotCommand: Hashable, Sendable {
    public enum TraceMode: String, Hashable, Sendable, CaseIterable {
        case on, profile, off
    }

    /// How `.import` splits a file: `--csv` (`,` and LF, quotes), `--ascii`
    /// (0x1F and 0x1E, no quotes), sqlive's `--tsv` (tabs and LF, quotes);
    /// `nil` in the command: from the output mode's separators, as sqlite3.
    public enum ImportFormat: String, Hashable, Sendable {
        case csv, tsv, ascii
    }

    case open(path: String, readonly: Bool)
    case watch(
        name: String, sql: String, diff: Bool, replace: Bool, changes: Bool = false, maxRows: Int? = nil)
    case pause(String)
    case resume(String)
    /// Drops one live query, or every one (`nil`, from `--all`).
    case unwatch(String?)
    case watches
    /// `.web [[HOST:]PORT]`: serve the session as the live page; `.web off`.
    case web(String?)
    case webOff
    /// `.feed [TABLE...]` (every table when none is named), or `.feed off` (`nil`).
    case feed([String]?)
    case wait(name: String?, timeout: Duration)
    case explain(sql: String, bytecode: Bool, advise: Bool = false)
    case trace(TraceMode)
    /// `.trace ?OPTIONS? ?FILE?`, the sqlite3 shell's form: SQLite's own
    /// trace of the session's connection.
    case shellTrace(ShellTraceRequest)
    /// `.stats on|off|stmt|vmstep` (sqlite3 keeps a byte: 0 off, 2 stmt,
    /// 3 vmstep, anything else on), or `.stats` alone (`nil`): the
    /// statistics now.
    case stats(UInt8?)
    /// `.log FILE|stdout|stderr|off`: SQLite's error log.
    case log(String)
    /// `.nonce STRING`: safe mode is off for the next command if STRING
    /// is the `-nonce` given.
    case nonce(String)
    case timer(Bool)
    /// `.panel on|off`: the live panel (interactive sessions).
    case panel(Bool)
    /// Sets the mode, or shows it (`mode` `nil`).
    case mode(ModeRequest)
    case headers(Bool)
    case nullValue(String)
    /// `.separator COL ?ROW?`; `extra`: more arguments were given (sqlite3
    /// sets the separators, then fails).
    case separator(column: String, row: String?, extra: Bool)
    /// `.width N...`.
    case width([Int])
    /// `.show`.
    case show
    /// `.explain on|off|auto` (sqlive's `.explain SQL` is `explain`).
    case explainSetting(ExplainSetting)
    /// A warning for standard error (sqlite3's "Not a boolean value"), then the command.
    indirect case warning(String, then: DotCommand)
    case tables(pattern: String?)
    case schema(pattern: String?, noSystemTables: Bool = false)
    case read(String)
    /// Loads a file into a table; `format` `nil` follows the output mode
    /// (tabs for `.mode tabs`, CSV otherwise).
    case importFile(path: String, table: String, format: ImportFormat?, skip: Int, schema: String?, verbose: Int = 0)
    /// Dumps the tables (and indexes, triggers, views) matching the LIKE
    /// patterns, or everything.
    case dump(patterns: [String], options: DumpOptions = DumpOptions())
    /// `.lint SUBCOMMAND [SWITCHES]`, with the command's name as typed
    /// (sqlite3's usage lines repeat it).
    case lint(command: String, arguments: [String])
    /// Sends results to a file (`nil`: back to standard output); with
    /// `once`, for the next command only.
    case output(path: String?, once: Bool)
    case indexes(pattern: String?)
    case changes(Bool)
    case print(String)
    /// `.shell CMD ARGS...` or `.system CMD ARGS...`: the words, run by
    /// `/bin/sh` (`system(3)`), as sqlite3 runs them.
    case system([String])
    case help(String?)
    case quit
    /// A lone `.`: nothing, as in sqlite3.
    case none
    /// `.echo on|off`: print each command before it runs.
    case echo(Bool)
    /// `.bail on|off`: stop at the first error.
    case bail(Bool)
    /// `.prompt MAIN CONTINUE`: the prompts of an interactive session.
    case prompt(main: String?, continuation: String?)
    /// `.timeout MS`: the session's busy timeout.
    case timeout(milliseconds: Int)
    /// `.databases`: the databases of the session's connection.
    case databases
    /// `.cd DIRECTORY`: the working directory.
    case changeDirectory(String)
    /// `.fullschema [--indent]`.
    case fullSchema
    /// `.limits [NAME [VALUE]]`: SQLite's run-time limits (`sqlite3_limit`).
    case limits(name: String?, value: Int64?)
    /// `.parameter` and its arguments (`Session+Parameters`).
    case parameter([String])
    /// `.backup ?DB? FILE` (and `.save`): copies a database into FILE.
    case backup(schema: String, path: String)
    /// `.restore ?DB? FILE`: replaces a database with FILE's.
    case restore(schema: String, path: String)
    case exit(Int32)

    /// A dot-command that could not be parsed; `description` tells why.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
        /// Whether the text prints as it is (sqlite3 words some errors
        /// without its `Error: `), rather than after `Error: `.
        public var verbatim = false

        /// Whether the text goes where results go, with the command's help
        /// (sqlite3's `.import` and `.output` report their usage so).
        public var onOutput = false

        public init(description: String, verbatim: Bool = false, onOutput: Bool = false) {
            self.description = description
            self.verbatim = verbatim
            self.onOutput = onOutput
        }
    }

    /// The default time `.wait` waits.
    public static let defaultWaitTimeout = Duration.seconds(10)
    /// The longest time `.wait` may be asked to wait: a year.
    public static let maximumWaitSeconds = 31_536_000.0

    /// Parses a dot-command line (starting with `.`).
    public static func parse(_ line: String) throws(ParseError) -> DotCommand {
        let trimmed = line.drop { $0.isWhitespace }
        let text = String(trimmed)
        guard text.hasPrefix(".") else { throw ParseError(description: "missing command name after '.'") }
        // The name is the first token after the dot, quoted or not, as in sqlite3.
        let tokens = CommandLineTokens(text, from: text.index(after: text.startIndex)).tokens
        guard let first = tokens.first else { return .none }
        var name = first.text.lowercased()
        // sqlite3's other spelling.
        if name == "indices" { name = "indexes" }
        let arguments = tokens.dropFirst().map(\.text)
        guard let spec = DotCommandHelp.spec(named: name) else {
            throw ParseError(
                description: "unknown command or invalid arguments:  \"\(first.text)\". Enter \".help\" for help")
        }
        let usage = ParseError(description: "Usage: \(spec.usage)")
        if let output = try parseOutput(name: spec.name, tokens: tokens) { return output }
        if let diagnostic = try parseDiagnostics(name: spec.name, arguments: arguments) { return diagnostic }

        switch spec.name {
        case "shell", "system":
            // sqlite3 names .system in both usages.
            guard !arguments.isEmpty else { throw ParseError(description: "Usage: .system COMMAND") }
            return .system(arguments)

        case "open":
            var readonly = false
            var path: String?
            for argument in arguments {
                if argument == "--readonly" {
                    readonly = true
                } else if path == nil && !argument.hasPrefix("--") {
                    path = argument
                } else {
                    throw usage
                }
            }
            guard let path else { throw usage }
            return .open(path: path, readonly: readonly)

        case "watch":
            var diff = false
            var replace = false
            var changes = false
            var maxRows: Int?
            var index = 1
            while index < tokens.count, tokens[index].text.hasPrefix("--") {
                switch tokens[index].text {
                case "--diff": diff = true
                case "--changes": changes = true
                case "--replace": replace = true
                case "--max-rows":
                    index += 1
                    guard index < tokens.count, let count = Int(tokens[index].text), count >= 1 else {
                        throw ParseError(description: "--max-rows takes a number of rows, 1 or more")
                    }
                    maxRows = count
                default: throw usage
                }
                index += 1
            }
            guard !(diff && changes) else { throw ParseError(description: "--diff and --changes cannot go together") }
            guard index < tokens.count else { throw usage }
            let name = tokens[index].text
            let sql = trimmedSQL(text[tokens[index].end...])
            guard !sql.isEmpty else { throw usage }
            return .watch(name: name, sql: sql, diff: diff, replace: replace, changes: changes, maxRows: maxRows)

        case "pause", "resume":
            guard arguments.count == 1 else { throw usage }
            return spec.name == "pause" ? .pause(arguments[0]) : .resume(arguments[0])

        case "unwatch":
            guard arguments.count == 1 else { throw usage }
            return .unwatch(arguments[0] == "--all" ? nil : arguments[0])

        case "watches":
            guard arguments.isEmpty else { throw usage }
            return .watches

        case "web":
            guard arguments.count <= 1 else { throw usage }
            if arguments == ["off"] { return .webOff }
            return .web(arguments.first)

        case "feed":
            if arguments == ["off"] { return .feed(nil) }
            guard !arguments.contains("off") else { throw usage }
            return .feed(arguments)

        case "wait":
            var name: String?
            var timeout = defaultWaitTimeout
            var rest = arguments[...]
            while let argument = rest.popFirst() {
                if argument == "--timeout" {
                    guard let value = rest.popFirst(), let seconds = Double(value) else { throw usage }
                    guard seconds >= 0, seconds <= maximumWaitSeconds else {
                        throw ParseError(
                            description:
                                "--timeout must be between 0 and \(Int(maximumWaitSeconds)) seconds (a year), not \(value)"
                        )
                    }
                    timeout = .milliseconds(Int64((seconds * 1000).rounded()))
                } else if name == nil && !argument.hasPrefix("--") {
                    name = argument
                } else {
                    throw usage
                }
            }
            return .wait(name: name, timeout: timeout)

        case "explain":
            var index = 1
            var bytecode = false
            var advise = false
            while index < tokens.count, ["--bytecode", "--advise"].contains(tokens[index].text) {
                if tokens[index].text == "--bytecode" { bytecode = true } else { advise = true }
                index += 1
            }
            let start = index - 1
            let sql = trimmedSQL(text[tokens[start].end...])
            guard !sql.isEmpty, !(bytecode && advise) else { throw usage }
            return .explain(sql: sql, bytecode: bytecode, advise: advise)

        case "timer", "panel":
            guard arguments.count == 1, let flag = onOff(arguments[0]) else { throw usage }
            return spec.name == "timer" ? .timer(flag) : .panel(flag)

        case "tables":
            // Extra arguments are ignored, as in sqlite3.
            return .tables(pattern: arguments.first)

        case "schema":
            var pattern: String?
            var noSystemTables = false
            for argument in arguments {
                if ["--nosys", "-nosys"].contains(argument) {
                    noSystemTables = true
                    continue
                }
                if ["--indent", "-indent"].contains(argument) { continue }
                if argument.hasPrefix("-") {
                    throw ParseError(description: "Unknown option: \"\(argument)\"", verbatim: true)
                }
                guard pattern == nil else { throw usage }
                pattern = argument
            }
            return .schema(pattern: pattern, noSystemTables: noSystemTables)

        case "read":
            guard arguments.count == 1 else { throw usage }
            return .read(arguments[0])

        case "echo", "bail":
            guard arguments.count == 1 else { throw usage }
            let flag = booleanValue(arguments[0]).value != 0
            return spec.name == "echo" ? .echo(flag) : .bail(flag)

        case "prompt":
            return .prompt(main: arguments.first, continuation: arguments.dropFirst().first)

        case "timeout":
            return .timeout(milliseconds: arguments.first.map { Int(clamping: integerValue($0)) } ?? 0)

        case "databases":
            return .databases

        case "fullschema":
            guard arguments.isEmpty || (arguments.count == 1 && ["-indent", "--indent"].contains(arguments[0])) else {
                throw ParseError(description: "Usage: .fullschema ?--indent?", verbatim: true)
            }
            return .fullSchema

        case "binary":
            // Windows' binary output; nothing to do on Linux, as in sqlite3.
            guard arguments.count == 1 else { throw usage }
            return booleanValue(arguments[0]).warning.map { .warning($0, then: .none) } ?? .none

        case "limits":
            guard arguments.count <= 2 else {
                throw ParseError(description: "Usage: .limit NAME ?NEW-VALUE?", verbatim: true)
            }
            return .limits(name: arguments.first, value: arguments.dropFirst().first.map(integerValue))

        case "cd":
            guard arguments.count == 1 else {
                throw ParseError(description: "Usage: .cd DIRECTORY", verbatim: true)
            }
            return .changeDirectory(arguments[0])

        case "parameter":
            return .parameter(arguments)

        case "backup", "save":
            var path: String?
            var schema: String?
            for argument in arguments {
                if argument.hasPrefix("-") {
                    let option = argument.hasPrefix("--") ? String(argument.dropFirst()) : argument
                    guard option == "-async" else {
                        throw ParseError(description: "unknown option: \(argument)", verbatim: true)
                    }
                } else if path == nil {
                    path = argument
                } else if schema == nil {
                    schema = path
                    path = argument
                } else {
                    throw usage
                }
            }
            guard let path else {
                throw ParseError(description: "missing FILENAME argument on .backup", verbatim: true)
            }
            return .backup(schema: schema ?? "main", path: path)

        case "restore":
            switch arguments.count {
            case 1: return .restore(schema: "main", path: arguments[0])
            case 2: return .restore(schema: arguments[0], path: arguments[1])
            default: throw usage
            }

        case "import":
            // As sqlite3 3.40.1 reads it, its usage errors on the output.
            func failure(_ text: String) -> ParseError {
                ParseError(description: text + "\n" + DotCommandHelp.shellHelp["import"]!, onOutput: true)
            }
            var format: ImportFormat?
            var skip = 0
            var schema: String?
            var verbose = 0
            var operands: [String] = []
            var rest = arguments[...]
            while let argument = rest.popFirst() {
                // As in sqlite3, one dash or two.
                let option = argument.hasPrefix("--") ? String(argument.dropFirst()) : argument
                guard option.hasPrefix("-") else {
                    guard operands.count < 2 else { throw failure("ERROR: extra argument: \"\(option)\".  Usage:") }
                    operands.append(option)
                    continue
                }
                switch option {
                case "-csv": format = .csv
                case "-ascii": format = .ascii
                case "-tsv": format = .tsv
                case "-v": verbose += 1
                case "-skip" where !rest.isEmpty: skip = Int(clamping: max(0, integerValue(rest.removeFirst())))
                case "-schema" where !rest.isEmpty: schema = rest.removeFirst()
                default: throw failure("ERROR: unknown option: \"\(option)\".  Usage:")
                }
            }
            guard operands.count == 2 else {
                throw failure("ERROR: missing \(operands.isEmpty ? "FILE" : "TABLE") argument. Usage:")
            }
            return .importFile(
                path: operands[0], table: operands[1], format: format, skip: skip, schema: schema, verbose: verbose)

        case "dump":
            var options = DumpOptions()
            var patterns: [String] = []
            for argument in arguments {
                guard argument.hasPrefix("-") else {
                    patterns.append(argument)
                    continue
                }
                // As in sqlite3, one dash or two.
                let option = argument.hasPrefix("--") ? argument.dropFirst(2) : argument.dropFirst()
                switch option {
                case "preserve-rowids": options.preserveRowids = true
                case "newlines": options.newlines = true
                case "data-only": options.dataOnly = true
                case "nosys": options.noSystemTables = true
                default: throw ParseError(description: "Unknown option \"\(argument)\" on \".dump\"")
                }
            }
            return .dump(patterns: patterns, options: options)

        case "lint":
            return .lint(command: first.text, arguments: arguments)

        case "output", "once":
            // As sqlite3 3.40.1 reads it, its usage errors on the output.
            func failure(_ text: String) -> ParseError {
                ParseError(description: text + "\n" + DotCommandHelp.shellHelp[spec.name]!, onOutput: true)
            }
            var path: String?
            var rest = arguments[...]
            while let argument = rest.popFirst() {
                if argument.hasPrefix("-") {
                    throw failure("ERROR: unknown option: \"\(argument)\".  Usage:")
                }
                guard path == nil else { throw failure("ERROR: extra parameter: \"\(argument)\".  Usage:") }
                path = argument
                // A pipe, `|sort -r`: the rest of the line is its command.
                if argument.hasPrefix("|") {
                    path = ([argument] + rest).joined(separator: " ")
                    break
                }
            }
            return .output(path: path.flatMap { $0 == "stdout" ? nil : $0 }, once: spec.name == "once")

        case "indexes":
            guard arguments.count <= 1 else { throw usage }
            return .indexes(pattern: arguments.first)

        case "quit":
            // Extra arguments are ignored, as in sqlite3.
            return .quit

        case "changes":
            guard arguments.count == 1, let flag = onOff(arguments[0]) else { throw usage }
            return .changes(flag)

        case "help":
            guard arguments.count <= 1 else { throw usage }
            return .help(arguments.first.map { $0.hasPrefix(".") ? String($0.dropFirst()) : $0 })

        case "exit":
            guard arguments.count <= 1 else { throw usage }
            guard let argument = arguments.first else { return .exit(0) }
            guard let code = Int32(argument), (0...255).contains(code) else {
                throw ParseError(description: "an exit code is a number from 0 to 255, not \(argument)")
            }
            return .exit(code)

        default:
            throw usage
        }
    }

    private static func onOff(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "on", "yes", "true", "1": true
        case "off", "no", "false", "0": false
        default: nil
        }
    }

    /// The SQL at the end of a command line, without surrounding spaces and trailing semicolons.
    private static func trimmedSQL(_ text: Substring) -> String {
        var sql = text.drop { $0.isWhitespace }
        while let last = sql.last, last.isWhitespace || last == ";" { sql = sql.dropLast() }
        return String(sql)
    }
}
