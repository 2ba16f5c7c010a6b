import ArgumentParser
import Foundation
import SQLiveEngine
import SQLiveREPL
import SQLiveRPC

/// The executable: reads the command line as the sqlite3 shell does
/// (`ShellCommandLine`) and picks a front end.
@main
enum Main {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        // The manual page and the shell completions come from the options
        // declared for swift-argument-parser.
        if arguments.contains(where: { $0 == "--experimental-dump-help" || $0.hasPrefix("--generate-completion") }) {
            await SQLive.main(arguments)
            return
        }
        let program = CommandLine.arguments.first ?? "sqlive"
        if let invalid = nonUTF8Argument() {
            // Swift replaces bytes that are not UTF-8 with U+FFFD: refuse
            // them, rather than run or open something else than was typed.
            FileHandle.standardError.write(Data("\(program): Error: \(invalid)\n".utf8))
            exit(1)
        }
        let line: ShellCommandLine
        do {
            line = try ShellCommandLine.parse(arguments)
        } catch {
            var text = "\(program): Error: \(error.message)\n"
            if error.suggestsHelp { text += "Use -help for a list of options.\n" }
            FileHandle.standardError.write(Data(text.utf8))
            exit(1)
        }
        switch line.action {
        case .help:
            FileHandle.standardError.write(Data(ShellUsage.text(program: program).utf8))
            exit(1)
        case .version:
            print(SQLiveVersion.sqliteVersionLine)
            exit(0)
        case .sqliveVersion:
            print(SQLiveVersion.current)
            exit(0)
        case .run:
            break
        }
        if let conflict = line.conflict() ?? check(line) {
            FileHandle.standardError.write(Data("\(program): Error: \(conflict)\n".utf8))
            exit(1)
        }
        SQLiveLog.bootstrap()
        // The REPL's `.web` serves the session's database as the live page.
        LivePage.launcher.withLock {
            $0 = { database, shownPath, text in
                var address = HTTPListener.Address()
                if let text {
                    guard let parsed = HTTPListener.Address(text) else {
                        return .failure(LivePageFailure(".web takes [HOST:]PORT, not \(text)"))
                    }
                    address = parsed
                }
                guard let page = await WebServer.start(sharing: database, shownAs: shownPath, address: address) else {
                    return .failure(LivePageFailure("cannot listen on \(address.host):\(address.port)"))
                }
                return .success(ServedPage(page: page))
            }
        }
        // With -stats, SQLite counts its memory, for .stats to show.
        SQLiteProcess.configure(memoryStatistics: line.stats)
        let status = await run(line)
        // Every connection is closed: an empty -wal this run made goes.
        WALClosing.finish()
        exit(status)
    }

    /// The listeners' time-outs the command line asks for.
    private static func timeouts(_ line: ShellCommandLine) -> HTTPListener.Timeouts {
        var timeouts = HTTPListener.Timeouts()
        if let seconds = line.httpTimeout { timeouts.request = .milliseconds(Int64(seconds * 1000)) }
        return timeouts
    }

    private static func run(_ line: ShellCommandLine) async -> Int32 {
        switch line.frontEnd {
        case .mcp:
            let limits = ConfinedReader.Limits(
                time: .milliseconds(Int64(line.timeLimit * 1000)), rows: line.maxRows, bytes: line.maxBytes)
            var options = MCPServer.Options(allowWrites: line.allowWrites, limits: limits)
            options.refreshBudget = line.refreshBudgetDuration
            if let http = line.httpAddress {
                guard let address = HTTPListener.Address(http) else {
                    FileHandle.standardError.write(
                        Data("sqlive: Error: --http takes [HOST:]PORT, not \(http)\n".utf8))
                    return 1
                }
                var policy = MCPSessionPolicy()
                if let maximum = line.maxSessions { policy.maximumSessions = maximum }
                if let idle = line.sessionIdle { policy.idleLimit = .milliseconds(Int64(idle * 1000)) }
                return await MCPHTTPServer.run(
                    database: line.database, address: address, tokenFile: line.tokenFile, options: options,
                    policy: policy, timeouts: timeouts(line))
            }
            return await MCPServer.run(database: line.database, options: options)
        case .web:
            var address = HTTPListener.Address()
            if let text = line.httpAddress {
                guard let parsed = HTTPListener.Address(text) else {
                    FileHandle.standardError.write(Data("sqlive: Error: --web takes [HOST:]PORT, not \(text)\n".utf8))
                    return 1
                }
                address = parsed
            }
            var options = WebServer.Options(
                allowWrites: line.allowWrites, refreshBudget: line.refreshBudgetDuration, tokenFile: line.tokenFile)
            guard line.demo else {
                return await WebServer.run(
                    database: line.database, address: address, options: options, timeouts: timeouts(line))
            }
            // The demo: its database, its writer, and the leaderboard watched on the page.
            let demo: DemoSession
            do {
                demo = try DemoSession.create()
            } catch {
                FileHandle.standardError.write(Data("sqlive: cannot create the demo database: \(error)\n".utf8))
                return 1
            }
            options.watches = [("leaderboard", DemoDatabase.leaderboard.sql)]
            demo.writer.start()
            let status = await WebServer.run(
                database: demo.path, address: address, options: options, timeouts: timeouts(line))
            demo.tearDown()
            return status
        case .changes:
            return await ChangeFeedCommand.run(database: line.database, tables: line.changeTables)
        case .rpc:
            return await RPCServer.run(
                database: line.database, readonly: line.readonly, refreshBudget: line.refreshBudgetDuration)
        case .session:
            var options = SessionOptions(
                database: line.database, readonly: line.readonly, commands: line.commands, file: line.file,
                mode: line.mode.flatMap(OutputMode.init(rawValue:)), bail: line.bail, demo: line.demo)
            options.trailing = line.trailing
            options.steps = line.steps
            options.initFile = line.initFile
            options.interactive = line.interactive
            options.stats = line.stats
            options.safe = line.safe
            options.nonce = line.nonce
            options.refreshBudget = line.refreshBudgetDuration
            return await SessionRunner.run(options)
        }
    }

    /// What the options name that cannot be used: an unknown `--mode`, a
    /// VFS SQLite lacks, a symbolic link with `-nofollow`.
    private static func check(_ line: ShellCommandLine) -> String? {
        if let mode = line.mode, OutputMode(rawValue: mode) == nil {
            return "unknown mode '\(mode)'; use one of: \(OutputMode.allCases.map(\.rawValue).joined(separator: ", "))"
        }
        if let vfs = line.vfs, !SQLiteProcess.hasVFS(named: vfs) {
            return "no such VFS: \"\(vfs)\""
        }
        if line.noFollow, let path = line.database, DatabaseLocation(path).filePath != nil {
            var status = stat()
            if lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK {
                return "unable to open database \"\(path)\": unable to open database file (symbolic link, -nofollow)"
            }
        }
        return nil
    }

    /// The first argument holding bytes that are not UTF-8, described.
    private static func nonUTF8Argument() -> String? {
        for index in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[index] else { continue }
            let bytes = UnsafeRawBufferPointer(start: argument, count: strlen(argument))
            if String(validating: bytes, as: UTF8.self) == nil {
                return "argument \(index) holds bytes that are not UTF-8: \(String(decoding: bytes, as: UTF8.self))"
            }
        }
        return nil
    }
}

