import Foundation
import Testing

/// "Why is it slow, and what would fix it": `.explain` hints, `.explain
/// --advise` checked against the sqlite3 shell's own `.expert`, `.trace
/// profile` counters and `.watches` costs, through the real binary on a
/// database of a realistic shape built by the sqlite3 shell.
@Suite("Profiling: hints, advice and counters", .timeLimit(.minutes(5)))
struct ProfilingTests {
    static let schema = """
        CREATE TABLE games(id INTEGER PRIMARY KEY, title TEXT NOT NULL);
        CREATE TABLE players(id INTEGER PRIMARY KEY, gameID INTEGER NOT NULL REFERENCES games(id), name TEXT NOT NULL);
        CREATE INDEX players_gameID ON players(gameID);
        CREATE TABLE scores(
          id INTEGER PRIMARY KEY, playerID INTEGER NOT NULL REFERENCES players(id), points INTEGER NOT NULL,
          playedAt TEXT NOT NULL);
        WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 50)
        INSERT INTO games SELECT x, 'game ' || x FROM c;
        WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000)
        INSERT INTO players SELECT x, 1 + x % 50, 'player ' || x FROM c;
        WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000)
        INSERT INTO scores(playerID, points, playedAt)
        SELECT 1 + (x * 7919) % 2000, x % 97, date('2024-01-01', '+' || (x % 365) || ' days') FROM c;
        """

    /// Statements that scan or sort today.
    static let slow = [
        "SELECT p.name, sum(s.points) FROM players p JOIN scores s ON s.playerID = p.id WHERE p.gameID = 3 GROUP BY p.id",
        "SELECT * FROM scores WHERE playerID = 42 AND points > 90",
        "SELECT id FROM scores WHERE playedAt >= '2024-12-01' ORDER BY playedAt",
    ]

    func database() async throws -> (TemporaryDirectory, String) {
        let directory = try TemporaryDirectory()
        let path = directory.file("games.sqlite")
        try await Processes.sqlite3(path, Self.schema)
        return (directory, path)
    }

    func sqlive(_ database: String, _ commands: [String], in directory: TemporaryDirectory) async throws -> String {
        let output = try await Processes.sqlive(
            [database] + commands.flatMap { ["-c", $0] }, directory: directory)
        #expect(output.status == 0, "\(output.stderr)")
        return output.stdout
    }

