import Foundation
import SQLiveTestSupport
import Testing

/// The live panel in a real terminal (tmux), with the `sqlite3` shell writing.
@Suite("Live panel in a terminal", .serialized, .timeLimit(.minutes(5)))
struct PanelTerminalTests {
    static let watch = ".watch top SELECT name, score FROM players ORDER BY id"
    static let halfTyped = "SELECT name FROM players WHERE score > 40 ORDER BY name;"

    /// A session on the fixture database in a terminal of the given size,
    /// with `top` watched and its panel drawn.
    func start(width: Int = 100, height: Int = 30, colour: Bool = false) async throws -> (
        TmuxSession, TemporaryDirectory, String
    ) {
        let directory = try TemporaryDirectory()
        let database = directory.file("games.sqlite")
        try await Processes.sqlite3(database, ScriptedSessionTests.fixture)
        // The test runner may set NO_COLOR; an empty one is as good as unset.
        let environment = Processes.environment(
            ["TERM": "xterm-256color", "NO_COLOR": colour ? "" : "1"], directory: directory)
        let tmux = TmuxSession(environment: environment)
        try await tmux.start([Processes.sqlive, database], width: width, height: height)
        _ = try await tmux.waitForScreen { $0.last == "sqlive>" }
        try await tmux.type(Self.watch)
        try await tmux.press("Enter")
        let screen = try await tmux.waitForScreen {
            $0.first?.hasPrefix("-- top v1 (watching, reads players) ") == true && $0.last == "sqlive>"
        }
        // The panel is at the top; under it, the command and a one-line note.
        #expect(screen.contains(String(repeating: "─", count: width)))
        #expect(screen.suffix(3) == ["sqlive> " + Self.watch, "-- top v1 (watching, reads players)", "sqlive>"])
        return (tmux, directory, database)
    }

    /// The panel's copies of `top`: header lines after a change, with the time.
    func panelHeaders(_ screen: [String]) -> [String] {
        screen.filter(isPanelHeader)
    }

    func isPanelHeader(_ line: String) -> Bool {
        line.hasPrefix("-- top v") && line.contains("(external, coalesced ") && !line.hasSuffix(")")
    }

    /// The grid's row for Blob shows this score.
    func blobRow(_ screen: [String], score: String) -> Bool {
        screen.contains { $0.hasPrefix("│ Blob ") && !$0.hasPrefix("│ Blob Jr") && $0.hasSuffix(" \(score) │") }
    }

