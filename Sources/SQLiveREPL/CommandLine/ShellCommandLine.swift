/// sqlive's command line, read as the sqlite3 shell (3.40.1) reads its own:
/// `sqlive [OPTIONS] [FILENAME [SQL|CMD...]]`.
///
/// Every option of `sqlite3 -help` is accepted with one dash or two, with
/// sqlite3's meaning, wherever it stands (before or after the file name);
/// the first argument that is not an option names the database, and the
/// ones after it are SQL or dot-commands, run in order instead of reading
/// standard input. sqlive's own options keep their names (`--rpc`,
/// `--lsp`, `--mcp`, `--demo`, `-c`, `-f`, `--mode`…).
///
/// Like sqlite3, the options that change how results print (`-header`,
/// `-csv`, `-separator X`…) and `-cmd` take effect in the order given,
/// after the `-init` file (or `~/.sqliterc`) has run: `steps`.
///
/// ```swift
/// let line = try ShellCommandLine.parse(["-header", "games.sqlite", "SELECT 1"])
/// // line.database == "games.sqlite", line.steps == [.headers(true)], line.trailing == ["SELECT 1"]
/// ```
public struct ShellCommandLine: Equatable, Sendable {
    /// Which front end the command line asks for.
    public enum FrontEnd: Equatable, Sendable {
        case session
        /// `--rpc` or `--lsp`.
        case rpc
        /// `--mcp`.
        case mcp
        /// `--web`: the live page.
        case web
        /// `--changes`: the change feed, one JSON line per changed row.
        case changes
    }

    /// What to do instead of a session: `-help`, `-version`.
    public enum Action: Equatable, Sendable {
        case run
        /// `-help`: the usage text on standard error, exit 1 (as sqlite3).
        case help
        /// `-version`: SQLite's version and source id, exit 0.
        case version
        /// `--sqlive-version`: sqlive's own version (for packaging).
        case sqliveVersion
    }

    /// A setting or command applied, in order, before the session's input.
    public enum Step: Equatable, Sendable {
        /// `-csv`, `-line`…: the mode's name, as `.mode` takes it.
        case mode(String)
        case headers(Bool)
        case separator(String)
        /// `-newline SEP`: the row separator.
        case newline(String)
        case nullValue(String)
        case echo(Bool)
        /// `-eqp` and `-eqpfull`.
        case eqp(full: Bool)
        /// `-cmd COMMAND`: SQL or a dot-command.
        case command(String)
    }

    public var action = Action.run
    public var frontEnd = FrontEnd.session
    /// The database's path or URI; `nil` opens an in-memory database.
    public var database: String?
    /// SQL and dot-commands after the database name: run in order, and
    /// standard input is not read.
    public var trailing: [String] = []
    public var steps: [Step] = []
    /// `-init FILE`: run before the steps (instead of `~/.sqliterc`).
    public var initFile: String?
    /// `-interactive` (true) or `-batch` (false); `nil`: whether standard
    /// input is a terminal.
    public var interactive: Bool?
    public var readonly = false
    public var bail = false
    /// `-nofollow`: refuse a database path that is a symbolic link.
    public var noFollow = false
    /// `-vfs NAME`: the VFS SQLite must have.
    public var vfs: String?
    /// `-stats`: sqlite3's statistics after each statement (`.stats on`),
    /// SQLite's memory counted from the start.
    public var stats = false
    /// `-safe`: sqlite3's safe mode.
    public var safe = false
    /// `-nonce STRING`: what `.nonce` must say to lift safe mode for a command.
    public var nonce: String?

