import Foundation
import SQLiveTestSupport
import Testing

@testable import SQLiveEngine

@Suite("Schema, EXPLAIN and tracing", .timeLimit(.minutes(5)))
struct SchemaExplainTraceTests {
    let directory: TemporaryDirectory
    let database: LiveDatabase

    init() async throws {
        directory = try TemporaryDirectory()
        let path = directory.path("demo.sqlite")
        try await SQLite3CLI.run(
            path,
            """
            CREATE TABLE games(id INTEGER PRIMARY KEY, title TEXT NOT NULL);
            CREATE TABLE players(
              id INTEGER PRIMARY KEY,
              gameID INTEGER NOT NULL REFERENCES games(id) ON DELETE CASCADE,
              name TEXT NOT NULL,
              score INTEGER NOT NULL DEFAULT 0
            );
            CREATE INDEX players_gameID ON players(gameID);
            CREATE VIEW leaders AS SELECT name, score FROM players ORDER BY score DESC;
            CREATE TRIGGER no_negative BEFORE UPDATE ON players WHEN NEW.score < 0
              BEGIN SELECT RAISE(ABORT, 'negative'); END;
            INSERT INTO games(title) VALUES ('Family gin rummy');
            INSERT INTO players(gameID, name, score) VALUES (1, 'Blob', 20), (1, 'Blob Jr', 100);
            """)
        database = try await LiveDatabase.open(.file(path))
    }

    @Test("The schema lists tables, views, columns, indexes and triggers")
    func schema() async throws {
        let schema = try await database.schema()
        #expect(schema.relations.map(\.name) == ["games", "leaders", "players"])
        #expect(schema.views.map(\.name) == ["leaders"])
        let players = try #require(schema.tables.first { $0.name == "players" })
        #expect(players.columns.map(\.name) == ["id", "gameID", "name", "score"])
        #expect(players.columns.map(\.type) == ["INTEGER", "INTEGER", "TEXT", "INTEGER"])
        #expect(players.columns.map(\.notNull) == [false, true, true, true])
        #expect(players.columns.map(\.isPrimaryKey) == [true, false, false, false])
        #expect(schema.indexes.map(\.name) == ["players_gameID"])
        #expect(schema.triggers.map(\.name) == ["no_negative"])
    }

    @Test("EXPLAIN QUERY PLAN is a tree rendered like sqlite3's")
    func queryPlan() async throws {
        let sql = """
            SELECT games.title, count(players.id) FROM games
            LEFT JOIN players ON players.gameID = games.id GROUP BY games.id ORDER BY 2 DESC;
            """
        let plan = try await database.explainQueryPlan(sql)
        #expect(plan.nodes.contains { $0.detail.contains("SEARCH players USING") })
        let cli = try await SQLite3CLI.run(directory.path("demo.sqlite"), "EXPLAIN QUERY PLAN " + sql)
        #expect(plan.rendered + "\n" == cli)
    }

