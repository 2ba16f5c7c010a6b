import Foundation
import Testing

/// python3 on the `PATH`, which runs the database builder.
private let python3: String? = {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    return path.split(separator: ":").map { $0 + "/python3" }.first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
}()

/// The sample database (`Samples/databases/make_sample_db.py`) and the
/// scripted sessions of `Samples/scripts`, run as a user would: the builder
/// with python3, the scripts with the real `sqlive` binary, and the results
/// checked with the sqlite3 shell.
@Suite(
    "Samples: database and scripts", .serialized, .timeLimit(.minutes(5)),
    .enabled(if: python3 != nil, "python3 is not installed"))
struct SampleDatabaseTests {
    static let samples = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Samples")
    static let builder = samples.appendingPathComponent("databases/make_sample_db.py").path
    static func script(_ name: String) -> String { samples.appendingPathComponent("scripts/" + name).path }

    static let tables = ["games", "players", "matches", "scores"]

    // MARK: - Helpers

    /// Runs a process to completion, its output in files of the directory.
    func run(_ executable: String, _ arguments: [String], stdin: String? = nil, in directory: TemporaryDirectory)
        async throws -> ProcessOutput
    {
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
        let (process, out, err) = try Processes.start(
            executable, arguments, stdin: stdin, environment: environment, directory: directory)
        let finished = await Processes.wait(process, timeout: .seconds(120))
        #expect(finished, "\(executable) \(arguments) did not finish in time")
        return ProcessOutput(
            stdout: try String(contentsOfFile: out, encoding: .utf8),
            stderr: try String(contentsOfFile: err, encoding: .utf8),
            status: await process.exit())
    }

    /// Runs the builder with python3.
    func build(_ arguments: [String], in directory: TemporaryDirectory) async throws -> ProcessOutput {
        try await run(try #require(python3), [Self.builder] + arguments, in: directory)
    }

    /// Builds the sample database at the default seed and scale.
    func sampleDatabase(in directory: TemporaryDirectory, name: String = "games.sqlite") async throws -> String {
        let database = directory.file(name)
        let output = try await build([database], in: directory)
        try #require(output.status == 0, "make_sample_db.py failed: \(output.stderr)")
        return database
    }

    /// Runs commands (SQL and dot-commands, one a line) in the sqlite3 shell;
    /// returns what it printed.
    func sqlite3(_ database: String, _ commands: String..., in directory: TemporaryDirectory) async throws -> String {
        let output = try await run(
            "/usr/bin/sqlite3", ["-bail", database], stdin: commands.joined(separator: "\n") + "\n", in: directory)
        try #require(output.status == 0, "sqlite3 failed: \(output.stderr)")
        return output.stdout
    }

    /// The rows of each table, counted by the sqlite3 shell.
    func rowCounts(_ database: String) async throws -> [String: Int] {
        let sql = Self.tables.map { "SELECT '\($0)', count(*) FROM \($0);" }.joined(separator: " ")
        var counts: [String: Int] = [:]
        for line in try await Processes.sqlite3Output(database, sql).split(separator: "\n") {
            let fields = line.split(separator: "|")
            if fields.count == 2, let count = Int(fields[1]) { counts[String(fields[0])] = count }
        }
        return counts
    }

    /// The names of the database's indexes, in order.
    func indexes(_ database: String) async throws -> [String] {
        try await Processes.sqlite3Output(
            database, "SELECT name FROM sqlite_schema WHERE type = 'index' ORDER BY name;"
        ).split(separator: "\n").map(String.init)
    }

    /// The SQL after a dot-command in a sample script: the samples' slow
    /// query is taken from `.explain` in explain.sql, the live query from
    /// `.watch leaders` in watch.sql.
    func sql(after prefix: String, in script: String) throws -> String {
        let text = try String(contentsOfFile: Self.script(script), encoding: .utf8)
        let line = try #require(
            text.split(separator: "\n").first { $0.hasPrefix(prefix) }, "no line starting with \(prefix) in \(script)")
        var sql = line.dropFirst(prefix.count)
        // `.explain --advise SQL`: the SQL.
        if sql.hasPrefix("--advise ") { sql = sql.dropFirst("--advise ".count) }
        return String(sql)
    }

    /// EXPLAIN QUERY PLAN, by the sqlite3 shell.
    func plan(_ database: String, _ sql: String) async throws -> String {
        try await Processes.sqlite3Output(database, "EXPLAIN QUERY PLAN " + sql + ";")
    }

    // MARK: - The database

