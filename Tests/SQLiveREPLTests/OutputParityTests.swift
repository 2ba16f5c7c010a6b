import Foundation
import SQLiveTestSupport
import Testing

/// Renderers write bytes straight from the statement being stepped; what
/// they write must stay what the sqlite3 shell writes for the same rows.
@Suite("Output matches the sqlite3 shell", .timeLimit(.minutes(5)))
struct OutputParityTests {
    /// Values that need care: separators and quotes inside text, line
    /// breaks, empty text, non-ASCII text, negative and large integers,
    /// reals that print with an exponent, and NULL.
    static let rows = """
        CREATE TABLE t(a, b);
        INSERT INTO t VALUES ('plain', 1), ('a,b', -7), ('say "hi"', 9223372036854775807),
          ('line' || char(10) || 'break', 1.5), ('', 1e20), ('ünïcödé ✓', 0.1), ('x|y', -2.5e-7),
          ('cr' || char(13), NULL);
        """

    /// sqlite3 quotes text with bytes above 0x7F (and spaces, and single
    /// quotes), and `.mode csv` ends rows with CRLF: sqlive does the same.
    @Test("csv quotes non-ASCII text and ends rows with CRLF, as sqlite3's .mode csv")
    func csvNonASCII() async throws {
        let directory = try TemporaryDirectory()
        let database = directory.file("t.sqlite")
        try await Processes.sqlite3(database, Self.rows)
        let ours = try await Processes.sqlive(
            [database, "--mode", "csv", "-c", "SELECT * FROM t WHERE b = 0.1"], directory: directory)
        #expect(ours.stdout == "\"ünïcödé ✓\",0.1\r\n")
    }

    func shell(_ arguments: [String]) async throws -> String {
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readToEndRetrying()
        await process.exit()
        return String(decoding: output, as: UTF8.self)
    }

    @Test("csv, with and without headers, is the shell's .mode csv", arguments: [false, true])
    func csv(headers: Bool) async throws {
        let directory = try TemporaryDirectory()
        let database = directory.file("t.sqlite")
        try await Processes.sqlite3(database, Self.rows)
        let query = "SELECT * FROM t"
        let ours = try await Processes.sqlive(
            [database, "--mode", "csv", "-c", ".headers \(headers ? "on" : "off")", "-c", query],
            directory: directory)
        #expect(ours.status == 0)
        let theirs = try await shell([
            "-cmd", ".mode csv", "-cmd", ".headers \(headers ? "on" : "off")", database, query,
        ])
        #expect(ours.stdout.contains("\r\n"))
        #expect(ours.stdout == theirs)
    }

    @Test("list mode is the shell's for every value, NULL too")
    func list() async throws {
        let directory = try TemporaryDirectory()
        let database = directory.file("t.sqlite")
        try await Processes.sqlite3(database, Self.rows)
        let query = "SELECT a, b FROM t"
        let ours = try await Processes.sqlive([database, "-c", query], directory: directory)
        #expect(ours.status == 0)
        await #expect(ours.stdout == (try shell([database, query])))
        #expect(ours.stdout.hasSuffix("cr\r|\n"))
    }

    @Test("tabs mode is the shell's, headers and all")
    func tabs() async throws {
        let directory = try TemporaryDirectory()
        let database = directory.file("t.sqlite")
        try await Processes.sqlite3(database, Self.rows)
        let query = "SELECT a, b FROM t WHERE b IS NOT NULL"
        let ours = try await Processes.sqlive(
            [database, "--mode", "tabs", "-c", ".headers on", "-c", query], directory: directory)
        #expect(ours.status == 0)
        await #expect(ours.stdout == (try shell(["-tabs", "-header", database, query])))
        #expect(ours.stdout.hasPrefix("a\tb\nplain\t1\n"))
    }

    /// The same script through both shells: `.changes` after every SQL
    /// command (the last statement's changes, not reset by a SELECT), and
    /// nothing after a failure.
    @Test(".changes prints the shell's counters after each SQL command")
    func changes() async throws {
        let directory = try TemporaryDirectory()
        let script = """
            .changes on
            CREATE TABLE t(a);
            INSERT INTO t VALUES (1), (2);
            SELECT 1;
            INSERT INTO t VALUES (3); UPDATE t SET a = a + 1;
            SELECT count(*) FROM t; DELETE FROM t WHERE a = 2;
            .changes off
            INSERT INTO t VALUES (9);
            .changes on
            SELECT nope;
            SELECT 2;
            WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 5) INSERT INTO t SELECT x FROM c;

            """
        let ours = try await Processes.sqlive([directory.file("ours.sqlite")], stdin: script, directory: directory)
        let theirs = try await Processes.sqlite3Shell(
            [directory.file("theirs.sqlite")], stdin: script, directory: directory)
        #expect(ours.stdout == theirs.stdout)
        #expect(ours.stdout.contains("changes: 3   total_changes: 6\n"))
        #expect(ours.stdout.hasSuffix("changes: 5   total_changes: 13\n"))
    }

    @Test(".indexes lists the shell's names, by table pattern, attached databases too")
    func indexes() async throws {
        let directory = try TemporaryDirectory()
        let database = directory.file("t.sqlite")
        try await Processes.sqlite3(
            database,
            """
            CREATE TABLE games(id INTEGER PRIMARY KEY, title TEXT UNIQUE);
            CREATE TABLE players(id, gameID, name, PRIMARY KEY (id, gameID));
            CREATE INDEX players_gameID ON players(gameID);
            CREATE INDEX "players by name" ON players(name);
            CREATE TABLE scores(p, points);
            CREATE INDEX scores_p ON scores(p);
            """)
        try await Processes.sqlite3(directory.file("other.sqlite"), "CREATE TABLE x(a); CREATE INDEX x_a ON x(a);")
        let attach = "ATTACH '\(directory.file("other.sqlite"))' AS other;"
        for arguments in [[".indexes"], [".indexes players"], [".indexes g%"], [".indices %s"], [".indexes none"]] {
            let ours = try await Processes.sqlive([database, "-c", attach, "-c"] + arguments, directory: directory)
            let theirs = try await shell([database, attach] + arguments)
            // Byte for byte: every name padded to the widest, the last of a line too.
            #expect(ours.stdout == theirs, "\(arguments)")
            #expect(ours.status == 0)
        }
        let all = try await Processes.sqlive([database, "-c", attach, "-c", ".indexes"], directory: directory)
        #expect(all.stdout.contains("other.x_a"))
        #expect(all.stdout.contains("sqlite_autoindex_games_1"))
    }

    @Test("Many statements' results, buffered, come out whole, and the error after them is reported")
    func bufferedOrder() async throws {
        let directory = try TemporaryDirectory()
        let database = directory.file("t.sqlite")
        try await Processes.sqlite3(database, "CREATE TABLE n(i);")
        let script = (1...3000).map { "SELECT \($0);" }.joined(separator: "\n") + "\nSELECT * FROM missing;\n"
        let ours = try await Processes.sqlive([database], stdin: script, directory: directory)
        #expect(ours.stdout == (1...3000).map { "\($0)\n" }.joined())
        #expect(ours.stderr == "Parse error near line 3001: no such table: missing\n")
        #expect(ours.status == 1)
    }
}