    @Test("The plan renderer nests children")
    func rendererNesting() {
        let plan = QueryPlan(nodes: [
            .init(id: 2, parent: 0, detail: "CO-ROUTINE x"),
            .init(id: 3, parent: 2, detail: "SCAN a"),
            .init(id: 4, parent: 2, detail: "SCAN b"),
            .init(id: 9, parent: 0, detail: "SCAN x"),
        ])
        #expect(
            plan.rendered == """
                QUERY PLAN
                |--CO-ROUTINE x
                |  |--SCAN a
                |  `--SCAN b
                `--SCAN x
                """)
    }

    @Test("EXPLAIN bytecode comes as rows")
    func bytecode() async throws {
        let program = try await database.explainBytecode("SELECT name FROM players WHERE score > 50")
        #expect(program.first?.opcode == "Init")
        #expect(program.contains { $0.opcode == "ResultRow" })
        #expect(program.map(\.addr) == Array(0..<program.count))
        #expect(program[0].values.count == BytecodeInstruction.columns.count)
    }

    @Test("The trace reports user and live-query statements, with profile times and rows")
    func trace() async throws {
        database.traceSettings = TraceSettings(enabled: true, profile: true)
        let events = database.traceEvents()
        _ = try await database.execute("SELECT name FROM players ORDER BY name; UPDATE players SET score = score + 1")
        _ = try await database.directory.register(
            name: "top", LiveQueryDefinition(sql: "SELECT max(score) FROM players"))
        var received: [TraceEvent] = []
        for await event in events {
            received.append(event)
            if received.count == 3 { break }
        }
        #expect(
            received.map(\.sql) == [
                "SELECT name FROM players ORDER BY name", "UPDATE players SET score = score + 1",
                "SELECT max(score) FROM players",
            ])
        #expect(received.map(\.origin) == [.user, .user, .liveQuery])
        #expect(received.map(\.rows) == [2, 0, 1])
        #expect(received.allSatisfy { $0.elapsed != nil })
    }

    @Test("Housekeeping statements are only traced when asked for")
    func housekeeping() async throws {
        database.traceSettings = TraceSettings(enabled: true, profile: false)
        let plain = database.traceEvents()
        _ = try await database.execute("BEGIN; SELECT 1; COMMIT;")
        database.traceSettings = TraceSettings(enabled: true, profile: false, includeHousekeeping: true)
        let all = database.traceEvents()
        _ = try await database.directory.register(name: "n", LiveQueryDefinition(sql: "SELECT count(*) FROM games"))
        database.traceSettings = .off
        var plainEvents: [TraceEvent] = []
        for await event in plain {
            plainEvents.append(event)
            if plainEvents.count == 3 { break }
        }
        #expect(plainEvents.map(\.sql) == ["BEGIN", "SELECT 1", "COMMIT"])
        #expect(plainEvents.allSatisfy { $0.origin == .user && $0.elapsed == nil })
        var housekeeping: [TraceEvent] = []
        for await event in all {
            if event.origin == .housekeeping { housekeeping.append(event) }
            if event.origin == .liveQuery { break }
        }
        // GRDB reads inside a transaction it opens and closes itself.
        #expect(housekeeping.contains { $0.sql.uppercased().hasPrefix("BEGIN") })
    }

    @Test("The session connection's housekeeping is traced while asked for, and only then")
    func sessionHousekeeping() async throws {
        let events = database.traceEvents()
        // Off, then on: the statements run directly on the session connection.
        database.traceSettings = TraceSettings(enabled: true, profile: false)
        var consumer = ResultCollector()
        try database.run("SAVEPOINT a; RELEASE a;", consumer: &consumer)
        database.traceSettings = TraceSettings(enabled: true, profile: false, includeHousekeeping: true)
        try database.run("SAVEPOINT b; RELEASE b;", consumer: &consumer)
        // And off again: an end marker follows.
        database.traceSettings = TraceSettings(enabled: true, profile: false)
        try database.run("SAVEPOINT c; RELEASE c; SELECT 'end';", consumer: &consumer)
        var received: [TraceEvent] = []
        for await event in events {
            received.append(event)
            if event.sql == "SELECT 'end'" { break }
        }
        let housekeeping = received.filter { $0.origin == .housekeeping }.map(\.sql)
        #expect(housekeeping == ["SAVEPOINT b", "RELEASE b"])
        #expect(received.filter { $0.origin == .user }.count == 7)
    }
}

@Suite("One ordered stream of live and trace events", .timeLimit(.minutes(2)))
struct SessionEventTests {
    @Test("A refresh's trace line comes before the change it delivered, on the one stream a front end reads")
    func traceBeforeChange() async throws {
        let database = try await LiveDatabase.open(.memory)
        _ = try await database.execute("CREATE TABLE t(x)")
        database.traceSettings = TraceSettings(enabled: true)
        let recorder = StreamRecorder(database.sessionEvents())
        _ = try await database.directory.register(name: "n", LiveQueryDefinition(sql: "SELECT count(*) FROM t"))
        for value in 1...20 {
            _ = try await database.execute(
                "INSERT INTO t VALUES (?)", parameters: .positional([.integer(Int64(value))]))
        }
        try await recorder.wait("the last change") { events in
            events.contains { event in
                if case .live(.changed(let change)) = event { return change.result.rows == [[.integer(20)]] }
                return false
            }
        }
        let events = recorder.all
        var refreshTraces = 0
        var changes = 0
        for event in events {
            switch event {
            case .trace(let trace) where trace.origin == .liveQuery:
                refreshTraces += 1
            case .live(.changed(let change)):
                // Every change was read by a refresh whose trace came first.
                changes += 1
                #expect(refreshTraces >= changes, "change v\(change.version) before its refresh's trace")
            default:
                break
            }
        }
        #expect(events.contains { if case .trace(let trace) = $0 { trace.origin == .user } else { false } })
        await database.close()
    }
}
