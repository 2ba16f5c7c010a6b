import Foundation
import SQLiveProtocol
import SQLiveTestSupport
import Testing

/// The Language Server Protocol side of `sqlive --lsp`, over the real
/// binary: what an editor sends, and what it shows.
@Suite("Language server", .timeLimit(.minutes(3)))
struct LanguageServerTests {
    /// A started server with a database of players and games, and helpers
    /// to open documents and wait for their diagnostics.
    struct Editor {
        let directory: TemporaryDirectory
        let server: ServerProcess
        let initializeResult: JSONValue

        var database: String { directory.path("games.sqlite") }

        init(
            encodings: [String]? = nil, initializationOptions: JSONValue? = nil, databaseArgument: Bool = true,
            hoverFormats: [String]? = nil, refreshSupport: Bool = false
        )
            async throws
        {
            directory = try TemporaryDirectory()
            try await sqlite3(
                directory.path("games.sqlite"),
                """
                CREATE TABLE players(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INT);
                CREATE INDEX players_score ON players(score);
                CREATE TABLE games(id INTEGER PRIMARY KEY, title TEXT, playerID INT REFERENCES players(id));
                INSERT INTO players(name, score) VALUES ('Ann', 12), ('Bob', 7);
                """)
            server = try ServerProcess(
                arguments: ["--lsp"] + (databaseArgument ? ["games.sqlite"] : []), directory: directory.url)
            var capabilities: [String: JSONValue] = ["window": ["workDoneProgress": true]]
            if let encodings { capabilities["general"] = ["positionEncodings": .array(encodings.map { .string($0) })] }
            if let hoverFormats {
                capabilities["textDocument"] = ["hover": ["contentFormat": .array(hoverFormats.map { .string($0) })]]
            }
            if refreshSupport {
                capabilities["workspace"] = [
                    "inlayHint": ["refreshSupport": true], "codeLens": ["refreshSupport": true],
                ]
            }
            var params: [String: JSONValue] = [
                "processId": .null, "rootUri": .string(directory.url.absoluteString),
                "capabilities": .object(capabilities),
            ]
            if let initializationOptions { params["initializationOptions"] = initializationOptions }
            initializeResult = try await server.result("initialize", .object(params))
            server.notify("initialized", [:])
        }

        func uri(_ name: String) -> String {
            directory.url.appendingPathComponent(name).absoluteString
        }

        /// Opens a document and returns its first diagnostics.
        @discardableResult
        func open(_ name: String, _ text: String, version: Int = 1) async throws -> [JSONValue] {
            let uri = uri(name)
            server.notify(
                "textDocument/didOpen",
                [
                    "textDocument": [
                        "uri": .string(uri), "languageId": "sql", "version": .integer(Int64(version)),
                        "text": .string(text),
                    ]
                ])
            return try await diagnostics(name)
        }

        /// The next diagnostics published for a document that pass `until`.
        func diagnostics(_ name: String, until predicate: @escaping @Sendable ([JSONValue]) -> Bool = { _ in true })
            async throws -> [JSONValue]
        {
            let uri = uri(name)
            let params = try await server.notification("textDocument/publishDiagnostics") { params in
                params["uri"] == .string(uri) && predicate(params["diagnostics"]?.arrayValue ?? [])
            }
            return params["diagnostics"]?.arrayValue ?? []
        }

        func change(_ name: String, version: Int, _ changes: [JSONValue]) {
            server.notify(
                "textDocument/didChange",
                [
                    "textDocument": ["uri": .string(uri(name)), "version": .integer(Int64(version))],
                    "contentChanges": .array(changes),
                ])
        }

        func position(_ line: Int, _ character: Int) -> JSONValue {
            ["line": .integer(Int64(line)), "character": .integer(Int64(character))]
        }

        func at(_ name: String, _ line: Int, _ character: Int) -> JSONValue {
            ["textDocument": ["uri": .string(uri(name))], "position": position(line, character)]
        }

        func range(_ diagnostic: JSONValue) -> [Int64?] {
            let range = diagnostic["range"]
            return [
                range?["start"]?["line"]?.integerValue, range?["start"]?["character"]?.integerValue,
                range?["end"]?["line"]?.integerValue, range?["end"]?["character"]?.integerValue,
            ]
        }
    }

    // MARK: - Lifecycle

