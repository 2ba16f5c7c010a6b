import Foundation
import SQLiveTestSupport
import Testing

/// Golden-output tests of scripted sessions, through the real `sqlive` binary.
@Suite("Scripted sessions", .serialized, .timeLimit(.minutes(5)))
struct ScriptedSessionTests {
    static let fixture = """
        CREATE TABLE games(id INTEGER PRIMARY KEY, title TEXT NOT NULL);
        CREATE TABLE players(id INTEGER PRIMARY KEY, gameID INTEGER NOT NULL REFERENCES games(id),
          name TEXT NOT NULL, score INTEGER);
        CREATE INDEX players_gameID ON players(gameID);
        INSERT INTO games VALUES (1, 'Family gin rummy'), (2, 'Weekly poker night');
        INSERT INTO players VALUES (1, 1, 'Blob', 20), (2, 1, 'Blob Jr', 100), (3, 2, 'Blob, "Sr"', NULL);
        """
    static let query = "SELECT id, name, score FROM players ORDER BY id;"

    /// A directory with the fixture database, made by the sqlite3 CLI.
    func fixture() async throws -> (TemporaryDirectory, String) {
        let directory = try TemporaryDirectory()
        let database = directory.file("games.sqlite")
        try await Processes.sqlite3(database, Self.fixture)
        return (directory, database)
    }