/// The `sqlive` command's options, declared for swift-argument-parser,
/// which writes the manual page (`--experimental-dump-help`) and the shell
/// completions (`--generate-completion-script`) from them. The command line
/// itself is read as the sqlite3 shell reads its own (`ShellCommandLine`,
/// in `Main`): one dash or two, options anywhere, SQL and dot-commands
/// after the database name.
struct SQLive: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sqlive",
        abstract: "A live SQLite query playground: queries that re-print whenever the data changes.",
        usage: "sqlive [OPTIONS] [FILENAME [SQL|CMD...]]",
        discussion: """
            The command line is the sqlite3 shell's (3.40.1): its options take one dash or two, and SQL or \
            dot-commands after the database name run in order instead of reading standard input. \
            Interactive when standard input is a terminal and neither -c, -f nor SQL arguments are given; \
            otherwise a scripted session. With --rpc (or --lsp), serves JSON-RPC 2.0 and the Language Server \
            Protocol on standard input and output. With --mcp, serves the Model Context Protocol to AI \
            assistants, the database read-only unless --allow-writes is given.
            """)

    @Argument(help: "A database file path or a file: URI; omitted or :memory: opens an in-memory database.")
    var database: String?

    @Argument(help: "SQL statements or dot-commands, run in order instead of reading standard input.")
    var sql: [String] = []

    @Flag(
        name: [.customLong("rpc"), .customLong("lsp")],
        help:
            "Serve JSON-RPC 2.0 and the Language Server Protocol on stdin/stdout instead of the REPL (logs go to stderr)."
    )
    var rpc = false

    @Flag(
        help:
            "Serve the Model Context Protocol on stdin/stdout for AI assistants (newline-delimited JSON-RPC); the database opens read-only unless --allow-writes is given."
    )
    var mcp = false

    @Flag(
        help:
            "Print one JSON line per changed row of every commit by any process, until interrupted (--table NAME, repeatable, names the tables)."
    )
    var changes = false

    @Flag(
        help:
            "Serve the live page and the JSON-RPC server over a WebSocket (/rpc) on 127.0.0.1, a free port unless [HOST:]PORT follows; prints the page's URL with its token first; read-only unless --allow-writes. With --demo, the demo's leaderboard, live."
    )
    var web = false

    @Option(
        name: .customLong("http"),
        help:
            "With --mcp: serve MCP's streamable HTTP transport at http://HOST:PORT/mcp instead of stdin/stdout ([HOST:]PORT; 127.0.0.1 unless a host is given, port 0 for a free one); prints the URL and a bearer token."
    )
    var http: String?

    @Option(help: "With --mcp --http or --web: read the token from this file instead of making one up.")
    var tokenFile: String?

    @Option(help: "With --mcp --http: the most MCP sessions at once; one more is refused with 503 and Retry-After.")
    var maxSessions: Int = 256

    @Option(help: "With --mcp --http: how long an MCP session may idle, in seconds, before it ends (then 404).")
    var sessionIdle: Double = 600

    @Option(
        help:
            "With --mcp --http or --web: how long, in seconds, a connection may keep a request's head or body unfinished before it is closed."
    )
    var httpTimeout: Double = 10

    @Flag(help: "With --mcp or --web: let the agent's or the page's statements write.")
    var allowWrites = false

    @Option(help: "With --mcp: the time limit of each call, in seconds.")
    var timeLimit: Double = 10

    @Option(help: "With --mcp: the most rows a call returns.")
    var maxRows: Int = 1000

    @Option(help: "With --mcp: the most bytes of values a call returns, and the largest value read.")
    var maxBytes: Int = 4 << 20

    @Option(
        help:
            "How long a live query's refresh may run, in seconds, before it is stopped (\"too slow to keep live\"); 0 for no limit."
    )
    var refreshBudget: Double = 30

    @Option(name: [.short, .customLong("command")], help: "Run TEXT (SQL or a dot-command), then exit. Repeatable.")
    var commands: [String] = []

    @Option(name: [.short, .customLong("file")], help: "Run the script file, then exit.")
    var file: String?

    @Option(help: "Initial output mode (as .mode takes it).")
    var mode: String?

    @Flag(help: "Open a demo database with a second connection that keeps writing to it.")
    var demo = false

    @Flag(help: "Print sqlive's own version.")
    var sqliveVersion = false

    // sqlite3's options (3.40.1), one dash or two.
    @Flag(name: .sqlite3("ascii"), help: "Set output mode to 'ascii'.") var ascii = false
    @Flag(name: .sqlite3("bail"), help: "Stop after hitting an error.") var bail = false
    @Flag(name: .sqlite3("batch"), help: "Force batch I/O.") var batch = false
    @Flag(name: .sqlite3("box"), help: "Set output mode to 'box'.") var box = false
    @Flag(name: .sqlite3("column"), help: "Set output mode to 'column'.") var column = false
    @Option(name: .sqlite3("cmd"), help: "Run COMMAND before reading stdin.") var cmd: [String] = []
    @Flag(name: .sqlite3("csv"), help: "Set output mode to 'csv'.") var csv = false
    @Flag(name: .sqlite3("echo"), help: "Print inputs before execution.") var echo = false
    @Option(name: .sqlite3("init"), help: "Read/process the named file (instead of ~/.sqliterc).")
    var initFile: String?
    @Flag(name: .sqlite3("header"), help: "Turn headers on.") var header = false
    @Flag(name: .sqlite3("noheader"), help: "Turn headers off.") var noheader = false
    @Flag(name: .sqlite3("html"), help: "Set output mode to HTML.") var html = false
    @Flag(name: .sqlite3("interactive"), help: "Force interactive I/O.") var interactive = false
    @Flag(name: .sqlite3("json"), help: "Set output mode to 'json'.") var json = false
    @Flag(name: .sqlite3("line"), help: "Set output mode to 'line'.") var line = false
    @Flag(name: .sqlite3("list"), help: "Set output mode to 'list'.") var list = false
    @Flag(name: .sqlite3("markdown"), help: "Set output mode to 'markdown'.") var markdown = false
    @Option(name: .sqlite3("newline"), help: "Set the output row separator (default '\\n').") var newline: String?
    @Flag(name: .sqlite3("nofollow"), help: "Refuse to open symbolic links to database files.")
    var nofollow = false
    @Option(name: .sqlite3("nullvalue"), help: "Set the text for NULL values (default '').") var nullvalue: String?
    @Flag(name: .sqlite3("quote"), help: "Set output mode to 'quote'.") var quote = false
    @Flag(name: .sqlite3("readonly"), help: "Open the database read-only: writes fail, the file is never modified.")
    var readonly = false
    @Option(name: .sqlite3("separator"), help: "Set the output column separator (default '|').")
    var separator: String?
    @Flag(name: .sqlite3("stats"), help: "Print sqlite3's statistics after each statement (.stats on).")
    var stats = false
    @Flag(name: .sqlite3("safe"), help: "Safe mode: no ATTACH, no file functions, no commands that touch files.")
    var safe = false
    @Option(name: .sqlite3("nonce"), help: "The string .nonce must give to lift safe mode for one command.")
    var nonce: String?
    @Flag(name: .sqlite3("table"), help: "Set output mode to 'table'.") var table = false
    @Flag(name: .sqlite3("tabs"), help: "Set output mode to 'tabs'.") var tabs = false
    @Flag(name: .sqlite3("version"), help: "Show SQLite's version.") var version = false
    @Option(name: .sqlite3("vfs"), help: "Require the VFS NAME.") var vfs: String?
    @Flag(name: .sqlite3("eqp"), help: "Show the query plan before each statement.") var eqp = false
    @Flag(name: .sqlite3("eqpfull"), help: "Show the plan and the bytecode before each statement.")
    var eqpfull = false
    @Option(name: .sqlite3("mmap"), help: "Accepted, as sqlite3 does; no effect.") var mmap: String?
    @Flag(name: .sqlite3("memtrace"), help: "Accepted, as sqlite3 does; no effect.") var memtrace = false

    func run() async throws {
        // Only the manual page and the completions are asked of this type.
        throw CleanExit.helpRequest(self)
    }
}

extension NameSpecification {
    /// An option of sqlite3's: `-name` and `--name`.
    static func sqlite3(_ name: String) -> NameSpecification {
        [.customLong(name, withSingleDash: true), .customLong(name)]
    }
}

/// The live page the REPL's `.web` serves.
struct ServedPage: LivePageServer {
    let page: WebServer.Shared
    var url: String { page.url }
    func stop() async { await page.stop() }
}