    // sqlive's own options.
    /// `-c TEXT`, in order (scripted).
    public var commands: [String] = []
    /// `-f FILE` (scripted).
    public var file: String?
    /// `--mode MODE`: the initial mode.
    public var mode: String?
    public var demo = false
    /// `--mcp`: let the agent write.
    public var allowWrites = false
    /// `--mcp --http [HOST:]PORT`: MCP over HTTP instead of stdio.
    public var httpAddress: String?
    /// `--token-file PATH`: the HTTP transport's bearer token, read from a
    /// file instead of made up and printed.
    public var tokenFile: String?
    /// `--mcp`'s limits.
    public var timeLimit = 10.0
    public var maxRows = 1000
    public var maxBytes = 4 << 20
    /// `--changes --table NAME`, in order: the tables the feed reports
    /// (none: every table).
    public var changeTables: [String] = []
    /// `--max-sessions N` (with `--mcp --http`): the most MCP sessions at
    /// once; nil when not given (256).
    public var maxSessions: Int?
    /// `--session-idle SECONDS` (with `--mcp --http`): how long an MCP
    /// session may idle before it ends; nil when not given (600).
    public var sessionIdle: Double?
    /// `--http-timeout SECONDS` (with `--mcp --http` or `--web`): how long
    /// a connection may keep a request unfinished; nil when not given (10).
    public var httpTimeout: Double?
    /// `--refresh-budget SECONDS`: how long a live query's refresh may run
    /// (0: no limit); nil when not given (the engine's 30 s).
    public var refreshBudget: Double?

    /// The refresh budget asked for, as the engine takes it: `.some(nil)`
    /// for no limit, nil when not given.
    public var refreshBudgetDuration: Duration?? {
        guard let refreshBudget else { return nil }
        return .some(refreshBudget == 0 ? nil : .milliseconds(Int64(refreshBudget * 1000)))
    }

    public init() {}

    /// Why a command line cannot run; `message` is what sqlite3 would say
    /// (after the program's name), and the exit status is 1.
    public struct Failure: Error, Equatable, Sendable {
        public var message: String
        /// Whether `Use -help for a list of options.` follows.
        public var suggestsHelp: Bool

        public init(message: String, suggestsHelp: Bool) {
            self.message = message
            self.suggestsHelp = suggestsHelp
        }
    }

    /// sqlite3's options that take no argument: the mode options, and those
    /// with no effect here but accepted as sqlite3 accepts them.
    static let modeOptions: Set<String> = [
        "html", "list", "quote", "line", "column", "json", "markdown", "table", "box", "csv", "ascii", "tabs",
    ]

    /// sqlite3's options that change only how its own build allocates or
    /// reports memory: accepted, with no effect on sqlive (the argument
    /// counts they take).
    static let ignoredOptions: [String: Int] = [
        "scanstats": 0, "memtrace": 0, "heap": 1, "mmap": 1, "pagecache": 2, "lookaside": 2,
        "threadsafe": 1, "backslash": 0,
    ]

    /// sqlite3's options sqlive refuses, with the reason.
    static let unsupportedOptions: [String: String] = [
        "append": "appending a database to another file (the append VFS) is not supported",
        "deserialize": "opening a database with sqlite3_deserialize() is not supported",
        "maxsize": "opening a database with sqlite3_deserialize() is not supported",
        "zip": "ZIP archives are not supported",
        "A": ".archive is not supported",
    ]

    /// Whether an argument is `PORT`, `HOST:PORT` or `[IPv6]:PORT` (what
    /// `--web` may take), not a database's name.
    static func looksLikeAddress(_ text: String) -> Bool {
        var port = Substring(text)
        if let colon = text.lastIndex(of: ":") {
            let host = text[..<colon]
            port = text[text.index(after: colon)...]
            let bracketed = host.hasPrefix("[") && host.hasSuffix("]")
            guard !host.isEmpty, bracketed || host.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" })
            else { return false }
        }
        return !port.isEmpty && port.count <= 5 && port.allSatisfy(\.isASCII) && port.allSatisfy(\.isNumber)
    }