    @Test func initializeAnswersStandardCapabilitiesWithSQLiveOwnUnderExperimental() async throws {
        let editor = try await Editor()
        let capabilities = try #require(editor.initializeResult["capabilities"])
        #expect(capabilities["positionEncoding"] == "utf-16")
        #expect(capabilities["textDocumentSync"] == ["openClose": true, "change": 2])
        #expect(capabilities["completionProvider"]?["triggerCharacters"] == ["."])
        #expect(capabilities["hoverProvider"] == true)
        #expect(capabilities["codeLensProvider"] != nil)
        #expect(
            capabilities["executeCommandProvider"]?["commands"]
                == ["sqlive.run", "sqlive.watch", "sqlive.unwatch", "sqlive.explain"])
        let sqlive = try #require(capabilities["experimental"]?["sqlive"])
        #expect(sqlive["protocolVersion"] == "1.0")
        #expect(sqlive["methods"]?.arrayValue?.contains("query/execute") == true)
        #expect(sqlive["notifications"]?.arrayValue?.contains("textDocument/publishDiagnostics") == true)
        // Moved, not copied: a strict LSP client sees only standard members.
        #expect(capabilities["methods"] == nil)
    }

    @Test func utf8PositionsWhenTheClientOffersThem() async throws {
        let editor = try await Editor(encodings: ["utf-8", "utf-16"])
        #expect(editor.initializeResult["capabilities"]?["positionEncoding"] == "utf-8")
        let diagnostics = try await editor.open("q.sql", "SELECT 'é😀' FROM nope;")
        // In UTF-8 bytes: é is 2, the emoji 4; "nope" starts at byte 21.
        #expect(diagnostics.map(editor.range) == [[0, 21, 0, 25]])
    }

    @Test func unknownDollarRequestsAnswerMethodNotFound() async throws {
        let editor = try await Editor()
        let error = try await editor.server.error("$/unknownThing", [:])
        #expect(error["code"] == -32601)
        // Unknown notifications are ignored: the server goes on.
        editor.server.notify("$/setTrace", ["value": "off"])
        #expect(try await editor.server.result("query/execute", ["sql": "SELECT 1"])["results"]?[0]?["rows"] == [[1]])
    }

    @Test func initializationOptionsOpenTheDatabase() async throws {
        let editor = try await Editor(initializationOptions: ["database": "games.sqlite"], databaseArgument: false)
        let result = try await editor.server.result("query/execute", ["sql": "SELECT name FROM players ORDER BY name"])
        #expect(result["results"]?[0]?["rows"] == [["Ann"], ["Bob"]])
        #expect(try await editor.open("q.sql", "SELECT * FROM players;").isEmpty)
    }

    // MARK: - Diagnostics

    @Test func missingTableIsFlaggedOnItsName() async throws {
        let editor = try await Editor()
        let diagnostics = try await editor.open("q.sql", "SELECT * FROM nope;")
        #expect(diagnostics.count == 1)
        #expect(diagnostics.first?["message"] == "no such table: nope")
        #expect(diagnostics.first?["severity"] == 1)
        #expect(diagnostics.first?["source"] == "sqlite")
        #expect(diagnostics.first?["code"] == "SQLITE_ERROR")
        #expect(diagnostics.map(editor.range) == [[0, 14, 0, 18]])
    }

    @Test func multiByteTextBeforeAnErrorCountsUTF16Units() async throws {
        let editor = try await Editor()
        let diagnostics = try await editor.open("q.sql", "SELECT 'héllo😀' AS x FROM nope;")
        // é is one UTF-16 unit, the emoji two.
        #expect(diagnostics.map(editor.range) == [[0, 27, 0, 31]])
    }

    @Test func severalStatementsWithSeveralErrors() async throws {
        let editor = try await Editor()
        let text = """
            SELECT name FROM players;
            SELECT nam FROM players;
            SELECT * FROM players WHERE;
            INSERT INTO players(nope) VALUES (1);
            SELECT * FROM games JOIN gone ON 1;
            """
        let diagnostics = try await editor.open("q.sql", text)
        #expect(
            diagnostics.map { $0["message"]?.stringValue ?? "" } == [
                "no such column: nam", "near \";\": syntax error", "table players has no column named nope",
                "no such table: gone",
            ])
        #expect(diagnostics.map(editor.range) == [[1, 7, 1, 10], [2, 27, 2, 28], [3, 20, 3, 24], [4, 25, 4, 29]])
    }

    @Test func statementWithoutAnOffsetOrANameIsFlaggedWhole() async throws {
        let editor = try await Editor()
        let diagnostics = try await editor.open("q.sql", "INSERT INTO players VALUES (1, 'x');\nSELECT * FROM")
        #expect(
            diagnostics.map { $0["message"]?.stringValue ?? "" } == [
                "table players has 3 columns but 2 values were supplied", "incomplete input",
            ])
        #expect(diagnostics.map(editor.range) == [[0, 0, 0, 36], [1, 0, 1, 13]])
    }

    @Test func aMigrationIsJudgedAsItWillRun() async throws {
        let editor = try await Editor()
        let text = """
            CREATE TABLE scores(playerID INT, points INT);
            INSERT INTO scores VALUES (1, 10);
            ALTER TABLE scores ADD COLUMN at TEXT;
            CREATE INDEX scores_at ON scores(at);
            CREATE TRIGGER scored AFTER INSERT ON scores BEGIN
              UPDATE players SET score = score + new.points WHERE id = new.playerID;
            END;
            SELECT playerID, points, at FROM scores;
            DROP TABLE scores;
            SELECT * FROM scores;
            """
        let diagnostics = try await editor.open("migration.sql", text)
        // Only the read after the DROP fails; nothing was created for real.
        #expect(diagnostics.map { $0["message"]?.stringValue ?? "" } == ["no such table: scores"])
        #expect(diagnostics.map(editor.range) == [[9, 14, 9, 20]])
        let tables = try await editor.server.result(
            "query/execute", ["sql": "SELECT count(*) FROM sqlite_schema WHERE name = 'scores'"])
        #expect(tables["results"]?[0]?["rows"] == [[0]])
    }

    @Test func doubleQuotedStringIsAWarning() async throws {
        let editor = try await Editor()
        let diagnostics = try await editor.open("q.sql", "SELECT \"nope\" FROM players;")
        #expect(diagnostics.count == 1)
        #expect(diagnostics.first?["severity"] == 2)
        #expect(diagnostics.first?["message"]?.stringValue?.contains("read as the string 'nope'") == true)
        #expect(diagnostics.map(editor.range) == [[0, 7, 0, 13]])
    }

    @Test func anotherProcessCreatingTheTableClearsTheErrorAndDroppingItBringsItBack() async throws {
        let editor = try await Editor()
        #expect(try await editor.open("q.sql", "SELECT x FROM later;").count == 1)
        try await sqlite3(editor.database, "CREATE TABLE later(x);")
        let cleared = try await editor.diagnostics("q.sql")
        #expect(cleared.isEmpty, "\(cleared)")
        try await sqlite3(editor.database, "DROP TABLE later;")
        let again = try await editor.diagnostics("q.sql")
        #expect(again.map { $0["message"]?.stringValue ?? "" } == ["no such table: later"])
    }

    @Test func aSchemaChangeThroughTheSessionIsSeenToo() async throws {
        let editor = try await Editor()
        #expect(try await editor.open("q.sql", "SELECT x FROM later;").count == 1)
        _ = try await editor.server.result("query/execute", ["sql": "CREATE TABLE later(x)"])
        let after = try await editor.diagnostics("q.sql")
        #expect(after.isEmpty, "\(after)")
    }

    @Test func incrementalChangesAreApplied() async throws {
        let editor = try await Editor()
        #expect(try await editor.open("q.sql", "SELECT 'é' FROM nope;\nSELECT 1;").count == 1)
        // Replace "nope" (UTF-16 columns 16..<20) by "players".
        editor.change(
            "q.sql", version: 2,
            [["range": ["start": editor.position(0, 16), "end": editor.position(0, 20)], "text": "players"]])
        #expect(try await editor.diagnostics("q.sql").isEmpty)
        // Two edits in one notification, then a whole-text one.
        editor.change(
            "q.sql", version: 3,
            [
                ["range": ["start": editor.position(1, 7), "end": editor.position(1, 8)], "text": "zz"],
                ["range": ["start": editor.position(1, 0), "end": editor.position(1, 0)], "text": "\n"],
            ])
        let third = try await editor.diagnostics("q.sql")
        #expect(third.map { $0["message"]?.stringValue ?? "" } == ["no such column: zz"])
        #expect(third.map(editor.range) == [[2, 7, 2, 9]])
        editor.change("q.sql", version: 4, [["text": "SELECT * FROM gone;"]])
        #expect(
            try await editor.diagnostics("q.sql").map { $0["message"]?.stringValue ?? "" } == ["no such table: gone"])
        editor.server.notify("textDocument/didClose", ["textDocument": ["uri": .string(editor.uri("q.sql"))]])
        #expect(try await editor.diagnostics("q.sql").isEmpty)
    }

    @Test func theFirstLineNamesTheDocumentsOwnDatabase() async throws {
        let editor = try await Editor()
        try await sqlite3(editor.directory.path("other.sqlite"), "CREATE TABLE elsewhere(a);")
        let text = "-- sqlive: database=other.sqlite\nSELECT a FROM elsewhere;\nSELECT * FROM players;"
        let diagnostics = try await editor.open("q.sql", text)
        #expect(diagnostics.map { $0["message"]?.stringValue ?? "" } == ["no such table: players"])
        // Its schema is watched too.
        try await sqlite3(editor.directory.path("other.sqlite"), "CREATE TABLE players(a);")
        #expect(try await editor.diagnostics("q.sql").isEmpty)
        // Run acts on the session's database only.
        let error = try await editor.server.error(
            "workspace/executeCommand",
            [
                "command": "sqlive.run",
                "arguments": [["uri": .string(editor.uri("q.sql")), "position": editor.position(1, 3)]],
            ])
        #expect(error["code"] == -32010)
    }

    @Test func badDatabasesAndUnknownDocumentsGetClearErrors() async throws {
        let editor = try await Editor()
        try Data("not a database, only text long enough to be read as a header".utf8)
            .write(to: editor.directory.url.appendingPathComponent("notes.txt"))
        let notADatabase = try await editor.open("a.sql", "-- sqlive: database=notes.txt\nSELECT 1;")
        #expect(notADatabase.count == 1)
        #expect(notADatabase.first?["message"]?.stringValue?.contains("file is not a database") == true)
        let missing = try await editor.open("b.sql", "-- sqlive: database=missing.sqlite\nSELECT 1;")
        #expect(missing.first?["message"]?.stringValue?.hasPrefix("cannot check this SQL: cannot open") == true)
        #expect(!FileManager.default.fileExists(atPath: editor.directory.path("missing.sqlite")))
        // A request about a document that was never opened.
        let error = try await editor.server.error("textDocument/hover", editor.at("never.sql", 0, 0))
        #expect(error["code"] == -32602)
        #expect(error["message"]?.stringValue?.contains("textDocument/didOpen") == true)
        // A malformed edit is logged; the server goes on.
        editor.server.notify("textDocument/didChange", ["textDocument": "nope"])
        #expect(try await editor.server.result("query/execute", ["sql": "SELECT 3"])["results"]?[0]?["rows"] == [[3]])
    }

    // MARK: - Completion

    @Test func completionThroughAnAlias() async throws {
        let editor = try await Editor()
        try await editor.open("q.sql", "SELECT p. FROM players AS p JOIN games g ON g.playerID = p.id;")
        let result = try await editor.server.result("textDocument/completion", editor.at("q.sql", 0, 9))
        let items = try #require(result["items"]?.arrayValue)
        #expect(items.map { $0["label"] } == ["id", "name", "score"])
        #expect(items.first?["kind"] == 5)
        #expect(items.first?["detail"] == "INTEGER PRIMARY KEY · players")
        // `g.` lists the games columns.
        let games = try await editor.server.result("textDocument/completion", editor.at("q.sql", 0, 46))
        #expect(games["items"]?.arrayValue?.map { $0["label"] } == ["id", "title", "playerID"])
    }

    @Test func completionOfTablesAfterFromAndOfColumnsInScope() async throws {
        let editor = try await Editor()
        try await editor.open(
            "q.sql",
            "SELECT  FROM players;\nSELECT * FROM g;\nWITH top(who) AS (SELECT name FROM players) SELECT  FROM top;")
        let tables = try await editor.server.result("textDocument/completion", editor.at("q.sql", 1, 15))
        #expect(tables["items"]?.arrayValue?.map { $0["label"] } == ["games"])
        #expect(tables["items"]?[0]?["detail"] == "table")

        let columns = try await editor.server.result("textDocument/completion", editor.at("q.sql", 0, 7))
        let labels = columns["items"]?.arrayValue?.compactMap { $0["label"]?.stringValue } ?? []
        #expect(Array(labels.prefix(3)) == ["id", "name", "score"])
        #expect(labels.contains("players") && labels.contains("count") && labels.contains("SELECT"))
        let kinds = Dictionary(
            (columns["items"]?.arrayValue ?? []).map { ($0["label"]?.stringValue ?? "", $0["kind"]) },
            uniquingKeysWith: { first, _ in first })
        #expect(kinds["count"] == 3)
        #expect(kinds["WHERE"] == 14)

        // A CTE's columns come from SQLite.
        let cte = try await editor.server.result("textDocument/completion", editor.at("q.sql", 2, 51))
        #expect(cte["items"]?.arrayValue?.first?["label"] == "who")
    }

    // MARK: - Hover

    @Test func hoverShowsTablesColumnsAndPlans() async throws {
        let editor = try await Editor()
        try await editor.open("q.sql", "SELECT p.score FROM players p WHERE name = 'Ann' ORDER BY id DESC;")
        let table = try await editor.server.result("textDocument/hover", editor.at("q.sql", 0, 22))
        let tableText = try #require(table["contents"]?["value"]?.stringValue)
        #expect(table["contents"]?["kind"] == "markdown")
        #expect(tableText.contains("**table** `players`"))
        #expect(tableText.contains("| name | TEXT |  | yes |"))
        #expect(tableText.contains("`players_score`: on (score)"))
        #expect(table["range"] == ["start": editor.position(0, 20), "end": editor.position(0, 27)])

        let column = try await editor.server.result("textDocument/hover", editor.at("q.sql", 0, 11))
        #expect(column["contents"]?["value"] == "**column** `players.score` — `INT`")

        let plan = try await editor.server.result("textDocument/hover", editor.at("q.sql", 0, 1))
        let planText = try #require(plan["contents"]?["value"]?.stringValue)
        #expect(planText.contains("SCAN p\n"))
        #expect(planText.contains("full scan of players (as p, about 2 rows)"))
        // The index that would help, found by SQLite's planner, and the plan with it.
        #expect(planText.contains("**advice:** `CREATE INDEX players_name ON players(name);`"), "\(planText)")
        #expect(planText.contains("SEARCH p USING INDEX players_name (name=?)"), "\(planText)")
        #expect(!planText.contains("temporary b-tree"))
    }

    /// eglot without markdown-mode asks for plain text: it gets the same
    /// text without Markdown's marks.
    @Test func hoverInPlainTextWhenTheClientPrefersIt() async throws {
        let editor = try await Editor(hoverFormats: ["plaintext"])
        try await editor.open("q.sql", "SELECT p.score FROM players p WHERE name = 'Ann';")
        let plan = try await editor.server.result("textDocument/hover", editor.at("q.sql", 0, 1))
        #expect(plan["contents"]?["kind"] == "plaintext")
        let text = try #require(plan["contents"]?["value"]?.stringValue)
        #expect(text.hasPrefix("query plan\n"), "\(text)")
        #expect(!text.contains("**") && !text.contains("```") && !text.contains("`"), "\(text)")
        #expect(text.contains("advice: CREATE INDEX players_name ON players(name);"), "\(text)")
        // Markdown first: Markdown.
        let markdown = try await Editor(hoverFormats: ["markdown", "plaintext"])
        try await markdown.open("q.sql", "SELECT 1;")
        let one = try await markdown.server.result("textDocument/hover", markdown.at("q.sql", 0, 1))
        #expect(one["contents"]?["kind"] == "markdown")
    }

    // MARK: - Code lenses and commands

    @Test func codeLensesRunWatchAndExplain() async throws {
        let editor = try await Editor()
        try await editor.open(
            "q.sql", "SELECT name FROM players ORDER BY name;\n\nUPDATE players SET score = 0 WHERE 0;")
        let lenses = try #require(
            try await editor.server.result(
                "textDocument/codeLens", ["textDocument": ["uri": .string(editor.uri("q.sql"))]]
            )
            .arrayValue)
        #expect(
            lenses.map { $0["command"]?["command"] } == [
                "sqlive.run", "sqlive.watch", "sqlive.explain", "sqlive.run", "sqlive.explain",
            ])
        #expect(lenses.map { $0["range"]?["start"]?["line"] } == [0, 0, 0, 2, 2])

        let run = try await editor.server.result(
            "workspace/executeCommand",
            ["command": "sqlive.run", "arguments": try #require(lenses[0]["command"]?["arguments"])])
        #expect(run["results"]?[0]?["rows"] == [["Ann"], ["Bob"]])

        let explain = try await editor.server.result(
            "workspace/executeCommand",
            ["command": "sqlive.explain", "arguments": try #require(lenses[2]["command"]?["arguments"])])
        #expect(explain["plan"]?[0]?["detail"] == "SCAN players")
        #expect(explain["text"]?.stringValue?.contains("temporary b-tree for ORDER BY") == true)
        // The same, as plain text for clients that draw their own.
        #expect(explain["rendered"] == "QUERY PLAN\n|--SCAN players\n`--USE TEMP B-TREE FOR ORDER BY")
        #expect(explain["hints"]?.arrayValue?.count == 2)
        #expect(explain["sql"] == "SELECT name FROM players ORDER BY name;")

        let watch = try await editor.server.result(
            "workspace/executeCommand",
            ["command": "sqlive.watch", "arguments": try #require(lenses[1]["command"]?["arguments"])])
        #expect(watch["name"] == "q.sql:1")
        #expect(watch["rows"] == [["Ann"], ["Bob"]])
        try await sqlite3(editor.database, "INSERT INTO players(name, score) VALUES ('Cy', 3);")
        let changed = try await editor.server.notification("liveQuery/changed") { $0["name"] == "q.sql:1" }
        #expect(changed["rows"] == [["Ann"], ["Bob"], ["Cy"]])
        #expect(changed["cause"] == "external")

        _ = try await editor.server.result(
            "workspace/executeCommand",
            ["command": "sqlive.unwatch", "arguments": try #require(lenses[1]["command"]?["arguments"])])
        #expect(try await editor.server.result("liveQuery/list")["liveQueries"] == [])

        // A watch may name its live query.
        let named = try await editor.server.result(
            "workspace/executeCommand",
            [
                "command": "sqlive.watch",
                "arguments": [
                    ["uri": .string(editor.uri("q.sql")), "position": editor.position(0, 3), "name": "names"]
                ],
            ])
        #expect(named["name"] == "names")
        #expect(named["rows"] == [["Ann"], ["Bob"], ["Cy"]])
    }

    @Test func runTheStatementUnderTheCursor() async throws {
        let editor = try await Editor()
        try await editor.open("q.sql", "SELECT 1;\nSELECT name\n  FROM players WHERE score > 10;")
        let run = try await editor.server.result(
            "workspace/executeCommand",
            [
                "command": "sqlive.run",
                "arguments": [["uri": .string(editor.uri("q.sql")), "position": editor.position(2, 4)]],
            ])
        #expect(run["results"]?[0]?["rows"] == [["Ann"]])
        // Which statement ran, and its first line.
        #expect(run["sql"] == "SELECT name\n  FROM players WHERE score > 10;")
        #expect(run["line"] == 1)
        let error = try await editor.server.error(
            "workspace/executeCommand", ["command": "sqlive.fly", "arguments": []])
        #expect(error["code"] == -32602)
    }

    @Test func aLongRunReportsProgressAndStopsWhenTheProgressIsCancelled() async throws {
        let editor = try await Editor()
        let endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c;"
        try await editor.open("q.sql", endless)
        let id = editor.server.sendRequest(
            "workspace/executeCommand",
            [
                "command": "sqlive.run", "workDoneToken": "run-1",
                "arguments": [["uri": .string(editor.uri("q.sql")), "position": editor.position(0, 0)]],
            ])
        let begin = try await editor.server.notification("$/progress") { $0["token"] == "run-1" }
        #expect(begin["value"]?["kind"] == "begin")
        #expect(begin["value"]?["cancellable"] == true)
        editor.server.notify("window/workDoneProgress/cancel", ["token": "run-1"])
        let response = try await editor.server.response(to: id)
        #expect(response["error"]?["code"] == -32800)
        let end = try await editor.server.notification("$/progress") { $0["token"] == "run-1" }
        #expect(end["value"]?["kind"] == "end")

        // And with $/cancelRequest; the session goes on after both.
        let second = editor.server.sendRequest(
            "workspace/executeCommand",
            ["command": "sqlive.run", "arguments": [["uri": .string(editor.uri("q.sql")), "line": 0]]])
        try await Task.sleep(for: .milliseconds(100))
        editor.server.notify("$/cancelRequest", ["id": second.json])
        #expect(try await editor.server.response(to: second)["error"]?["code"] == -32800)
        #expect(try await editor.server.result("query/execute", ["sql": "SELECT 2"])["results"]?[0]?["rows"] == [[2]])
    }
}
