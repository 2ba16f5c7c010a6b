import Foundation
import SQLiveTestSupport
import Testing

/// Drives `sqlive` in a real pseudo-terminal through tmux.
struct TmuxSession {
    let socket = "sqlive-test-" + UUID().uuidString.prefix(8)
    let environment: [String: String]

    /// Runs a tmux command and returns what it printed.
    @discardableResult
    func tmux(_ arguments: [String]) async throws -> (output: String, status: Int32) {
        let outcome = try await Launcher.run("/usr/bin/tmux", ["-L", socket] + arguments, environment: environment)
        return (outcome.stdout, outcome.status)
    }

    func start(_ command: [String], width: Int = 120, height: Int = 40) async throws {
        let line = command.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        try await tmux([
            "-f", "/dev/null", "new-session", "-d", "-x", "\(width)", "-y", "\(height)", "-s", "main", line,
        ])
    }

    /// Resizes the window, as a user dragging its corner (the program gets SIGWINCH).
    func resize(width: Int, height: Int) async throws {
        try await tmux(["resize-window", "-t", "main", "-x", "\(width)", "-y", "\(height)"])
    }

    /// The visible screen with its attributes as escape sequences (`capture-pane -e`).
    func screenWithAttributes() async throws -> String {
        try await tmux(["capture-pane", "-p", "-e", "-t", "main"]).output
    }

    /// Types text literally. A `;` is sent on its own: tmux reads a trailing `;` as a command separator.
    func type(_ text: String) async throws {
        for (index, part) in text.split(separator: ";", omittingEmptySubsequences: false).enumerated() {
            if index > 0 { try await tmux(["send-keys", "-t", "main", "-H", "3b"]) }
            if !part.isEmpty { try await tmux(["send-keys", "-t", "main", "-l", String(part)]) }
        }
    }

    /// Presses keys by name: `Enter`, `Tab`, `C-c`, `C-d`.
    func press(_ key: String) async throws {
        try await tmux(["send-keys", "-t", "main", key])
    }

    /// The visible screen, without trailing spaces and blank lines.
    func screen() async throws -> [String] {
        var lines = try await tmux(["capture-pane", "-p", "-J", "-t", "main"]).output.components(separatedBy: "\n").map
        {
            String($0.reversed().drop { $0 == " " }.reversed())
        }
        while let last = lines.last, last.trimmingCharacters(in: .whitespaces).isEmpty { lines.removeLast() }
        return lines
    }

    /// Whether the session (and the program in it) still runs.
    func isRunning() async -> Bool {
        (try? await tmux(["has-session", "-t", "main"]).status == 0) ?? false
    }

    func waitForScreen(timeout: Duration = .seconds(20), _ condition: ([String]) -> Bool) async throws -> [String] {
        var lines: [String] = []
        _ = try await Processes.waitUntil(timeout: timeout) {
            lines = try await screen()
            return condition(lines)
        }
        return lines
    }

    /// Ends the tmux server, without waiting (for a `defer`, which cannot
    /// await): the launcher's task sees it through.
    func kill() {
        _ = try? Launcher.start(
            "/usr/bin/tmux", ["-L", socket, "kill-server"], stdout: .null, stderr: .null, environment: environment)
    }
}

@Suite("Interactive session in a terminal", .serialized, .timeLimit(.minutes(5)))
struct InteractiveSessionTests {
    @Test func liveUpdatesCompletionInterruptAndHistory() async throws {
        let directory = try TemporaryDirectory()
        let database = directory.file("games.sqlite")
        try await Processes.sqlite3(database, ScriptedSessionTests.fixture)
        let environment = Processes.environment(["TERM": "xterm-256color", "NO_COLOR": "1"], directory: directory)
        let tmux = TmuxSession(environment: environment)
        defer { tmux.kill() }
        try await tmux.start([Processes.sqlive, database])

        var screen = try await tmux.waitForScreen { $0.last == "sqlive>" || $0.last == "sqlive> " }
        #expect(
            screen.contains {
                $0.hasPrefix("SQLite version ") && $0.contains("(sqlive ") && $0.contains("games.sqlite")
            })
        #expect(!screen.contains { $0.contains("transient") }, "a file is not a transient database")