    /// Reads the arguments after the program's name.
    public static func parse(_ arguments: [String]) throws(Failure) -> ShellCommandLine {
        var line = ShellCommandLine()
        // With `--changes`, `--table NAME` names a table for the feed; else
        // `-table` is sqlite3's output mode.
        let feed = arguments.contains { $0 == "--changes" || $0 == "-changes" }
        var index = 0
        func value(_ option: String) throws(Failure) -> String {
            index += 1
            guard index < arguments.count else {
                throw Failure(message: "missing argument to \(option)", suggestsHelp: false)
            }
            return arguments[index]
        }
        while index < arguments.count {
            defer { index += 1 }
            let argument = arguments[index]
            guard argument.hasPrefix("-"), argument.count > 1 else {
                if line.database == nil && line.action == .run {
                    line.database = argument
                } else {
                    line.trailing.append(argument)
                }
                continue
            }
            // sqlite3 reads `--x` as `-x`; sqlive's own long options and
            // `--name=value` forms are read first.
            var option = argument.hasPrefix("--") ? String(argument.dropFirst(2)) : String(argument.dropFirst())
            var attached: String?
            if argument.hasPrefix("--"), let equals = option.firstIndex(of: "=") {
                attached = String(option[option.index(after: equals)...])
                option = String(option[..<equals])
            }
            func argumentValue() throws(Failure) -> String {
                if let attached { return attached }
                return try value(argument)
            }
            if attached != nil
                && ![
                    "mode", "time-limit", "max-rows", "max-bytes", "command", "file", "refresh-budget", "http",
                    "token-file", "web", "max-sessions", "session-idle", "http-timeout",
                ].contains(option)
                && !(feed && option == "table")
            {
                throw Failure(message: "unknown option: \(argument)", suggestsHelp: true)
            }
            switch option {
            // sqlive's own.
            case "rpc", "lsp": line.frontEnd = .rpc
            case "mcp": line.frontEnd = .mcp
            case "web":
                line.frontEnd = .web
                // An address may follow: [HOST:]PORT.
                if let attached {
                    line.httpAddress = attached
                } else if index + 1 < arguments.count, Self.looksLikeAddress(arguments[index + 1]) {
                    index += 1
                    line.httpAddress = arguments[index]
                }
            case "changes": line.frontEnd = .changes
            case "table" where feed: line.changeTables.append(try argumentValue())
            case "demo": line.demo = true
            case "allow-writes": line.allowWrites = true
            case "c", "command": line.commands.append(try argumentValue())
            case "f", "file": line.file = try argumentValue()
            case "mode": line.mode = try argumentValue()
            case "time-limit":
                let text = try argumentValue()
                guard let seconds = Double(text) else { throw invalid(text, for: argument) }
                line.timeLimit = seconds
            case "refresh-budget":
                let text = try argumentValue()
                guard let seconds = Double(text) else { throw invalid(text, for: argument) }
                line.refreshBudget = seconds
            case "max-rows":
                let text = try argumentValue()
                guard let count = Int(text) else { throw invalid(text, for: argument) }
                line.maxRows = count
            case "max-bytes":
                let text = try argumentValue()
                guard let count = Int(text) else { throw invalid(text, for: argument) }
                line.maxBytes = count
            case "http": line.httpAddress = try argumentValue()
            case "token-file": line.tokenFile = try argumentValue()
            case "max-sessions":
                let text = try argumentValue()
                guard let count = Int(text) else { throw invalid(text, for: argument) }
                line.maxSessions = count
            case "session-idle":
                let text = try argumentValue()
                guard let seconds = Double(text) else { throw invalid(text, for: argument) }
                line.sessionIdle = seconds
            case "http-timeout":
                let text = try argumentValue()
                guard let seconds = Double(text) else { throw invalid(text, for: argument) }
                line.httpTimeout = seconds
            case "sqlive-version": line.action = .sqliveVersion
            // sqlite3's.
            case "help":
                // sqlite3 prints the usage as it meets -help in its second
                // pass; an unknown option before it wins (below, in order).
                if line.action == .run { line.action = .help }
            case "version":
                if line.action == .run { line.action = .version }
            case "init": line.initFile = try value(argument)
            case "interactive": line.interactive = true
            case "batch": line.interactive = false
            case "readonly": line.readonly = true
            case "bail": line.bail = true
            case "nofollow": line.noFollow = true
            case "vfs": line.vfs = try value(argument)
            case "stats": line.stats = true
            case "safe": line.safe = true
            case "nonce": line.nonce = try value(argument)
            case "header": line.steps.append(.headers(true))
            case "noheader": line.steps.append(.headers(false))
            case "echo": line.steps.append(.echo(true))
            case "eqp": line.steps.append(.eqp(full: false))
            case "eqpfull": line.steps.append(.eqp(full: true))
            case "separator": line.steps.append(.separator(try value(argument)))
            case "newline": line.steps.append(.newline(try value(argument)))
            case "nullvalue": line.steps.append(.nullValue(try value(argument)))
            case "cmd": line.steps.append(.command(try value(argument)))
            case _ where modeOptions.contains(option): line.steps.append(.mode(option))
            case _ where ignoredOptions[option] != nil:
                for _ in 0..<ignoredOptions[option]! { _ = try value(argument) }
            case _ where unsupportedOptions[option] != nil || option.hasPrefix("A"):
                throw Failure(
                    message: "\(argument): \(unsupportedOptions[option] ?? unsupportedOptions["A"]!)",
                    suggestsHelp: false)
            default:
                throw Failure(message: "unknown option: \(argument)", suggestsHelp: true)
            }
        }
        return line
    }