    func run(
        _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:],
        in directory: TemporaryDirectory
    ) async throws -> ProcessOutput {
        try await Processes.sqlive(arguments, stdin: stdin, environment: environment, directory: directory)
    }

    // MARK: - Output modes

    static let modes = ["box", "table", "markdown", "column", "csv", "json", "line", "list", "tabs", "html", "quote"]

    /// The golden is the sqlite3 shell's own output for the same `.mode`.
    @Test("every output mode, from --mode and from .mode, as sqlite3 writes it", arguments: modes)
    func mode(_ mode: String) async throws {
        let (directory, database) = try await fixture()
        let golden = try await Processes.sqlite3Shell(
            [database], stdin: ".mode \(mode)\n\(Self.query)\n", directory: directory)
        #expect(golden.status == 0 && !golden.stdout.isEmpty)
        let fromFlag = try await run([database, "--mode", mode, "-c", Self.query], in: directory)
        #expect(fromFlag.stdout == golden.stdout)
        #expect(fromFlag.stderr == "")
        #expect(fromFlag.status == 0)
        let fromCommand = try await run([database], stdin: ".mode \(mode)\n\(Self.query)\n", in: directory)
        #expect(fromCommand.stdout == golden.stdout)
    }

    @Test func defaultModeOfScriptsIsList() async throws {
        let (directory, database) = try await fixture()
        let output = try await run([database], stdin: Self.query + "\n.mode\n", in: directory)
        #expect(output.stdout == "1|Blob|20\n2|Blob Jr|100\n3|Blob, \"Sr\"|\ncurrent output mode: list\n")
    }

    @Test func headersNullValueAndBlobs() async throws {
        let (directory, database) = try await fixture()
        let output = try await run(
            [
                database, "-c", ".headers on", "-c", ".nullvalue -", "-c",
                "SELECT name, score FROM players WHERE id = 3;",
                "-c", ".mode csv", "-c", "SELECT x'4142' AS b, 1.5 AS r, NULL AS n;", "-c", ".mode json",
                "-c", "SELECT x'4142' AS b, 9223372036854775807 AS i;",
            ],
            in: directory)
        #expect(
            output.stdout == """
                name|score
                Blob, "Sr"|-
                b,r,n\r
                AB,1.5,-\r
                [{"b":"AB","i":9223372036854775807}]

                """)
    }

    /// Scripts never cut (sqlite3 does not), whatever `$COLUMNS` says; a
    /// long value wraps at 60 characters in box mode, as in sqlite3.
    @Test func wideCellsWrapInBoxAndAreNotCut() async throws {
        let directory = try TemporaryDirectory()
        let long = String(repeating: "abcdefghij", count: 7)
        let output = try await run(
            [
                "-c", ".mode box", "-c", "SELECT 1 AS id, '\(long)' AS text;", "-c", ".mode csv",
                "-c", "SELECT '\(long)';",
            ],
            environment: ["COLUMNS": "40"], in: directory)
        let sixty = String(long.prefix(60))
        #expect(
            output.stdout == """
                ┌────┬──────────────────────────────────────────────────────────────┐
                │ id │                             text                             │
                ├────┼──────────────────────────────────────────────────────────────┤
                │ 1  │ \(sixty) │
                │    │ abcdefghij                                                   │
                └────┴──────────────────────────────────────────────────────────────┘
                \(long)\r

                """)
    }

    @Test func multiLineStatementsAndSeveralStatementsPerLine() async throws {
        let directory = try TemporaryDirectory()
        let output = try await run(
            [], stdin: "SELECT 1,\n  2;  SELECT 'a;b'\n;\nSELECT 3 -- no semicolon at the end", in: directory)
        #expect(output.stdout == "1|2\na;b\n3\n")
        #expect(output.status == 0)
    }

    // MARK: - Errors and exit codes

    @Test func errorsNameTheLineAndTheExitCodeIsOne() async throws {
        let (directory, database) = try await fixture()
        let output = try await run(
            [database], stdin: "SELECT 1;\n\nSELECT *\n  FROM nowhere;\nSELECT 2;\n.nosuch\n", in: directory)
        #expect(output.stdout == "1\n2\n")
        #expect(
            output.stderr == """
                Parse error near line 3: no such table: nowhere
                Error: unknown command or invalid arguments:  "nosuch". Enter ".help" for help

                """)
        #expect(output.status == 1)
    }

    @Test func successExitsZero() async throws {
        let directory = try TemporaryDirectory()
        let output = try await run(["-c", "SELECT 1;"], in: directory)
        #expect(output.status == 0)
        #expect(output.stderr.isEmpty)
        // An in-memory database says nothing of it in a script: the output is the results alone.
        #expect(output.stdout == "1\n")
        let piped = try await run([":memory:"], stdin: "SELECT 2;\n", in: directory)
        #expect(piped.stdout == "2\n")
        #expect(piped.stderr.isEmpty)
    }

    @Test func bailStopsAtTheFirstError() async throws {
        let directory = try TemporaryDirectory()
        let script = "SELECT 1;\nSELECT nope;\nSELECT 2;\n"
        let bail = try await run(["--bail"], stdin: script, in: directory)
        #expect(bail.stdout == "1\n")
        #expect(
            bail.stderr == "Parse error near line 2: no such column: nope\n  SELECT nope;\n         ^--- error here\n")
        #expect(bail.status == 1)
        let noBail = try await run([], stdin: script, in: directory)
        #expect(noBail.stdout == "1\n2\n")
        #expect(noBail.status == 1)
        let commands = try await run(
            ["--bail", "-c", "SELECT 1;", "-c", "SELECT nope;", "-c", "SELECT 2;"], in: directory)
        #expect(commands.stdout == "1\n")
        #expect(
            commands.stderr
                == "Parse error near line 2: no such column: nope\n  SELECT nope;\n         ^--- error here\n")
        #expect(commands.status == 1)
    }

    @Test(
        "errors in the middle of a script: the rest of their command is skipped, the next commands run, as in sqlite3")
    func errorsAmongConsecutiveCommands() async throws {
        let directory = try TemporaryDirectory()
        // Consecutive SQL commands run together in one visit to the
        // database; each keeps its own error, line and results.
        let script = """
            CREATE TABLE t(x UNIQUE);
            INSERT INTO t VALUES (1);
            SELECT 1; SELECT nope; SELECT 2;
            INSERT INTO t VALUES (1);
            SELECT count(*),
              max(x) FROM t;
            .print between
            SELECT 3;
            SELEC 4;
            SELECT 5;

            """
        let ours = try await run([directory.file("ours.sqlite")], stdin: script, in: directory)
        let theirs = try await Processes.sqlite3Shell(
            [directory.file("theirs.sqlite")], stdin: script, directory: directory)
        #expect(ours.stdout == "1\n1|1\nbetween\n3\n5\n")
        #expect(ours.stdout == theirs.stdout)
        // sqlite3's words, byte for byte: the kind, the line the command
        // began on, the result code above 1, the statement and a caret.
        #expect(ours.stderr == theirs.stderr)
        #expect(ours.stderr.hasPrefix("Parse error near line 3: no such column: nope\n  SELECT nope; SELECT 2;\n"))
        #expect(ours.status == 1 && theirs.status == 1)
    }

    @Test("piped input: what was read runs before sqlive waits for more")
    func pipedInputAnswersBeforeMoreComes() async throws {
        let directory = try TemporaryDirectory()
        let child = try PipedChild(Processes.sqlive, [directory.file("piped.sqlite")])
        // A hang fails the test instead of stalling the suite: the child is
        // killed, its output ends.
        let watchdog = Task {
            try await Task.sleep(for: .seconds(60))
            child.child.terminate()
        }
        defer { watchdog.cancel() }
        @Sendable func readUntil(_ expected: String) -> String {
            var text = ""
            while !text.hasSuffix(expected) {
                let chunk = child.read()
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            return text
        }
        child.write("CREATE TABLE t(x);\nINSERT INTO t VALUES (41);\nSELECT x + 1 FROM t;\n")
        #expect(await Task.detached { readUntil("42\n") }.value == "42\n")
        // The same process, still reading: the next line runs when it comes.
        child.write("SELECT count(*) FROM t;\n")
        #expect(await Task.detached { readUntil("1\n") }.value == "1\n")
        child.closeInput()
        #expect(await child.child.exit() == 0)
    }

    @Test func exitAndQuit() async throws {
        let directory = try TemporaryDirectory()
        let exit = try await run([], stdin: "SELECT 1;\n.exit 3\nSELECT 2;\n", in: directory)
        #expect(exit.stdout == "1\n")
        #expect(exit.status == 3)
        let quit = try await run([], stdin: ".quit\nSELECT 2;\n", in: directory)
        #expect(quit.stdout == "")
        #expect(quit.status == 0)
    }

    @Test func readonlyRefusesWrites() async throws {
        let (directory, database) = try await fixture()
        let before = try Data(contentsOf: URL(fileURLWithPath: database))
        let output = try await run(
            [database, "--readonly", "-c", "DELETE FROM players;", "-c", "SELECT count(*) FROM players;"],
            in: directory)
        #expect(output.stdout == "3\n")
        #expect(output.stderr.contains("Runtime error near line 1: attempt to write a readonly database (8)"))
        #expect(output.status == 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: database)) == before)
    }

    @Test func cannotOpenIsAnError() async throws {
        let directory = try TemporaryDirectory()
        let output = try await run([directory.path, "-c", "SELECT 1;"], in: directory)
        #expect(output.status == 1)
        #expect(output.stderr.hasPrefix("Error: cannot open"))
    }

    @Test func missingScriptFile() async throws {
        let directory = try TemporaryDirectory()
        let output = try await run(["-f", directory.file("nope.sql")], in: directory)
        #expect(output.status == 1)
        #expect(output.stderr.contains("cannot open"))
    }

    // MARK: - Dot-commands

    @Test func fileAndRead() async throws {
        let (directory, database) = try await fixture()
        try directory.write("inner.sql", "SELECT 'inner';\nSELECT broken(;\n")
        let script = try directory.write(
            "outer.sql", "SELECT 'outer';\n.read \(directory.file("inner.sql"))\nSELECT 'end';\n")
        let output = try await run([database, "-f", script], in: directory)
        #expect(output.stdout == "outer\ninner\nend\n")
        // As sqlite3: the line in the file read, not its name.
        #expect(
            output.stderr
                == "Parse error near line 2: near \";\": syntax error\n  SELECT broken(;\n                ^--- error here\n"
        )
        #expect(output.status == 1)
        let bail = try await run([database, "--bail", "-f", script], in: directory)
        #expect(bail.stdout == "outer\ninner\n")
        let missing = try await run([database, "-c", ".read \(directory.file("none.sql"))"], in: directory)
        #expect(missing.stderr == "Error: cannot open \"\(directory.file("none.sql"))\"\n")
    }

    @Test func tablesAndSchema() async throws {
        let (directory, database) = try await fixture()
        let output = try await run(
            [
                database, "-c", "CREATE VIEW leaders AS SELECT name FROM players;", "-c", ".tables", "-c",
                ".tables pl%",
                "-c", ".schema players",
            ],
            in: directory)
        #expect(
            output.stdout == """
                games    leaders  players
                players
                CREATE TABLE players(id INTEGER PRIMARY KEY, gameID INTEGER NOT NULL REFERENCES games(id),
                  name TEXT NOT NULL, score INTEGER);
                CREATE INDEX players_gameID ON players(gameID);

                """)
    }

    @Test func explain() async throws {
        let (directory, database) = try await fixture()
        let output = try await run(
            [
                database, "-c",
                ".explain SELECT games.title, count(*) FROM games JOIN players ON players.gameID = games.id "
                    + "GROUP BY games.id",
            ],
            in: directory)
        #expect(output.stdout.hasPrefix("QUERY PLAN\n"))
        #expect(output.stdout.contains("--SCAN games"))
        #expect(output.stdout.contains("--SEARCH players USING COVERING INDEX players_gameID (gameID=?)"))
        let typed = try await run(
            [database, "-c", "EXPLAIN QUERY PLAN SELECT * FROM games WHERE id = 1;"], in: directory)
        #expect(typed.stdout == "QUERY PLAN\n`--SEARCH games USING INTEGER PRIMARY KEY (rowid=?)\n")
        let bytecode = try await run(
            [database, "-c", ".mode csv", "-c", ".explain --bytecode SELECT 1"], in: directory)
        let lines = bytecode.stdout.components(separatedBy: "\r\n")
        #expect(lines.first == "addr,opcode,p1,p2,p3,p4,p5,comment")
        #expect(lines.contains { $0.hasPrefix("0,Init,") })
        #expect(lines.contains { $0.contains(",ResultRow,") })
    }

    @Test func traceAndProfile() async throws {
        let directory = try TemporaryDirectory()
        let output = try await run(
            [
                "-c", ".trace on", "-c", "SELECT 1; SELECT 2;", "-c", ".trace profile", "-c", "VALUES (1), (2);",
                "-c", ".trace off", "-c", "SELECT 3;",
            ],
            in: directory)
        let lines = output.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 8)
        #expect(Array(lines.prefix(6)) == ["1", "-- trace: SELECT 1", "2", "-- trace: SELECT 2", "1", "2"])
        // Time, rows, then SQLite's counters that are not zero.
        #expect(
            lines[6].wholeMatch(
                of: /-- trace: VALUES \(1\), \(2\) \([0-9]+\.[0-9]{3} ms, 2 rows, [0-9]+ VM steps, [0-9]+ (B|KB)\)/)
                != nil, "\(lines[6])")
        #expect(lines.last == "3")
    }

    @Test func timer() async throws {
        let directory = try TemporaryDirectory()
        let output = try await run(
            ["-c", ".timer on", "-c", "SELECT 1;", "-c", ".timer off", "-c", "SELECT 2;"], in: directory)
        let lines = output.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0] == "1")
        #expect(
            lines[1].wholeMatch(of: /Run Time: real [0-9]+\.[0-9]{3} user [0-9]+\.[0-9]{6} sys [0-9]+\.[0-9]{6}/) != nil
        )
        #expect(lines[2] == "2")
    }

    @Test func helpAndPrint() async throws {
        let directory = try TemporaryDirectory()
        let output = try await run(["-c", ".help", "-c", ".help watch", "-c", ".print hello world"], in: directory)
        for command in [
            ".open", ".watch", ".pause", ".resume", ".unwatch", ".watches", ".wait", ".explain", ".trace",
            ".timer", ".mode", ".headers", ".tables", ".schema", ".read", ".help", ".quit", ".exit", ".panel",
        ] {
            #expect(
                output.stdout.contains("\n" + command + " ") || output.stdout.hasPrefix(command + " "), "\(command)")
        }
        #expect(
            output.stdout.contains(
                ".watch [--diff|--changes] [--max-rows N] [--replace] NAME SQL\n  Register live query NAME"))
        #expect(output.stdout.hasSuffix("hello world\n"))
        #expect(output.status == 0)
        // A script has no panel: `.panel` is accepted and changes nothing.
        let panel = try await run(["-c", ".panel on", "-c", ".panel off", "-c", "SELECT 1;"], in: directory)
        #expect(panel.stdout == "1\n" && panel.stderr.isEmpty && panel.status == 0)
    }

    @Test func openSwitchesDatabases() async throws {
        let (directory, database) = try await fixture()
        let output = try await run(
            [
                "-c", "SELECT count(*) FROM sqlite_master;", "-c", ".open \(database) --readonly",
                "-c", "SELECT count(*) FROM players;", "-c", "INSERT INTO games VALUES (9, 'x');", "-c",
                ".open :memory:",
                "-c", "SELECT count(*) FROM sqlite_master;",
            ],
            in: directory)
        #expect(output.stdout == "0\n3\n0\n")
        #expect(output.stderr == "Runtime error near line 4: attempt to write a readonly database (8)\n")
    }

    // MARK: - Live queries

    @Test func watchWaitAndLocalWrites() async throws {
        let (directory, database) = try await fixture()
        let output = try await run(
            [database],
            stdin: """
                .watch top SELECT name, score FROM players WHERE score IS NOT NULL ORDER BY score DESC
                UPDATE players SET score = 150 WHERE name = 'Blob';
                .wait top
                .mode box
                INSERT INTO players VALUES (4, 2, 'Blobby', 5);
                .wait
                .watches
                .unwatch top
                .wait top --timeout 0.1

                """,
            in: directory)
        let watches = output.stdout.components(separatedBy: "name|tables").count
        #expect(watches == 1, "watches is rendered in the box mode")
        var stdout = output.stdout
        if ProcessInfo.processInfo.environment["SQLIVE_SANITIZER"] != nil {
            // Slowed down several times, the session may answer "was this
            // commit yours?" after the 20 ms patience: the update is right,
            // and counted as another writer's (docs/architecture.md).
            stdout = stdout.replacingOccurrences(
                of: "-- top v3 (external, coalesced 2)", with: "-- top v3 (local, coalesced 1)")
        }
        #expect(
            stdout.hasPrefix(
                """
                -- top v1 (watching, reads players)
                name|score
                Blob Jr|100
                Blob|20
                -- top v2 (local, coalesced 1)
                name|score
                Blob|150
                Blob Jr|100
                -- top v3 (local, coalesced 1)
                ┌─────────┬───────┐
                │  name   │ score │
                ├─────────┼───────┤
                │ Blob    │ 150   │
                │ Blob Jr │ 100   │
                │ Blobby  │ 5     │
                └─────────┴───────┘

                """))
        #expect(output.stdout.contains("│ top  │ players │ 3       │"))
        #expect(output.stderr == "Error: no live query named top\n")
        #expect(output.status == 1)
    }

    @Test(
        ".watch --changes re-prints only what another process changed, matched by the primary key; --max-rows caps and counts"
    )
    func changesOnlyWatch() async throws {
        let (stdout, stderr, status) = try await watchWhileAnotherProcessWrites(
            ".watch --changes --max-rows 2 top SELECT id, name, score FROM players ORDER BY id",
            "UPDATE players SET score = 7 WHERE id = 2;")
        #expect(
            stdout.hasSuffix(
                "ready\n-- top v2 (external, coalesced 1)\nchange|row|id|name|score\n~|2|2|Blob Jr|7\n-- (the first 2 of 3 rows)\ndone\n"
            ), "\(stdout)")
        #expect(stdout.hasPrefix("-- top v1 (watching, reads players)\nid|name|score\n"))
        #expect(stdout.contains("-- (the first 2 of 3 rows)\nready"))
        #expect(stderr == "")
        #expect(status == 0)
    }

    /// Runs a script that registers `watch` (a live query named `top`),
    /// prints `ready`, waits for its next change and prints `done`; the
    /// sqlite3 shell, at its defaults, runs `write` once `ready` is out.
    private func watchWhileAnotherProcessWrites(_ watch: String, _ write: String) async throws -> (
        stdout: String, stderr: String, status: Int32
    ) {
        let (directory, database) = try await fixture()
        let script = try directory.write(
            "watch.sql",
            """
            \(watch)
            .print ready
            .wait top --timeout 30
            .print done

            """)
        let (process, out, err) = try Processes.start(
            Processes.sqlive, [database, "-f", script],
            environment: Processes.environment(directory: directory), directory: directory, name: "sqlive")
        let ready = try await Processes.waitUntil {
            try String(contentsOfFile: out, encoding: .utf8).contains("ready\n")
        }
        #expect(ready)
        try await Processes.sqlite3(database, write)
        #expect(await Processes.wait(process))
        return (
            try String(contentsOfFile: out, encoding: .utf8), try String(contentsOfFile: err, encoding: .utf8),
            await process.exit()
        )
    }

    @Test func waitSeesAnotherProcessWrite() async throws {
        let (stdout, stderr, status) = try await watchWhileAnotherProcessWrites(
            ".watch --diff top SELECT name, score FROM players ORDER BY score DESC",
            "INSERT INTO players VALUES (4, 2, 'Grandma Blob', 90);")
        #expect(
            stdout == """
                -- top v1 (watching, reads players)
                name|score
                Blob Jr|100
                Blob|20
                Blob, "Sr"|
                ready
                -- top v2 (external, coalesced 1)
                change|name|score
                +|Grandma Blob|90
                done

                """)
        #expect(stderr == "")
        #expect(status == 0)
    }

    @Test func waitTimesOut() async throws {
        let (directory, database) = try await fixture()
        let output = try await run(
            [
                database, "-c", ".watch g SELECT count(*) FROM games", "-c", ".wait g --timeout 0.2", "-c",
                ".print after",
            ],
            in: directory)
        #expect(output.stdout == "-- g v1 (watching, reads games)\ncount(*)\n2\nafter\n")
        #expect(output.stderr == "Error: timed out: no change of g within 0.2 s\n")
        #expect(output.status == 1)
    }

    @Test func pauseAndResume() async throws {
        let (directory, database) = try await fixture()
        let output = try await run(
            [database],
            stdin: """
                .watch n SELECT count(*) AS n FROM players
                .pause n
                INSERT INTO players VALUES (4, 2, 'Blobby', 5);
                .wait n --timeout 0.5
                .watches
                .resume n
                .wait n

                """,
            in: directory)
        #expect(output.stderr == "Error: timed out: no change of n within 0.5 s\n")
        #expect(
            output.stdout.contains(
                /\nn\|players\|1\|[0-9]+\|[^|]*\|[0-9.]+\|[0-9]+ VM steps, [0-9]+ (B|KB)\|paused\|committed\|(?:rows|tables|all)\|SELECT count\(\*\) AS n FROM players\n/
            ))
        #expect(output.stdout.hasSuffix("-- n v2 (local, coalesced 1)\nn\n4\n"))
    }

    @Test(".feed prints each commit's changed rows, whoever wrote them, until .feed off")
    func feed() async throws {
        let directory = try TemporaryDirectory()
        let database = directory.file("feed.sqlite")
        try await Processes.sqlite3(
            database,
            "PRAGMA journal_mode=wal; CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, n INT); INSERT INTO t VALUES (1, 'a', 1);"
        )
        let write = { (sql: String) in ".shell sqlite3 \(database) \"\(sql)\"\n.wait c --timeout 20\n" }
        let output = try await run(
            [database],
            stdin: ".feed t\n.watch c SELECT count(*), sum(n) FROM t\n"
                // The first commits may come before the feed reads rows (then they are told unknown).
                + write("INSERT INTO t VALUES (2, 'b', 2);") + write("INSERT INTO t VALUES (3, 'c', 3);")
                + write("UPDATE t SET name = 'z', n = 5 WHERE id = 1;")
                + write("DELETE FROM t WHERE id = 2;")
                + ".feed off\n" + write("INSERT INTO t VALUES (9, 'after', 9);"),
            in: directory)
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.contains("~ t rowid=1: name 'a' → 'z', n 1 → 5\n"), "\(output.stdout)")
        #expect(output.stdout.contains("- t rowid=2: id=2, name='b', n=2\n"), "\(output.stdout)")
        #expect(output.stdout.contains(/-- commit [0-9]+ \(external\)\n/))
        #expect(!output.stdout.contains("rowid=9"), "after .feed off")
    }

    @Test func watchReplaceAndErrors() async throws {
        let (directory, database) = try await fixture()
        let output = try await run(
            [database],
            stdin: """
                .watch g SELECT count(*) AS n FROM games
                .watch g SELECT 1
                .watch --replace g SELECT title FROM games ORDER BY id
                .watch bad DELETE FROM games
                .unwatch nope
                .unwatch --all
                .watches

                """,
            in: directory)
        #expect(
            output.stdout == """
                -- g v1 (watching, reads games)
                n
                2
                -- g v2 (redefined, reads games)
                title
                Family gin rummy
                Weekly poker night

                """)
        let errors = output.stderr.split(separator: "\n")
        #expect(errors.count == 3)
        #expect(
            errors.first
                == "Error: a live query named g already exists (use .watch --replace to redefine it)")
        #expect(errors.last == "Error: no live query named nope")
    }

    @Test func demoIsScriptableWhenNotATerminal() async throws {
        let directory = try TemporaryDirectory()
        let output = try await run(
            ["--demo"], stdin: ".wait leaderboard --timeout 30\nSELECT count(*) FROM games;\n", in: directory)
        #expect(
            output.stdout.hasPrefix("-- leaderboard v1 (watching, reads games, players)\ngame|players|points|best\n"))
        #expect(output.stdout.contains("-- leaderboard v2 (external, coalesced"))
        #expect(output.stdout.hasSuffix("\n3\n"))
        #expect(output.status == 0)
    }

    @Test func aMillionRowsInCSVStream() async throws {
        let directory = try TemporaryDirectory()
        let output = try await run(
            [
                "--mode", "csv", "-c",
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 1000000) SELECT x, 'row' FROM c;",
            ],
            in: directory)
        #expect(output.status == 0)
        #expect(output.stdout.utf8.count == 11_888_896)
        #expect(output.stdout.hasSuffix("1000000,row\r\n"))
    }
}
