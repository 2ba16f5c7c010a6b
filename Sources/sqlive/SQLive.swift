import ArgumentParser
import Foundation
import SQLiveEngine
import SQLiveREPL
import SQLiveRPC

/// The `sqlive` command: parses arguments and picks a front end.
@main
struct SQLive: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sqlive",
        abstract: "A live SQLite query playground: queries that re-print whenever the data changes.",
        discussion: """
            Interactive when standard input is a terminal and neither -c nor -f is given; \
            otherwise a scripted session. With --rpc (or --lsp), serves JSON-RPC 2.0 and the Language Server Protocol on standard input and output. \
            With --mcp, serves the Model Context Protocol to AI assistants, the database read-only unless --allow-writes is given.
            """,
        version: SQLiveVersion.current)

    @Argument(help: "A database file path or a file: URI; omitted or :memory: opens an in-memory database.")
    var database: String?

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

    @Flag(help: "With --mcp: let the agent's statements write.")
    var allowWrites = false

    @Option(help: "With --mcp: the time limit of each call, in seconds.")
    var timeLimit: Double = 10

    @Option(help: "With --mcp: the most rows a call returns.")
    var maxRows: Int = 1000

    @Option(help: "With --mcp: the most bytes of values a call returns, and the largest value read.")
    var maxBytes: Int = 4 << 20

    @Option(name: [.short, .customLong("command")], help: "Run TEXT (SQL or a dot-command), then exit. Repeatable.")
    var commands: [String] = []

    @Option(name: [.short, .customLong("file")], help: "Run the script file, then exit.")
    var file: String?

    @Flag(help: "Open the database read-only: writes fail, the file is never modified.")
    var readonly = false

    @Option(help: "Initial output mode: box, table, markdown, csv, json, line, list, tabs.")
    var mode: String?

    @Flag(help: "Stop a scripted session at the first error.")
    var bail = false

    @Flag(help: "Open a demo database with a second connection that keeps writing to it.")
    var demo = false

    func validate() throws {
        // Swift replaces bytes that are not UTF-8 in arguments with U+FFFD:
        // refuse them, rather than run or open something else than was typed.
        for index in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[index] else { continue }
            let bytes = UnsafeRawBufferPointer(start: argument, count: strlen(argument))
            if String(validating: bytes, as: UTF8.self) == nil {
                throw ValidationError(
                    "argument \(index) holds bytes that are not UTF-8: \(String(decoding: bytes, as: UTF8.self))")
            }
        }
        if let mode, OutputMode(rawValue: mode) == nil {
            throw ValidationError(
                "unknown mode '\(mode)'; use one of: \(OutputMode.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if rpc && (!commands.isEmpty || file != nil) {
            throw ValidationError("--rpc cannot be combined with -c or -f")
        }
        if mcp && (rpc || !commands.isEmpty || file != nil || demo) {
            throw ValidationError("--mcp cannot be combined with --rpc, -c, -f or --demo")
        }
        if mcp && readonly {
            throw ValidationError("--mcp opens the database read-only already (unless --allow-writes is given)")
        }
        if !mcp && allowWrites {
            throw ValidationError("--allow-writes is for --mcp (the REPL and --rpc write unless --readonly is given)")
        }
        if !(timeLimit > 0 && timeLimit <= 86400) || maxRows < 0 || maxBytes < 1 {
            throw ValidationError(
                "--time-limit must be between 0 and 86400 seconds, --max-rows and --max-bytes positive")
        }
        if demo && database != nil {
            throw ValidationError("--demo opens its own database; give no DATABASE with it")
        }
    }

    func run() async throws {
        SQLiveLog.bootstrap()
        SQLiteProcess.configure()
        let status: Int32
        if mcp {
            let limits = ConfinedReader.Limits(
                time: .milliseconds(Int64(timeLimit * 1000)), rows: maxRows, bytes: maxBytes)
            status = await MCPServer.run(
                database: database, options: MCPServer.Options(allowWrites: allowWrites, limits: limits))
        } else if rpc {
            status = await RPCServer.run(database: database, readonly: readonly)
        } else {
            let options = SessionOptions(
                database: database, readonly: readonly, commands: commands, file: file,
                mode: mode.flatMap(OutputMode.init(rawValue:)), bail: bail, demo: demo)
            status = await SessionRunner.run(options)
        }
        // Every connection is closed: an empty -wal this run made goes.
        WALClosing.finish()
        if status != 0 {
            throw ExitCode(status)
        }
    }
}
