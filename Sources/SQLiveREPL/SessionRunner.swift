import Foundation
import SQLiveEngine

/// Runs a session: interactive in a terminal, scripted otherwise.
///
/// A session is interactive when standard input is a terminal and neither
/// `-c` nor `-f` was given. Interactive sessions edit lines with readline,
/// print in `box` mode by default, and re-print live queries above the
/// prompt; scripted sessions read commands from `-c`, `-f` or standard
/// input, print in `list` mode by default (as sqlite3 does), and exit 1 when
/// any command failed.
public enum SessionRunner {
    /// Runs the session on a thread of its own and returns its exit code.
    public static func run(_ options: SessionOptions) async -> Int32 {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: main(options))
            }
            thread.name = "sqlive.session"
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    private static func main(_ options: SessionOptions) -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        let scripted = !options.commands.isEmpty || options.file != nil || !options.trailing.isEmpty
        let interactive = !scripted && (options.interactive ?? (isatty(0) != 0))
        let session = Session(interactive: interactive, mode: options.mode, bail: options.bail)
        if options.stats { session.shell.stats = 1 }
        if let budget = options.refreshBudget { session.liveQueryOptions.refreshBudget = budget }
        session.diagnostics.setSafe(options.safe, nonce: options.nonce)
        // Runs last: a scripted session's buffered output is written.
        defer { session.sink.flush() }

        var demo: DemoSession?
        if options.demo {
            do {
                demo = try DemoSession.create()
            } catch {
                session.reportError("cannot create the demo database: \(error)")
                return 1
            }
        }
        defer { demo?.tearDown() }

        // SIGTERM and SIGHUP (and SIGINT, in a script) end the session the
        // way `.quit` does, so the terminal and the demo's files are
        // restored. A session stuck where no interrupt reaches (reading a
        // pipe that stays open) is ended after a grace period, its demo
        // files removed first.
        let demoDirectory = demo?.directory
        let terminations = session.signals.installTermination(
            interactive ? [SIGTERM, SIGHUP] : [SIGINT, SIGTERM, SIGHUP]
        ) { signal in
            DispatchQueue.global().asyncAfter(deadline: .now() + terminationGrace) {
                if let demoDirectory { try? FileManager.default.removeItem(atPath: demoDirectory) }
                _exit(128 + signal)
            }
        }
        defer { for source in terminations { source.cancel() } }

        do {
            try session.open(demo?.path ?? options.database, readonly: options.readonly)
        } catch {
            session.reportError("\(error)")
            return 1
        }
        defer { session.closeDatabase() }

        if let demo {
            if interactive { session.write(demo.banner(panel: session.panel.isDisplayable)) }
            do {
                try session.watch(
                    name: "leaderboard", definition: DemoDatabase.leaderboard, delivery: .rows, replace: false)
            } catch {
                session.reportError("\(error)")
            }
            demo.writer.start()
        }

        // As sqlite3: the init file, then the command line's settings and
        // -cmd commands in order, then the SQL and dot-commands given as
        // arguments (which stop at the first failure), or the input.
        if let status = session.runStartup(options) { return status }

        if !options.trailing.isEmpty {
            session.errorStyle = .argument
            var failedSQL = false
            for command in options.trailing where !session.isFinished {
                session.lastFailureCode = nil
                guard session.runArgument(command) else {
                    // SQL that fails: SQLite's result code, as sqlite3 exits.
                    failedSQL = !command.hasPrefix(".") && session.lastFailureCode != nil
                    break
                }
            }
            if !session.isFinished { session.printEvents() }
            let status = session.finishedStatus()
            if failedSQL, status == 1, session.exitCode == nil, let code = session.lastFailureCode, code > 1 {
                return code
            }
            return status
        }

        if interactive {
            if demo == nil, let database = session.database {
                session.write(Self.banner(database, colour: session.colour))
            }
            InteractiveLoop(session: session).run()
            // As sqlite3: 1 when a command failed.
            return session.finishedStatus()
        }

        if !options.commands.isEmpty {
            var line = 1
            for command in options.commands where !session.isFinished {
                line = session.runScript(Session.lines(of: command), firstLine: line) + 1
            }
        } else if let file = options.file {
            guard let text = FileManager.default.contents(atPath: file) else {
                session.reportError("cannot open \"\(file)\"")
                return 1
            }
            session.runScript(Session.lines(of: text))
        } else {
            // Before waiting for more input, what was read runs.
            session.runScript(
                StandardInputLines(willRead: {
                    session.runPendingSQL()
                    session.sink.flush()
                }))
        }
        if !session.isFinished { session.printEvents() }
        return session.finishedStatus()
    }

    /// What an interactive session says first: the versions and the
    /// database, and, for an in-memory database, that it is transient, as
    /// the sqlite3 shell says it.
    static func banner(_ database: LiveDatabase, colour: Bool) -> String {
        var text =
            "SQLite version \(database.info.sqliteVersion) \(SQLiveVersion.sqliteSourceDate) (sqlive \(SQLiveVersion.current)) on \(database.info.path)\n"
            + "Enter \".help\" for usage hints.\n"
        if database.location.filePath == nil {
            let transient = "transient in-memory database"
            text +=
                "Connected to a \(colour ? ANSI.bold + transient + ANSI.reset : transient).\n"
                + "Use \".open FILENAME\" to reopen on a persistent database.\n"
        }
        return text
    }

    /// How long a session has to end by itself after a termination signal.
    static let terminationGrace = DispatchTimeInterval.seconds(2)
}