    @Test func theDatabaseIsLargeRelatedAndAnalyzed() async throws {
        let directory = try TemporaryDirectory()
        let database = directory.file("games.sqlite")
        let output = try await build([database], in: directory)
        #expect(output.status == 0, "\(output.stderr)")

        let counts = try await rowCounts(database)
        #expect(counts.keys.sorted() == Self.tables.sorted())
        for table in Self.tables {
            #expect((counts[table] ?? 0) > 0, "\(table) is empty")
            // The summary names each table with its rows (`  scores  195,674 rows`).
            let summary = output.stdout.split(separator: "\n").map { $0.split(separator: " ") }
                .first { $0.first.map(String.init) == table }
            let printed = summary.flatMap { $0.count > 1 ? Int($0[1].filter { $0 != "," }) : nil }
            #expect(printed == counts[table], "the summary and sqlite3 disagree on \(table):\n\(output.stdout)")
        }
        #expect(counts.values.reduce(0, +) >= 100_000)
        #expect((counts["scores"] ?? 0) > (counts["matches"] ?? 0))
        #expect((counts["matches"] ?? 0) > (counts["players"] ?? 0))
        #expect((counts["players"] ?? 0) > (counts["games"] ?? 0))

        // Every reference holds, in every table that has them.
        #expect(try await Processes.sqlite3Output(database, "PRAGMA foreign_key_check;") == "")
        let references = try await Processes.sqlite3Output(
            database,
            "SELECT count(*) FROM pragma_foreign_key_list('players') UNION ALL "
                + "SELECT count(*) FROM pragma_foreign_key_list('matches') UNION ALL "
                + "SELECT count(*) FROM pragma_foreign_key_list('scores');")
        #expect(references == "1\n1\n2\n")
        // The default rollback journal, and statistics for the planner.
        #expect(try await Processes.sqlite3Output(database, "PRAGMA journal_mode;") == "delete\n")
        let statistics = try await Processes.sqlite3Output(
            database, "SELECT DISTINCT tbl FROM sqlite_stat1 ORDER BY tbl;")
        #expect(statistics.split(separator: "\n").contains("scores"))
        #expect(try await Processes.sqlite3Output(database, "PRAGMA integrity_check;") == "ok\n")
    }

    @Test func theSlowQueryScansUntilScoresPlayerIDIsIndexed() async throws {
        let directory = try TemporaryDirectory()
        let database = try await sampleDatabase(in: directory)
        let query = try sql(after: ".explain ", in: "explain.sql")

        let before = try await plan(database, query)
        #expect(before.contains("SCAN s\n") || before.contains("AUTOMATIC"), "\(before)")
        #expect(!before.contains("scores_playerID"))

        // The index the sqlite3 shell's .expert proposes is on scores(playerID).
        let expert = try await sqlite3(database, ".expert", query + ";", in: directory)
        #expect(expert.contains(#/CREATE INDEX \w+ ON scores\(playerID\);/#), "\(expert)")

        try await Processes.sqlite3(database, "CREATE INDEX scores_playerID ON scores(playerID);")
        let after = try await plan(database, query)
        #expect(after.contains("SEARCH s USING INDEX scores_playerID (playerID=?)"), "\(after)")
        #expect(!after.contains("SCAN s\n"))
    }

    @Test func theSameSeedBuildsTheSameFile() async throws {
        let directory = try TemporaryDirectory()
        let first = try await sampleDatabase(in: directory, name: "first.sqlite")
        let again = directory.file("again.sqlite")
        #expect(try await build(["--seed", "42", again], in: directory).status == 0)
        let other = directory.file("other.sqlite")
        #expect(try await build(["--seed", "7", other], in: directory).status == 0)
        let bytes = { (path: String) in FileManager.default.contents(atPath: path) }
        #expect(bytes(first) != nil)
        #expect(bytes(first) == bytes(again))
        #expect(bytes(first) != bytes(other))
    }

    @Test func anExistingFileIsKeptUnlessForced() async throws {
        let directory = try TemporaryDirectory()
        let database = directory.file("games.sqlite")
        try "not a database".write(toFile: database, atomically: true, encoding: .utf8)
        let refused = try await build(["--scale", "0.01", database], in: directory)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("--force"))
        #expect(try String(contentsOfFile: database, encoding: .utf8) == "not a database")