    @Test("Fifty commits by sqlite3 while a line is half typed: one copy, the latest value, the line intact")
    func fiftyChangesUnderAHalfTypedLine() async throws {
        let (tmux, directory, database) = try await start(colour: true)
        defer { tmux.kill() }
        _ = directory
        try await tmux.type(Self.halfTyped)
        _ = try await tmux.waitForScreen { $0.last == "sqlive> " + Self.halfTyped }

        // Fifty commits by the real sqlite3 shell at its default settings, one process each. It has
        // no busy timeout: a commit that meets a live query's read (rollback journal) fails with
        // SQLITE_BUSY, and is run again, as a user would.
        for _ in 0..<50 {
            var attempts = 0
            while try await sqlite3Status(database, "UPDATE players SET score = score + 1 WHERE name = 'Blob';") != 0 {
                attempts += 1
                try #require(attempts < 100, "sqlite3 kept failing")
            }
        }
        let screen = try await tmux.waitForScreen { blobRow($0, score: "70") }
        #expect(panelHeaders(screen).count == 1, "one copy of the live result: \(screen)")
        #expect(screen.first.map(isPanelHeader) == true, "pinned at the top")
        #expect(screen.filter { $0.hasPrefix("│ Blob Jr    │") }.count == 1)
        #expect(screen.filter { $0 == "│    name    │ score │" }.count == 1)
        #expect(screen.last == "sqlive> " + Self.halfTyped, "the half-typed line is intact")
        #expect(screen.contains("sqlive> " + Self.watch), "the lines under the panel stay")

        // The changed value is highlighted (reverse video); NULL is the empty
        // .nullvalue, as in sqlite3's box mode.
        let attributes = try await tmux.screenWithAttributes()
        #expect(attributes.contains("\u{1B}[7m70"), "\(attributes)")
        #expect(!attributes.contains("NULL"))

        // The line runs as typed.
        try await tmux.press("Enter")
        let after = try await tmux.waitForScreen { $0.last == "sqlive>" && $0.contains("│ Blob    │") }
        #expect(
            after.suffix(8) == [
                "sqlive> " + Self.halfTyped, "┌─────────┐", "│  name   │", "├─────────┤", "│ Blob    │", "│ Blob Jr │",
                "└─────────┘", "sqlive>",
            ])
        #expect(panelHeaders(after).count == 1)
        #expect(blobRow(after, score: "70"))
    }

    /// Runs the sqlite3 shell; its exit status (5 when the database was busy).
    func sqlite3Status(_ database: String, _ sql: String) async throws -> Int32 {
        try await Launcher.run("/usr/bin/sqlite3", [database, sql]).status
    }

    @Test("A resize redraws the panel to the new width and height, once")
    func resizeRedrawsThePanel() async throws {
        let (tmux, directory, database) = try await start()
        defer { tmux.kill() }
        _ = directory
        try await tmux.type("SELECT 'half")
        try await Processes.sqlite3(database, "UPDATE players SET score = 21 WHERE name = 'Blob';")
        _ = try await tmux.waitForScreen { blobRow($0, score: "21") }

        // Narrower and lower: the whole grid still fits in half of 20 rows.
        try await tmux.resize(width: 70, height: 20)
        // Settled: the panel drawn and readline's line redrawn under it.
        var screen = try await tmux.waitForScreen {
            $0.contains(String(repeating: "─", count: 70)) && $0.last == "sqlive> SELECT 'half"
        }
        #expect(screen.count <= 20 && screen.allSatisfy { $0.count <= 70 })
        #expect(panelHeaders(screen).count == 1)
        #expect(screen.first.map(isPanelHeader) == true)
        #expect(screen.filter { $0.hasPrefix("│ Blob Jr    │") }.count == 1)
        #expect(screen.filter { $0 == String(repeating: "─", count: 70) }.count == 1)
        #expect(screen.last == "sqlive> SELECT 'half")

        // Lower still: the panel (8 rows of 16) shows the first row and how many more.
        try await tmux.resize(width: 70, height: 16)
        screen = try await tmux.waitForScreen { $0.contains("… 2 more rows") && $0.last == "sqlive> SELECT 'half" }
        #expect(panelHeaders(screen).count == 1)
        #expect(blobRow(screen, score: "21"))
        #expect(!screen.contains { $0.hasPrefix("│ Blob Jr ") })
        #expect(screen.firstIndex(of: String(repeating: "─", count: 70)) == 7)
        #expect(screen.last == "sqlive> SELECT 'half")

        // Too small for a panel: the latest result is printed above the prompt, once.
        try await tmux.resize(width: 70, height: 10)
        screen = try await tmux.waitForScreen { !$0.contains(String(repeating: "─", count: 70)) }
        #expect(screen.contains("-- top v2 (external, coalesced 1)"))
        #expect(screen.suffix(2) == ["└────────────┴───────┘", "sqlive> SELECT 'half"])
        try await Processes.sqlite3(database, "UPDATE players SET score = 22 WHERE name = 'Blob';")
        screen = try await tmux.waitForScreen { $0.contains("-- top v3 (external, coalesced 1)") }
        #expect(screen.last == "sqlive> SELECT 'half")

        // Large again: the panel is back, and the line goes on.
        try await tmux.resize(width: 80, height: 24)
        screen = try await tmux.waitForScreen { $0.contains(String(repeating: "─", count: 80)) }
        #expect(screen.first?.hasPrefix("-- top v3 (external, coalesced 1) ") == true)
        #expect(blobRow(screen, score: "22"))
        try await tmux.type("' AS x;")
        try await tmux.press("Enter")
        screen = try await tmux.waitForScreen { $0.last == "sqlive>" && $0.contains("│ half │") }
        #expect(panelHeaders(screen).count == 1)
    }

    @Test(".panel off re-prints above the prompt; .panel on pins again; unwatching the last query removes the panel")
    func panelOffAndOn() async throws {
        let (tmux, directory, database) = try await start()
        defer { tmux.kill() }
        _ = directory
        try await tmux.type(".panel off")
        try await tmux.press("Enter")
        var screen = try await tmux.waitForScreen {
            !$0.contains(String(repeating: "─", count: 100)) && $0.last == "sqlive>"
        }
        // The latest result is printed once where the panel was taken away.
        #expect(
            screen.suffix(10) == [
                "sqlive> .panel off", "-- top v1 (watching, reads players)", "┌────────────┬───────┐",
                "│    name    │ score │", "├────────────┼───────┤", "│ Blob       │    20 │", "│ Blob Jr    │   100 │",
                "│ Blob, \"Sr\" │       │", "└────────────┴───────┘", "sqlive>",
            ])

        // A change is re-printed above the prompt, with the line being typed redrawn.
        try await tmux.type("SELECT 'half")
        try await Processes.sqlite3(database, "UPDATE players SET score = 25 WHERE name = 'Blob';")
        screen = try await tmux.waitForScreen { $0.contains { $0.hasPrefix("-- top v2 (external") } }
        let header = try #require(screen.lastIndex { $0.hasPrefix("-- top v2 (external, coalesced 1)") })
        #expect(screen[header] == "-- top v2 (external, coalesced 1)", "a re-print's header has no time")
        #expect(blobRow(Array(screen[header...]), score: "25"))
        #expect(screen.last == "sqlive> SELECT 'half")
        #expect(!screen.contains(String(repeating: "─", count: 100)))

        try await tmux.press("C-u")
        try await tmux.type(".panel on")
        try await tmux.press("Enter")
        screen = try await tmux.waitForScreen {
            $0.contains(String(repeating: "─", count: 100)) && $0.last == "sqlive>"
        }
        #expect(screen.first?.hasPrefix("-- top v2 (external, coalesced 1) ") == true)
        #expect(screen.last == "sqlive>")
        let panelRows = try #require(screen.firstIndex(of: String(repeating: "─", count: 100))) + 1

        // Ctrl-L clears under the panel, which stays.
        try await tmux.type("SELECT 'half")
        try await tmux.press("C-l")
        screen = try await tmux.waitForScreen { $0.count == panelRows + 1 }
        #expect(screen.first?.hasPrefix("-- top v2 (external, coalesced 1) ") == true)
        #expect(screen.last == "sqlive> SELECT 'half")
        try await tmux.press("C-u")

        try await tmux.type(".unwatch top")
        try await tmux.press("Enter")
        screen = try await tmux.waitForScreen {
            !$0.contains(String(repeating: "─", count: 100)) && $0.last == "sqlive>"
        }
        #expect(!screen.contains { $0.hasPrefix("-- top v2 (external, coalesced 1) ") })
        #expect(screen.suffix(2) == ["sqlive> .unwatch top", "sqlive>"])
    }

    @Test(
        "TERM=dumb or a terminal under 12 rows: no panel, re-prints above the prompt",
        arguments: [
            ("dumb", 30), ("xterm-256color", 11),
        ])
    func noPanelWhereItCannotBe(term: String, height: Int) async throws {
        let directory = try TemporaryDirectory()
        let database = directory.file("games.sqlite")
        try await Processes.sqlite3(database, ScriptedSessionTests.fixture)
        let tmux = TmuxSession(
            environment: Processes.environment(["TERM": term, "NO_COLOR": "1"], directory: directory))
        defer { tmux.kill() }
        // tmux sets TERM in its panes: `env` sets it again.
        try await tmux.start(["/usr/bin/env", "TERM=\(term)", Processes.sqlive, database], width: 80, height: height)
        _ = try await tmux.waitForScreen { $0.last == "sqlive>" }
        try await tmux.type(Self.watch)
        try await tmux.press("Enter")
        var screen = try await tmux.waitForScreen { $0.last == "sqlive>" && $0.contains("└────────────┴───────┘") }
        #expect(screen.contains("-- top v1 (watching, reads players)"))
        try await Processes.sqlite3(database, "UPDATE players SET score = 23 WHERE name = 'Blob';")
        screen = try await tmux.waitForScreen { blobRow($0, score: "23") && $0.last == "sqlive>" }
        #expect(screen.suffix(9).first == "-- top v2 (external, coalesced 1)")
        #expect(!screen.contains(String(repeating: "─", count: 80)))
        try await tmux.type(".panel on")
        try await tmux.press("Enter")
        screen = try await tmux.waitForScreen {
            $0.last == "sqlive>" && $0.contains { $0.hasPrefix("sqlive> .panel on") }
        }
        let message = screen.dropLast().last ?? ""
        #expect(
            message.contains(term == "dumb" ? "cannot hold the live panel" : "too small for the live panel"),
            "\(message)")
    }

    @Test("After .quit or Ctrl-D the shell's terminal is clean: no scroll region, cursor under everything")
    func quitLeavesTheTerminalClean() async throws {
        let directory = try TemporaryDirectory()
        let database = directory.file("games.sqlite")
        try await Processes.sqlite3(database, ScriptedSessionTests.fixture)
        let environment = Processes.environment(["TERM": "xterm-256color", "NO_COLOR": "1"], directory: directory)
        let tmux = TmuxSession(environment: environment)
        defer { tmux.kill() }
        try await tmux.start(["/bin/sh"], width: 80, height: 24)
        try await tmux.type("PS1='$ '")
        try await tmux.press("Enter")
        try await tmux.type("clear")
        try await tmux.press("Enter")
        _ = try await tmux.waitForScreen { $0 == ["$"] }

        for exit in [".quit", "C-d", "SIGTERM"] {
            try await tmux.type("'\(Processes.sqlive)' '\(database)'")
            try await tmux.press("Enter")
            _ = try await tmux.waitForScreen { $0.last == "sqlive>" }
            try await tmux.type(Self.watch)
            try await tmux.press("Enter")
            _ = try await tmux.waitForScreen { $0.first?.hasPrefix("-- top v1 ") == true && $0.last == "sqlive>" }
            switch exit {
            case ".quit":
                try await tmux.type(".quit")
                try await tmux.press("Enter")
            case "C-d":
                try await tmux.press("C-d")
            default:
                let shell = try await tmux.tmux(["list-panes", "-t", "main", "-F", "#{pane_pid}"]).output
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                let child = try #require(try await Processes.childProcess(of: shell))
                kill(child, SIGTERM)
            }
            var screen = try await tmux.waitForScreen { $0.last == "$" }
            #expect(!screen.contains(String(repeating: "─", count: 80)), "the panel is gone")
            if exit == ".quit" {
                #expect(screen.suffix(3) == ["-- top v1 (watching, reads players)", "sqlive> .quit", "$"])
            } else if exit == "SIGTERM" {
                // The prompt's line is ended, as it showed.
                #expect(screen.suffix(3) == ["-- top v1 (watching, reads players)", "sqlive>", "$"])
            } else {
                // Readline 8.2 ends the line after Ctrl-D, and so does sqlive: a blank line (as without a panel).
                #expect(screen.suffix(4).prefix(2) == ["-- top v1 (watching, reads players)", "sqlive>"])
            }

            try await tmux.type("echo done")
            try await tmux.press("Enter")
            screen = try await tmux.waitForScreen { $0.suffix(2) == ["done", "$"] }
            #expect(screen.suffix(3) == ["$ echo done", "done", "$"])

            // With a scroll region left behind, the top rows would stay put.
            try await tmux.type("seq 100")
            try await tmux.press("Enter")
            screen = try await tmux.waitForScreen { $0.suffix(2) == ["100", "$"] }
            #expect(screen == (78...100).map(String.init) + ["$"])
            try await tmux.type("clear")
            try await tmux.press("Enter")
            _ = try await tmux.waitForScreen { $0 == ["$"] }
        }
    }
}
