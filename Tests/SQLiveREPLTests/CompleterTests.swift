import SQLiveEngine
import Testing

@testable import SQLiveREPL

@Suite("Completion")
struct CompleterTests {
    let schema = CompletionSchema(tables: [
        (name: "games", columns: ["id", "title"]),
        (name: "players", columns: ["id", "gameID", "name", "score"]),
        (name: "player stats", columns: ["n"]),
    ])

    var completer: Completer {
        Completer(
            schema: schema, liveQueryNames: ["leaders", "lobby"],
            listDirectory: { directory in
                directory == "."
                    ? [("demo.sqlite", false), ("data", true), (".hidden", false)]
                    : directory == "data/" ? [("a.sql", false)] : []
            })
    }

    func candidates(_ text: String) -> [String] {
        completer.complete(before: text).candidates
    }

    @Test func dotCommands() {
        #expect(candidates(".wa") == [".wait", ".watch", ".watches"])
        #expect(candidates(".mode c") == ["column", "csv"])
        #expect(candidates(".trace p") == ["profile"])
        #expect(candidates(".headers o") == ["off", "on"])
        #expect(candidates(".panel o") == ["off", "on"])
        #expect(candidates(".pa") == [".panel", ".parameter", ".pause"])
        #expect(candidates(".help exp") == ["explain"])
    }

    @Test func liveQueryNames() {
        #expect(candidates(".unwatch l") == ["leaders", "lobby"])
        #expect(candidates(".unwatch --") == ["--all"])
        #expect(candidates(".wait le") == ["leaders"])
        #expect(candidates(".pause lo") == ["lobby"])
        #expect(candidates(".resume ") == ["leaders", "lobby"])
    }

    @Test func filePaths() {
        #expect(candidates(".open d") == ["data/", "demo.sqlite"])
        #expect(candidates(".read data/") == ["data/a.sql"])
        #expect(candidates(".open .h") == [".hidden"])
        #expect(completer.complete(before: ".open da").appendSpace == false)
        #expect(candidates(".open --r") == ["--readonly"])
    }

    @Test("Files after .import, .output and .once; then tables after .import FILE, .dump and .indexes")
    func importDumpOutput() {
        #expect(candidates(".import d") == ["data/", "demo.sqlite"])
        #expect(candidates(".import --") == ["--csv", "--schema", "--skip", "--tsv"])
        #expect(candidates(".import --skip ") == [])
        #expect(candidates(".import --skip 1 data/") == ["data/a.sql"])
        #expect(candidates(".import --tsv data/a.sql pl") == ["\"player stats\"", "players"])
        #expect(candidates(".output d") == ["data/", "demo.sqlite"])
        #expect(candidates(".once data/") == ["data/a.sql"])
        #expect(candidates(".dump g") == ["games"])
        #expect(candidates(".indexes pl") == ["\"player stats\"", "players"])
        #expect(candidates(".changes o") == ["off", "on"])
        #expect(candidates(".mode t") == ["table", "tabs", "tcl"])
        #expect(candidates(".im") == [".import"])
    }

    @Test func tablesAfterFrom() {
        #expect(candidates("SELECT * FROM pl") == ["\"player stats\"", "players"])
        #expect(candidates("select * from g") == ["games"])
        #expect(candidates("INSERT INTO ga") == ["games"])
    }

    @Test func keywordsKeepTheCaseTyped() {
        #expect(candidates("sel").contains("select"))
        #expect(candidates("SEL").contains("SELECT"))
    }

    @Test func columnsOfTheTablesNamed() {
        let found = candidates("SELECT sc")
        #expect(!found.contains("score"), "no table named yet")
        #expect(candidates("SELECT * FROM players WHERE sc") == ["score"])
        #expect(candidates("SELECT * FROM players p WHERE p.na") == ["p.name"])
        #expect(candidates("SELECT * FROM games AS g JOIN players ON g.") == ["g.id", "g.title"])
        #expect(candidates("SELECT games.ti") == ["games.title"])
    }

    @Test("Through the language server's scope: aliases in any clause, CTEs and their columns")
    func throughTheScope() {
        #expect(candidates("SELECT p.na") == [], "no FROM yet: p is nothing")
        #expect(candidates("WITH top AS (SELECT name FROM players) SELECT * FROM to") == ["top"])
        #expect(candidates("WITH top AS (SELECT name FROM players) SELECT * FROM top t JOIN g") == ["games"])
        #expect(candidates("SELECT * FROM players AS p, games WHERE p.sc") == ["p.score"])
    }

    @Test func multiLineStatements() {
        #expect(candidates("SELECT *\nFROM players\nWHERE ga") == ["gameID", "games"])
        // A leading dot on a later line is SQL, not a dot-command.
        #expect(candidates("SELECT *\nFROM ga") == ["games"])
    }

    @Test func watchCompletesItsSQL() {
        #expect(candidates(".watch x SELECT * FROM pla") == ["\"player stats\"", "players"])
        #expect(candidates(".watch --") == ["--changes", "--diff", "--max-rows", "--replace"])
        #expect(candidates(".explain --bytecode SELECT * FROM gam") == ["games"])
    }

    @Test func wordBoundaries() {
        #expect(Completer.word(before: "SELECT a,b") == "b")
        #expect(Completer.word(before: "x=(p.na") == "p.na")
        #expect(Completer.word(before: ".open /tmp/x") == "/tmp/x")
    }

    @Test("A subquery's and a CTE's columns, as SQLite names them, through the database's checker")
    func subqueryColumns() async throws {
        let database = try await LiveDatabase.open(.memory)
        _ = try await database.execute("CREATE TABLE players(id INTEGER PRIMARY KEY, name TEXT, score INTEGER)")
        let checker = try await database.makeChecker()
        let completer = Completer(
            schema: CompletionSchema(try await database.schema()), columnNames: { checker.columnNames(of: $0) })
        // The word being typed ends the text, so the CTE or the subquery comes before it.
        #expect(
            completer.complete(before: "WITH top AS (SELECT name, score * 2 AS doubled FROM players) SELECT top.d")
                .candidates == ["top.doubled"])
        #expect(
            completer.complete(before: "SELECT * FROM (SELECT name AS who FROM players) AS p WHERE p.w")
                .candidates == ["p.who"])
        // Without a checker, a subquery's columns are unknown.
        #expect(
            Completer(schema: CompletionSchema(try await database.schema()))
                .complete(before: "SELECT * FROM (SELECT name AS who FROM players) AS p WHERE p.w").candidates
                .isEmpty)
        await database.close()
    }
}