    private static func invalid(_ text: String, for option: String) -> Failure {
        Failure(message: "invalid value for \(option): \(text)", suggestsHelp: false)
    }

    /// Whether the session reads commands from `-c`, `-f` or the trailing
    /// arguments rather than standard input.
    public var hasScriptArguments: Bool { !commands.isEmpty || file != nil || !trailing.isEmpty }

    /// The checks that concern sqlive's own options, in the words sqlive
    /// used before; `nil` when the combination runs.
    public func conflict() -> String? {
        if frontEnd == .rpc && (!commands.isEmpty || file != nil || !trailing.isEmpty) {
            return "--rpc cannot be combined with -c, -f or SQL arguments"
        }
        if frontEnd == .mcp && (!commands.isEmpty || file != nil || !trailing.isEmpty || demo) {
            return "--mcp cannot be combined with -c, -f, SQL arguments or --demo"
        }
        if frontEnd == .mcp && readonly {
            return "--mcp opens the database read-only already (unless --allow-writes is given)"
        }
        if frontEnd == .changes && (!commands.isEmpty || file != nil || !trailing.isEmpty || demo) {
            return "--changes cannot be combined with -c, -f, SQL arguments or --demo"
        }
        if frontEnd != .mcp && frontEnd != .web && (httpAddress != nil || tokenFile != nil) {
            return "--http and --token-file are for --mcp (sqlive --mcp --http [HOST:]PORT DATABASE)"
        }
        if frontEnd == .mcp && httpAddress == nil && tokenFile != nil {
            return "--token-file is for --mcp --http"
        }
        if (maxSessions != nil || sessionIdle != nil) && !(frontEnd == .mcp && httpAddress != nil) {
            return "--max-sessions and --session-idle are for --mcp --http"
        }
        if httpTimeout != nil && !(frontEnd == .web || (frontEnd == .mcp && httpAddress != nil)) {
            return "--http-timeout is for --mcp --http and --web"
        }
        if let maxSessions, maxSessions < 1 {
            return "--max-sessions must be at least 1"
        }
        if let sessionIdle, !(sessionIdle > 0 && sessionIdle <= 7 * 86400) {
            return "--session-idle must be between 0 and 604800 seconds"
        }
        if let httpTimeout, !(httpTimeout > 0 && httpTimeout <= 86400) {
            return "--http-timeout must be between 0 and 86400 seconds"
        }
        if frontEnd == .web && (!commands.isEmpty || file != nil || !trailing.isEmpty) {
            return "--web cannot be combined with -c, -f or SQL arguments"
        }
        if frontEnd == .web && readonly {
            return "--web opens the database read-only already (unless --allow-writes is given)"
        }
        if frontEnd != .mcp && frontEnd != .web && allowWrites {
            return "--allow-writes is for --mcp and --web (the REPL and --rpc write unless --readonly is given)"
        }
        if !(timeLimit > 0 && timeLimit <= 86400) || maxRows < 0 || maxBytes < 1 {
            return "--time-limit must be between 0 and 86400 seconds, --max-rows and --max-bytes positive"
        }
        if let refreshBudget, !(refreshBudget >= 0 && refreshBudget <= 86400) {
            return "--refresh-budget must be between 0 (no limit) and 86400 seconds"
        }
        if demo && database != nil {
            return "--demo opens its own database; give no DATABASE with it"
        }
        return nil
    }
}