/// Standard input's lines, read as they come, as bytes: NUL bytes and
/// bytes that are not UTF-8 are kept (`readLine` would replace them).
struct StandardInputLines: Sequence, IteratorProtocol {
    /// Called before each read, which may wait for the writer of the pipe:
    /// the session's buffered output goes out first.
    private let willRead: () -> Void
    private var buffer: [UInt8] = []
    /// Where the unread bytes start in `buffer`.
    private var start = 0
    private var ended = false

    init(willRead: @escaping () -> Void = {}) {
        self.willRead = willRead
    }

    mutating func next() -> ScriptText? {
        while true {
            if let newline = buffer[start...].firstIndex(of: 0x0A) {
                defer { start = newline + 1 }
                return Self.line(buffer[start..<newline])
            }
            if ended {
                guard start < buffer.count else { return nil }
                defer { start = buffer.count }
                return Self.line(buffer[start...])
            }
            buffer.removeFirst(start)
            start = 0
            let chunk = 64 * 1024
            willRead()
            let old = buffer.count
            buffer.append(contentsOf: repeatElement(0, count: chunk))
            let count = buffer.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress! + old, chunk) }
            if count < 0 && errno == EINTR {
                buffer.removeLast(chunk)
                continue
            }
            buffer.removeLast(chunk - Swift.max(count, 0))
            if count <= 0 { ended = true }
        }
    }

    private static func line(_ bytes: ArraySlice<UInt8>) -> ScriptText {
        ScriptText(bytes: bytes.last == 0x0D ? bytes.dropLast() : bytes)
    }
}

/// The temporary database and writer of `--demo`.
/// The demo's database in a directory of its own, and the second
/// connection that writes to it (`--demo`, and `--web --demo`).
public struct DemoSession: Sendable {
    public let directory: String
    public let path: String
    public let writer: DemoWriter

    public static func create() throws -> DemoSession {
        // A short name, easy to copy into a second terminal; created
        // exclusively (mkdtemp), so two demos never share it.
        var template = Array((NSTemporaryDirectory() + "sqlive-demo-XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: NSTemporaryDirectory()])
        }
        let directory = String(cString: created)
        let path = directory + "/demo.sqlite"
        try DemoDatabase.create(atPath: path)
        return DemoSession(directory: directory, path: path, writer: try DemoWriter(path: path))
    }

    /// What the demo says first; `panel`: the live panel shows the leaderboard.
    func banner(panel: Bool) -> String {
        let live =
            panel
            ? "The live query \"leaderboard\" is pinned above and redrawn whenever its result changes. Try:"
            : "The live query \"leaderboard\" re-prints whenever its result changes. Try:"
        return """
            sqlive demo: games and players, in a temporary database (\(path)).
            A second connection changes a score about once a second, and now and then adds or removes a player.
            \(live)
              SELECT * FROM players ORDER BY score DESC;
              .watch top SELECT name, score FROM players ORDER BY score DESC LIMIT 3
              .unwatch leaderboard
              .help

            """
    }

    public func tearDown() {
        writer.stop()
        do {
            try FileManager.default.removeItem(atPath: directory)
        } catch {
            FileHandle.standardError.write(
                Data("sqlive: cannot remove the demo database \(directory): \(error)\n".utf8))
        }
    }
}