        let forced = try await build(["--scale", "0.01", "--force", database], in: directory)
        #expect(forced.status == 0, "\(forced.stderr)")
        let small = try await rowCounts(database)
        #expect(small.keys.sorted() == Self.tables.sorted())
        #expect((1..<100_000).contains(small.values.reduce(0, +)), "--scale 0.01 should build fewer rows: \(small)")
        // No partial build or journal left behind.
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files.filter { $0.hasPrefix("games.sqlite") } == ["games.sqlite"], "\(files)")
    }

    // MARK: - The scripts

    @Test func watchScriptReprintsTheChangedLeaderboardAfterWait() async throws {
        let directory = try TemporaryDirectory()
        let database = try await sampleDatabase(in: directory)
        let live = try sql(after: ".watch leaders ", in: "watch.sql")
        let before = try await sqlite3(database, ".headers on", live + ";", in: directory)

        let output = try await Processes.sqlive(
            [database, "-f", Self.script("watch.sql")], directory: directory, timeout: .seconds(120))
        #expect(output.status == 0)
        #expect(output.stderr == "")

        // The first print, then the re-print `.wait` waited for, each the
        // result the sqlite3 shell gives before and after the script's write.
        let after = try await sqlite3(database, ".headers on", live + ";", in: directory)
        #expect(before != after, "the script's write should change the leaderboard")
        let first = try #require(output.stdout.firstRange(of: "-- leaders v1 (watching, reads players, scores)\n"))
        let reprint = try #require(
            output.stdout.firstRange(of: #/-- leaders v2 \(local, coalesced \d+\)\n/#), "no re-print:\n\(output.stdout)"
        )
        #expect(first.upperBound <= reprint.lowerBound)
        #expect(output.stdout[first.upperBound...].hasPrefix(before), "\(output.stdout)")
        #expect(String(output.stdout[reprint.upperBound...]) == after, "\(output.stdout)")
    }

    @Test func explainScriptShowsScanThenSearchAndLeavesNoIndex() async throws {
        let directory = try TemporaryDirectory()
        let database = try await sampleDatabase(in: directory)
        let indexesBefore = try await indexes(database)

        let output = try await Processes.sqlive(
            [database, "-f", Self.script("explain.sql")], directory: directory, timeout: .seconds(120))
        #expect(output.status == 0)
        #expect(output.stderr == "")

        let scan = try #require(output.stdout.firstRange(of: "|--SCAN s\n"), "\(output.stdout)")
        let search = try #require(
            output.stdout.firstRange(of: "|--SEARCH s USING INDEX scores_playerID (playerID=?)\n"), "\(output.stdout)")
        #expect(scan.upperBound <= search.lowerBound)
        #expect(output.stdout.split(separator: "\n").filter { $0 == "QUERY PLAN" }.count == 2)
        // The advice, asked of SQLite's planner, is the index the script creates.
        #expect(output.stdout.contains("-- advice: CREATE INDEX scores_playerID ON scores(playerID);\n"))
        #expect(output.stdout.contains("--   |--SEARCH s USING INDEX scores_playerID (playerID=?)\n"))
        // The index was dropped again: the same indexes as before, and the
        // script's own list at the end says so.
        await #expect(try indexes(database) == indexesBefore)
        #expect(!indexesBefore.contains("scores_playerID"))
        #expect(output.stdout.hasSuffix("\n" + indexesBefore.joined(separator: "\n") + "\n"), "\(output.stdout)")
    }

    @Test func profileScriptShowsTimeAndRowsOfEachStatement() async throws {
        let directory = try TemporaryDirectory()
        let database = try await sampleDatabase(in: directory)
        let indexesBefore = try await indexes(database)
        let slow = try sql(after: ".explain ", in: "explain.sql")

        let output = try await Processes.sqlive(
            [database, "-f", Self.script("profile.sql")], directory: directory, timeout: .seconds(120))
        #expect(output.status == 0)
        #expect(output.stderr == "")

        // Each statement's result rows, then `-- trace: SQL (TIME ms, N rows…)`
        // where N is the number of rows just printed (list mode, no header).
        let trace = #/^-- trace: (.+) \((\d+\.\d{3}) ms, (\d+) rows?(, .*)?\)$/#
        var printed = 0
        var traced: [String] = []
        for line in output.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            if let match = line.wholeMatch(of: trace) {
                #expect(Int(match.3) == printed, "\(line) after \(printed) rows")
                traced.append(String(match.1))
                printed = 0
            } else {
                #expect(!line.hasPrefix("-- trace"), "\(line)")
                printed += 1
            }
        }
        #expect(printed == 0, "rows after the last trace line")
        // The slow query, without and with the index (with a LIMIT in the script).
        #expect(traced.filter { $0.hasPrefix(slow) }.count == 2, "\(traced)")
        #expect(traced.contains("CREATE INDEX scores_playerID ON scores(playerID)"))
        #expect(traced.contains("ROLLBACK"))
        #expect(traced.count >= 5)
        await #expect(try indexes(database) == indexesBefore)
    }
}