    /// `CREATE INDEX name ON table(columns)` lines, as (table, columns).
    static func proposals(in text: String) -> [String] {
        text.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: #"CREATE INDEX \S+ ON (\w+)\(([^)]*)\)"#, options: .regularExpression)
            else { return nil }
            let statement = line[range]
            let on = statement.range(of: " ON ")!
            return String(statement[on.upperBound...]).replacingOccurrences(of: " ", with: "")
        }
    }

    /// What the sqlite3 shell's `.expert` proposes for a statement.
    static func expert(_ database: String, _ statement: String) async throws -> String {
        try await Processes.sqlite3Output(database, statement + ";", options: ["-cmd", ".expert"])
    }

    @Test(arguments: slow)
    func adviceIsWhatTheSQLite3ShellsExpertProposes(_ statement: String) async throws {
        let (directory, database) = try await database()
        let before = try await Processes.sqlite3Output(database, "SELECT sql FROM sqlite_schema ORDER BY name")

        let advised = try await sqlive(database, [".explain --advise \(statement)"], in: directory)
        #expect(advised.contains("⚠ "), "no hint for a plan that scans or sorts:\n\(advised)")
        let ours = Self.proposals(in: advised)
        let expert = await Self.proposals(in: try Self.expert(database, statement))
        #expect(!ours.isEmpty, "\(advised)")
        #expect(ours == expert, "sqlive proposed \(ours), .expert \(expert):\n\(advised)")
        // Advice never changes the database.
        #expect(try await Processes.sqlite3Output(database, "SELECT sql FROM sqlite_schema ORDER BY name") == before)

        // Following the advice: the plan searches with the index, and
        // nothing is costly any more.
        let create = try #require(advised.split(separator: "\n").first { $0.hasPrefix("-- advice: CREATE INDEX") })
        try await Processes.sqlite3(database, String(create.dropFirst("-- advice: ".count)))
        let after = try await sqlive(database, [".explain \(statement)"], in: directory)
        let name = try #require(create.split(separator: " ").dropFirst(4).first)
        #expect(after.contains("USING INDEX \(name)") || after.contains("USING COVERING INDEX \(name)"), "\(after)")
        #expect(!after.contains("⚠"), "\(after)")
    }

    @Test func aPlanThatSearchesNeedsNoAdvice() async throws {
        let (directory, database) = try await database()
        let output = try await sqlive(
            database, [".explain --advise SELECT name FROM players WHERE id = 7"], in: directory)
        #expect(
            output
                == "QUERY PLAN\n`--SEARCH players USING INTEGER PRIMARY KEY (rowid=?)\n-- advice: no index would change this plan\n"
        )
    }

    @Test func hintsNameTheTableBehindAnAliasAndItsSize() async throws {
        let (directory, database) = try await database()
        let output = try await sqlive(database, [".explain \(Self.slow[0])"], in: directory)
        #expect(output.contains("`--SCAN s\n") || output.contains("|--SCAN s\n"), "\(output)")
        // No sqlite_stat1: the rows are counted.
        #expect(output.contains("⚠ full scan of scores (as s, about 100000 rows)"), "\(output)")
        // With statistics, they are read from sqlite_stat1.
        try await Processes.sqlite3(database, "ANALYZE")
        let analyzed = try await sqlive(database, [".explain \(Self.slow[0])"], in: directory)
        #expect(analyzed.contains("full scan of scores (as s, about 100000 rows)"), "\(analyzed)")
    }

    @Test func profileCountersAppearWhereTheyMustAndOnlyThere() async throws {
        let (directory, database) = try await database()
        let output = try await sqlive(
            database,
            [
                ".trace profile",
                "SELECT count(*) FROM scores WHERE points = 3;",
                "SELECT id FROM scores ORDER BY points, id LIMIT 1;",
                "SELECT name FROM players WHERE id = 7;",
                "SELECT count(*) FROM players p JOIN players q ON q.name = p.name;",
            ], in: directory)
        let traces = output.split(separator: "\n").filter { $0.hasPrefix("-- trace:") }
        #expect(traces.count == 4, "\(output)")
        guard traces.count == 4 else { return }
        // A full scan of 100000 rows.
        #expect(traces[0].contains("full scan 99999 steps"), "\(traces[0])")
        #expect(!traces[0].contains("sort"), "\(traces[0])")
        // A scan and a sort.
        #expect(traces[1].contains("full scan") && traces[1].contains("1 sort"), "\(traces[1])")
        // A rowid lookup: no scan, no sort, no automatic index.
        #expect(!traces[2].contains("full scan") && !traces[2].contains("sort"), "\(traces[2])")
        #expect(!traces[2].contains("automatic index"), "\(traces[2])")
        #expect(traces[2].contains("VM steps"), "\(traces[2])")
        // An unindexed join: SQLite builds an automatic index, and says so.
        #expect(traces[3].contains("automatic index"), "\(traces[3])")
    }

    @Test func watchesShowEachLiveQuerysCost() async throws {
        let (directory, database) = try await database()
        let output = try await sqlive(
            database,
            [
                ".mode list", ".headers on",
                ".watch slow SELECT count(*) FROM scores WHERE points = 3",
                ".watch quick SELECT name FROM players WHERE id = 7",
                ".watches",
            ], in: directory)
        let lines = output.split(separator: "\n")
        let header = try #require(lines.first { $0.hasPrefix("name|") })
        let columns = header.split(separator: "|", omittingEmptySubsequences: false)
        let cost = try #require(columns.firstIndex(of: "cost"))
        let milliseconds = try #require(columns.firstIndex(of: "last_ms"))
        func row(_ name: String) throws -> [Substring] {
            try #require(lines.first { $0.hasPrefix(name + "|") }).split(
                separator: "|", omittingEmptySubsequences: false)
        }
        #expect(try row("slow")[cost].contains("full scan 99999 steps"))
        #expect(try !row("quick")[cost].contains("full scan"))
        #expect(Double(try row("slow")[milliseconds]) != nil)
    }
}