        // A live query prints its first result.
        try await tmux.type(".watch top SELECT name, score FROM players ORDER BY score DESC")
        try await tmux.press("Enter")
        screen = try await tmux.waitForScreen {
            $0.contains("-- top v1 (watching, reads players)") && $0.last == "sqlive>"
        }
        #expect(screen.contains("│ Blob Jr    │   100 │"))

        // Tab completes a table name.
        try await tmux.type("SELECT name FROM pla")
        try await tmux.press("Tab")
        screen = try await tmux.waitForScreen { $0.last == "sqlive> SELECT name FROM players" }
        #expect(screen.last == "sqlive> SELECT name FROM players")

        // Another process writes: the re-print appears above the prompt,
        // and the partial line is redrawn intact.
        try await Processes.sqlite3(database, "INSERT INTO players VALUES (4, 2, 'Grandma Blob', 90);")
        screen = try await tmux.waitForScreen { $0.contains { $0.hasPrefix("-- top v2 (external") } }
        let header = try #require(screen.lastIndex { $0.hasPrefix("-- top v2 (external, coalesced ") })
        #expect(screen[header...].contains("│ Grandma Blob │    90 │"))
        #expect(screen.last == "sqlive> SELECT name FROM players")

        // The line goes on where it was.
        try await tmux.type("WHERE score > 80;")
        try await tmux.press("Enter")
        screen = try await tmux.waitForScreen { $0.last == "sqlive>" && $0.contains("│ Grandma Blob │") }
        #expect(
            screen.suffix(8) == [
                "sqlive> SELECT name FROM players WHERE score > 80;", "┌──────────────┐", "│     name     │",
                "├──────────────┤", "│ Blob Jr      │", "│ Grandma Blob │", "└──────────────┘", "sqlive>",
            ])

        // Ctrl-C interrupts a long statement without ending the session.
        try await tmux.type("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c;")
        try await tmux.press("Enter")
        screen = try await tmux.waitForScreen { $0.last?.hasPrefix("⏱") == true }
        #expect(screen.last?.contains("Ctrl-C") == true, "the elapsed-time indicator shows after a second")
        // Another process writes while the statement runs: the re-print appears above the indicator.
        try await Processes.sqlite3(database, "UPDATE players SET score = 95 WHERE name = 'Grandma Blob';")
        screen = try await tmux.waitForScreen {
            $0.contains { $0.hasPrefix("-- top v3 (external") } && $0.last?.hasPrefix("⏱") == true
        }
        #expect(screen.contains("│ Grandma Blob │    95 │"))
        try await tmux.press("C-c")
        screen = try await tmux.waitForScreen { $0.suffix(2) == ["Runtime error: interrupted (9)", "sqlive>"] }
        #expect(screen.suffix(2) == ["Runtime error: interrupted (9)", "sqlive>"])
        #expect(await tmux.isRunning())

        // A table another process creates is completed too: its commit
        // reaches the schema watch, and the next Tab reads the schema again.
        // Tab is pressed until it completes (the watch hears of the commit
        // within milliseconds; only a hang reaches the time-out).
        try await Processes.sqlite3(database, "CREATE TABLE scoreboard(x);")
        try await tmux.type("SELECT * FROM scor")
        let deadline = ContinuousClock.now + .seconds(30)
        repeat {
            try await tmux.press("Tab")
            try await Task.sleep(for: .milliseconds(100))
        } while try await tmux.screen().last != "sqlive> SELECT * FROM scoreboard" && ContinuousClock.now < deadline
        screen = try await tmux.waitForScreen { $0.last == "sqlive> SELECT * FROM scoreboard" }
        #expect(screen.last == "sqlive> SELECT * FROM scoreboard")
        try await tmux.press("C-c")
        // Ctrl-C reaches sqlive as a signal, on its own path: keys typed
        // before the fresh prompt shows could still land on the old line.
        _ = try await tmux.waitForScreen { $0.last == "sqlive>" }

        // Ctrl-C at the prompt clears the line.
        try await tmux.type("SELECT 'half typed")
        try await tmux.press("C-c")
        screen = try await tmux.waitForScreen { $0.suffix(2) == ["sqlive> SELECT 'half typed^C", "sqlive>"] }
        #expect(screen.suffix(2) == ["sqlive> SELECT 'half typed^C", "sqlive>"])

        // A multi-line statement shows the continuation prompt.
        try await tmux.type("SELECT 40")
        try await tmux.press("Enter")
        screen = try await tmux.waitForScreen { $0.last == "   ...>" }
        try await tmux.type("+ 2 AS answer;")
        try await tmux.press("Enter")
        screen = try await tmux.waitForScreen { $0.contains("│     42 │") && $0.last == "sqlive>" }
        #expect(
            screen.suffix(8) == [
                "sqlive> SELECT 40", "   ...> + 2 AS answer;", "┌────────┐", "│ answer │", "├────────┤", "│     42 │",
                "└────────┘", "sqlive>",
            ])

        // The same entry twice is recorded once.
        try await tmux.type("SELECT 1;")
        try await tmux.press("Enter")
        try await tmux.type("SELECT 1;")
        try await tmux.press("Enter")
        _ = try await tmux.waitForScreen { $0.last == "sqlive>" && $0.filter { $0 == "sqlive> SELECT 1;" }.count == 2 }

        // Ctrl-D on an empty line exits.
        try await tmux.press("C-d")
        #expect(await Processes.waitUntil { await !tmux.isRunning() })

        let history = try String(contentsOfFile: directory.file("state/sqlive/history"), encoding: .utf8)
        let entries = history.split(separator: "\n").map(String.init)
        #expect(
            entries == [
                ".watch top SELECT name, score FROM players ORDER BY score DESC",
                "SELECT name FROM players WHERE score > 80;",
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c;",
                "SELECT 40 + 2 AS answer;",
                "SELECT 1;",
            ])
    }

    @Test("Without a file, the banner says the database is transient and how to open a file, as sqlite3 does")
    func inMemoryBanner() async throws {
        let directory = try TemporaryDirectory()
        let tmux = TmuxSession(
            environment: Processes.environment(["TERM": "xterm-256color", "NO_COLOR": "1"], directory: directory))
        defer { tmux.kill() }
        try await tmux.start([Processes.sqlive])
        let screen = try await tmux.waitForScreen { $0.last == "sqlive>" }
        #expect(screen.first?.hasPrefix("SQLite version ") == true)
        #expect(screen.first?.hasSuffix(" on :memory:") == true)
        #expect(
            Array(screen.dropFirst()) == [
                "Enter \".help\" for usage hints.", "Connected to a transient in-memory database.",
                "Use \".open FILENAME\" to reopen on a persistent database.", "sqlive>",
            ])
        try await tmux.type(".quit")
        try await tmux.press("Enter")
        #expect(await Processes.waitUntil { await !tmux.isRunning() })
    }

    @Test("Ctrl-D after a statement begun and not ended runs it, as sqlite3 does, then ends the session")
    func endOfInputRunsThePendingStatement() async throws {
        let directory = try TemporaryDirectory()
        let database = directory.file("t.sqlite")
        let tmux = TmuxSession(
            environment: Processes.environment(["TERM": "xterm-256color", "NO_COLOR": "1"], directory: directory))
        defer { tmux.kill() }
        try await tmux.start(["/bin/sh", "-c", "\(Processes.sqlive) \(database); echo exited $?; sleep 30"])
        _ = try await tmux.waitForScreen { $0.last == "sqlive>" }
        try await tmux.type("CREATE TABLE t AS SELECT 41 + 1 AS answer")
        try await tmux.press("Enter")
        _ = try await tmux.waitForScreen { $0.last?.hasPrefix("   ...>") == true }
        try await tmux.press("C-d")
        _ = try await tmux.waitForScreen { $0.contains("exited 0") }
        #expect(try await Processes.sqlite3Output(database, "SELECT answer FROM t;") == "42\n")
    }

    /// The file is a pipe the test writes: the import is certainly running
    /// (reading) when Ctrl-C comes, whatever the machine's speed.
    @Test("Ctrl-C stops an .import and rolls it back, the table it created too")
    func interruptedImport() async throws {
        let directory = try TemporaryDirectory()
        let fifo = directory.file("rows.csv")
        #expect(mkfifo(fifo, 0o600) == 0)
        let tmux = TmuxSession(
            environment: Processes.environment(["TERM": "xterm-256color", "NO_COLOR": "1"], directory: directory))
        defer { tmux.kill() }
        try await tmux.start([Processes.sqlive])
        _ = try await tmux.waitForScreen { $0.last == "sqlive>" }
        try await tmux.type(".import \(fifo) t")
        try await tmux.press("Enter")
        // Opening blocks until sqlive opens the pipe to read it.
        let writer = try await Task.detached { try FileHandle(forWritingTo: URL(fileURLWithPath: fifo)) }.value
        try writer.write(contentsOf: Data(("a,b\n" + (1...100).map { "\($0),x\n" }.joined()).utf8))
        var screen = try await tmux.waitForScreen { $0.last?.hasPrefix("⏱") == true }
        try await tmux.press("C-c")
        // More rows: the import notices Ctrl-C between two of them (it looks
        // every 4,096 rows), then stops reading. They fit in the pipe's
        // buffer (64 KiB), so this write never waits for a reader that left.
        let more = Data((101...4_500).map { "\($0),x\n" }.joined().utf8)
        #expect(more.count < 65_536)
        try writer.write(contentsOf: more)
        try writer.close()
        screen = try await tmux.waitForScreen { $0.suffix(2) == ["Error: interrupted", "sqlive>"] }
        #expect(screen.suffix(2) == ["Error: interrupted", "sqlive>"])
        try await tmux.type("SELECT count(*) AS tables FROM sqlite_schema;")
        try await tmux.press("Enter")
        screen = try await tmux.waitForScreen { $0.last == "sqlive>" && $0.contains("│      0 │") }
        #expect(screen.contains("│      0 │"))
        try await tmux.type(".quit")
        try await tmux.press("Enter")
        #expect(await Processes.waitUntil { await !tmux.isRunning() })
    }

    @Test func demoStartsWithALiveLeaderboard() async throws {
        let directory = try TemporaryDirectory()
        let tmux = TmuxSession(environment: Processes.environment(["TERM": "xterm-256color"], directory: directory))
        defer { tmux.kill() }
        try await tmux.start([Processes.sqlive, "--demo"])
        let screen = try await tmux.waitForScreen { $0.contains { $0.hasPrefix("-- leaderboard v2 (external") } }
        // The banner says where the database file is, and it is there.
        let banner = try #require(screen.first { $0.hasPrefix("sqlive demo:") })
        let path = try #require(banner.firstMatch(of: /\((\/[^)]+\/demo\.sqlite)\)/)?.1)
        #expect(FileManager.default.fileExists(atPath: String(path)))
        #expect(!screen.contains { $0.contains("transient") })
        #expect(screen.contains { $0.hasPrefix("-- leaderboard v1 (watching, reads games, players)") })
        #expect(screen.contains { $0.contains("Family gin rummy") })
        try await tmux.type(".quit")
        try await tmux.press("Enter")
        #expect(await Processes.waitUntil { await !tmux.isRunning() })
    }
}
