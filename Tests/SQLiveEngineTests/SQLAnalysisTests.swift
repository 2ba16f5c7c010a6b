import Foundation
import SQLiveEngine
import SQLiveTestSupport
import Testing

/// Tokens, statements and scopes, as the language server reads SQL.
@Suite("SQL analysis", .timeLimit(.minutes(5)))
struct SQLAnalysisTests {
    @Test func tokensKeepTheirBytes() {
        let text = "SELECT \"a b\", x'00', 1.5e-3, :name FROM [t] -- done\n;"
        let source = SQLSource(text)
        #expect(
            source.tokens.map(\.kind) == [
                .word, .quotedName, .comma, .string, .comma, .number, .comma, .parameter, .word, .quotedName, .comment,
                .semicolon,
            ])
        #expect(
            source.tokens.map(source.text(of:)) == [
                "SELECT", "\"a b\"", ",", "x'00'", ",", "1.5e-3", ",", ":name", "FROM", "[t]", "-- done", ";",
            ])
        #expect(source.name(of: source.tokens[1]) == "a b")
        let doubled = SQLSource("\"a\"\"b\"")
        #expect(doubled.name(of: doubled.tokens[0]) == "a\"b")
        // A word starting with x is a word.
        #expect(SQLSource("xyz").tokens.map(\.kind) == [.word])
    }

    @Test func statementsEndWhereSQLiteEndsThem() {
        let text = """
            -- header
            CREATE TRIGGER t AFTER INSERT ON a BEGIN
              UPDATE b SET n = n + 1; DELETE FROM c;
            END;
            SELECT ';' ; ;
            SELECT 2
            """
        let source = SQLSource(text)
        #expect(
            source.statements.map(source.text(of:)) == [
                "CREATE TRIGGER t AFTER INSERT ON a BEGIN\n  UPDATE b SET n = n + 1; DELETE FROM c;\nEND;",
                "SELECT ';' ;", "SELECT 2",
            ])
        #expect(source.statements.map(\.isTerminated) == [true, true, false])
        #expect(source.firstWord(of: source.statements[0]) == "CREATE")
    }

    @Test func checkerPlacesErrorsAndJudgesMigrations() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        try await sqlite3(path, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT NOT NULL);")
        let checker = try SQLChecker(.file(path))
        let text = "SELECT c FROM t;\nCREATE TABLE u(x);\nINSERT INTO u VALUES (1);\nSELECT \"b2\" FROM t;"
        let source = SQLSource(text)
        let problems = checker.check(source)
        #expect(problems.map(\.message).first == "no such column: c")
        #expect(problems.map { String(decoding: source.bytes[$0.range], as: UTF8.self) } == ["c", "\"b2\""])
        #expect(problems.map(\.severity) == [.error, .warning])
        // The table created by the document was never created for real.
        #expect(try await runCommand("/usr/bin/env", ["sqlite3", path, "SELECT count(*) FROM sqlite_schema"]) == "1\n")

        let relation = try #require(checker.catalog().relation(named: "T"))
        #expect(relation.columns.map(\.name) == ["a", "b"])
        #expect(relation.column(named: "B")?.notNull == true)
        #expect(checker.columnNames(of: "SELECT a AS x, b FROM t") == ["x", "b"])
        #expect(checker.isReadOnly("DELETE FROM t") == false)
    }

    @Test("A qualified column that does not exist is underlined whole, not at its qualifier")
    func qualifiedColumnRange() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        try await sqlite3(path, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT);")
        let checker = try SQLChecker(.file(path))
        let source = SQLSource("SELECT x.b, x.zz3 FROM t AS x WHERE x.a > 0;")
        let problems = checker.check(source)
        #expect(problems.map(\.message) == ["no such column: x.zz3"])
        #expect(problems.map { String(decoding: source.bytes[$0.range], as: UTF8.self) } == ["x.zz3"])
    }

    @Test("A count that takes longer than its budget leaves the size out, and a count without one is made")
    func countBudget() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        try await sqlite3(
            path,
            """
            CREATE TABLE big(x); CREATE TABLE small(x);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 900000) INSERT INTO big SELECT i FROM n;
            INSERT INTO small VALUES (1), (2);
            """)
        let checker = try SQLChecker(.file(path))
        #expect(checker.rowCount(of: "big", budget: .microseconds(100)) == nil)
        #expect(checker.rowCount(of: "small", budget: .seconds(10)) == 2)
        #expect(checker.rowCount(of: "big", budget: .microseconds(100)) == nil, "not counted again")
        #expect(checker.rowCount(of: "big") == 900_000)
        #expect(checker.rowCount(of: "big", budget: .microseconds(100)) == 900_000, "known now")
    }

    @Test func checkerRefusesWhatIsNotADatabase() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.txt")
        try Data("hello, this is not a database at all, but long enough to look like a header".utf8)
            .write(to: URL(fileURLWithPath: path))
        #expect(throws: SQLiveError.self) { try SQLChecker(.file(path)) }
        #expect(throws: SQLiveError.self) { try SQLChecker(.file(directory.path("missing.sqlite"))) }
        #expect(!FileManager.default.fileExists(atPath: directory.path("missing.sqlite")))
    }

    @Test func scopeResolvesAliasesJoinsAndSubqueries() throws {
        let checker = try SQLChecker(
            .schema(["CREATE TABLE players(id INTEGER PRIMARY KEY, name)", "CREATE TABLE games(id, playerID)"]))
        let text =
            "WITH best(n) AS (SELECT 1) SELECT * FROM players p JOIN games AS g ON 1, (SELECT name AS who FROM players) s, best"
        let source = SQLSource(text)
        let scope = SQLScope(source, source.statements[0], catalog: checker.catalog()) { checker.columnNames(of: $0) }
        #expect(scope.entries.map(\.name) == ["p", "g", "s", "best"])
        #expect(scope.entry(named: "P")?.relation == "players")
        #expect(scope.entry(named: "s")?.columns.map(\.name) == ["who"])
        #expect(scope.entry(named: "best")?.columns.map(\.name) == ["n"])
    }

    @Test func planHintsNameCostlySteps() {
        let plan = QueryPlan(nodes: [
            .init(id: 2, parent: 0, detail: "SCAN p"),
            .init(id: 5, parent: 0, detail: "SEARCH g USING AUTOMATIC COVERING INDEX (playerID=?)"),
            .init(id: 9, parent: 0, detail: "USE TEMP B-TREE FOR ORDER BY"),
            .init(id: 11, parent: 0, detail: "SCAN CONSTANT ROW"),
        ])
        let hints = plan.hints { $0 == "p" ? ("players", 1000) : nil }
        #expect(
            hints.map(\.kind) == [
                .fullScan(table: "players"), .automaticIndex(table: "g"), .temporaryBTree(purpose: "ORDER BY"),
            ])
        #expect(hints.first?.explanation.hasPrefix("full scan of players (as p, about 1000 rows)") == true)
    }
}
