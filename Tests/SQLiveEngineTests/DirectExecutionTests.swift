import Foundation
import SQLiveLocks
import SQLiveTestSupport
import Testing

@testable import SQLiveEngine

/// Scripts run on SQLite directly while no live query exists, through
/// GRDB (whose observation reports row events) while one does. These
/// tests cross the border between the two paths.
@Suite("Scripts run directly on SQLite")
struct DirectExecutionTests {
    @Test(
        "Rows written in a transaction before a live query existed reach it at commit",
        arguments: JournalMode.allCases)
    func transactionSpanningRegistration(mode: JournalMode) async throws {
        let directory = try TemporaryDirectory()
        let database = try await LiveDatabase.open(
            .file(try await makeDatabaseFile(in: directory, mode: mode, playersSchema)))
        let recorder = EventRecorder(database)
        // No live query: these statements run directly, unobserved.
        _ = try await database.execute("BEGIN; INSERT INTO players(gameID, name, score) VALUES (9, 'Zed', 1000);")
        let snapshot = try await database.directory.register(
            name: "top", LiveQueryDefinition(sql: "SELECT name FROM players ORDER BY score DESC LIMIT 1"))
        // The first result reads committed rows: not Zed's yet.
        #expect(snapshot.result.rows != [[.text("Zed")]])
        // Now observed through GRDB, whose recorder joined mid-transaction.
        _ = try await database.execute("COMMIT")
        try await recorder.waitForRows("top") { $0 == [[.text("Zed")]] }
        #expect(recorder.changes("top").last?.cause == .local)
        await database.close()
    }

    @Test("After the last live query leaves, writes run directly, and the next live query sees them")
    func leavingAndComingBack() async throws {
        let directory = try TemporaryDirectory()
        let database = try await LiveDatabase.open(
            .file(try await makeDatabaseFile(in: directory, mode: .wal, playersSchema)))
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "n", LiveQueryDefinition(sql: "SELECT count(*) FROM players"))
        _ = try await database.execute("INSERT INTO players(gameID, name) VALUES (1, 'A')")
        try await recorder.waitForRows("n") { $0 == [[.integer(5)]] }
        try await database.directory.unregister(name: "n")
        _ = try await database.execute("INSERT INTO players(gameID, name) VALUES (1, 'B')")
        let again = try await database.directory.register(
            name: "m", LiveQueryDefinition(sql: "SELECT count(*) FROM players"))
        #expect(again.result.rows == [[.integer(6)]])
        _ = try await database.execute("DELETE FROM players WHERE name = 'B'")
        try await recorder.waitForRows("m") { $0 == [[.integer(5)]] }
        await database.close()
    }

    @Test("Parameters bind the same on both paths: positional across statements, named by any prefix")
    func parametersOnBothPaths() async throws {
        let database = try await LiveDatabase.open(.memory)
        _ = try await database.execute("CREATE TABLE t(a, b)")
        let script = "INSERT INTO t VALUES (?, ?); SELECT a, b, ? FROM t WHERE a = ?"
        let positional = QueryParameters.positional([
            .integer(Int64.max), .blob(Data([0, 0xFF])), .text("é 🎉"), .integer(Int64.max),
        ])
        let named = QueryParameters.named(["a": .integer(7), "b": .null])
        let namedScript = "SELECT :a, @a, $b, :a + 1"
        // Directly (no live query), then through GRDB (one exists).
        let direct = try await database.execute(script, parameters: positional)
        let directNamed = try await database.execute(namedScript, parameters: named)
        _ = try await database.directory.register(name: "n", LiveQueryDefinition(sql: "SELECT count(*) FROM t"))
        let observed = try await database.execute(script, parameters: positional)
        let observedNamed = try await database.execute(namedScript, parameters: named)
        let row: [SQLValue] = [.integer(Int64.max), .blob(Data([0, 0xFF])), .text("é 🎉")]
        #expect(direct.last?.rows == [row])
        #expect(observed.last?.rows == [row, row])
        #expect(directNamed.map(\.rows) == observedNamed.map(\.rows))
        #expect(directNamed.first?.rows == [[.integer(7), .integer(7), .null, .integer(8)]])
        // An empty blob is a blob, and empty text is text, not NULL.
        let empties = QueryParameters.positional([.blob(Data()), .text(""), .blob(Data())])
        let emptiesScript = "SELECT typeof(?), typeof(?), ? IS NULL"
        let observedEmpties = try await database.execute(emptiesScript, parameters: empties)
        try await database.directory.unregister(name: "n")
        let directEmpties = try await database.execute(emptiesScript, parameters: empties)
        _ = try await database.directory.register(name: "n", LiveQueryDefinition(sql: "SELECT count(*) FROM t"))
        for result in [directEmpties, observedEmpties] {
            #expect(result.first?.rows == [[.text("blob"), .text("text"), .integer(0)]])
        }
        // Values left over, or missing, fail the same way on both paths.
        for observedPath in [true, false] {
            if !observedPath { try await database.directory.unregister(name: "n") }
            let extra = await #expect(throws: ScriptFailure.self) {
                try await database.execute("SELECT ?", parameters: .positional([.integer(1), .integer(2)]))
            }
            #expect(extra?.failure.message.contains("wrong number of statement arguments") == true)
        }
        await database.close()
    }

    @Test("Schema changes made directly are seen by the schema, completion's source")
    func schemaCacheFollowsDirectChanges() async throws {
        let database = try await LiveDatabase.open(.memory)
        _ = try await database.execute("CREATE TABLE a(x)")
        #expect(try await database.schema().tables.map(\.name).contains("a"))
        _ = try await database.execute("ALTER TABLE a ADD COLUMN y; CREATE TABLE b(z)")
        let schema = try await database.schema()
        #expect(schema.tables.first { $0.name == "a" }?.columns.map(\.name) == ["x", "y"])
        #expect(schema.tables.map(\.name).contains("b"))
        _ = try await database.execute("BEGIN; DROP TABLE b; ROLLBACK")
        #expect(try await database.schema().tables.map(\.name).contains("b"))
        await database.close()
    }

    @Test("Errors from the direct path say which statement failed, and where")
    func directErrors() async throws {
        let database = try await LiveDatabase.open(.memory)
        let failure = await #expect(throws: ScriptFailure.self) {
            try await database.execute("CREATE TABLE t(x UNIQUE); INSERT INTO t VALUES (1);\nINSERT INTO t VALUES (1)")
        }
        #expect(failure?.completed.count == 2)
        #expect(failure?.failure.statementIndex == 2)
        #expect(failure?.failure.message == "UNIQUE constraint failed: t.x")
        let syntax = await #expect(throws: ScriptFailure.self) {
            try await database.execute("SELECT 1; SELEC 2")
        }
        #expect(syntax?.failure.statementIndex == 1)
        #expect(syntax?.failure.offset == 10)
        #expect(syntax?.completed.map(\.sql) == ["SELECT 1"])
        await database.close()
    }

    /// An endless statement: a recursive count with no end.
    static let endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"

    @Test(
        "A script cancelled before it starts, or while it runs with no interrupt sent, stops as interrupted",
        .timeLimit(.minutes(1)), arguments: [false, true])
    func cancellationWithoutInterrupt(observed: Bool) async throws {
        let database = try await LiveDatabase.open(.memory)
        // Observed: the script runs through GRDB, not on SQLite directly.
        if observed { _ = try await database.directory.register(name: "n", LiveQueryDefinition(sql: "SELECT 1")) }
        var consumer = ResultCollector()
        // Already cancelled: nothing runs (an interrupt sent now would be forgotten).
        let before = #expect(throws: SQLiteFailure.self) {
            try database.run("CREATE TABLE t(x); \(Self.endless)", isCancelled: { true }, consumer: &consumer)
        }
        #expect(before?.message == "interrupted")
        #expect(try database.rows(sync: "SELECT count(*) FROM sqlite_master") == [[.integer(0)]])
        // Cancelled while it runs, and nobody calls interrupt(): SQLite's
        // progress handler asks, and stops it.
        let cancelled = Locked(false)
        let started = ContinuousClock.now
        // A dispatch timer, not a task: this test blocks its own thread,
        // and the concurrency pool may have no other.
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) {
            cancelled.withLock { $0 = true }
        }
        let during = #expect(throws: SQLiteFailure.self) {
            try database.run(Self.endless, isCancelled: { cancelled.withLock { $0 } }, consumer: &consumer)
        }
        #expect(during?.message == "interrupted")
        #expect(ContinuousClock.now - started < .seconds(30))
        // The connection is usable after, and the next script is not cancelled.
        #expect(try database.rows(sync: "SELECT 2") == [[.integer(2)]])
        await database.close()
    }

    @Test("Several scripts in one visit: each stops at its own failure, the next run unless told to stop")
    func severalScriptsInOneVisit() async throws {
        let database = try await LiveDatabase.open(.memory)
        let scripts = [
            "CREATE TABLE t(a); INSERT INTO t VALUES (1);",
            "SELECT a FROM t; SELECT nope; SELECT 2;",
            "INSERT INTO t VALUES (3); SELECT count(*) FROM t;",
        ]
        let (results, failures) = try await Task.detached {
            var collector = ResultCollector()
            var failures: [(index: Int, message: String, statement: Int?)] = []
            try database.run(scripts: scripts, consumer: &collector) { index, failure, _ in
                failures.append((index, failure.message, failure.statementIndex))
                return true
            }
            return (collector.results, failures)
        }.value
        #expect(failures.map(\.index) == [1])
        #expect(failures.first?.message == "no such column: nope")
        #expect(failures.first?.statement == 1)
        // "SELECT 2" was the failing script's: it did not run. The next script did.
        #expect(
            results.map(\.sql) == [
                "CREATE TABLE t(a)", "INSERT INTO t VALUES (1)", "SELECT a FROM t", "INSERT INTO t VALUES (3)",
                "SELECT count(*) FROM t",
            ])
        #expect(results.last?.rows == [[.integer(2)]])

        // Told to stop: the scripts after the failing one do not run.
        let stopped = try await Task.detached {
            var collector = ResultCollector()
            try database.run(scripts: ["SELECT nope;", "INSERT INTO t VALUES (4);"], consumer: &collector) { _, _, _ in
                false
            }
            return collector.results
        }.value
        #expect(stopped.isEmpty)
        #expect(try await database.execute("SELECT count(*) FROM t").first?.rows == [[.integer(2)]])
        await database.close()
    }

    @Test("GRDB's authorizer is set aside while sqlive prepares statements itself, and is back after")
    func authorizerSetAsideAndBack() async throws {
        let directory = try TemporaryDirectory()
        let database = try await LiveDatabase.open(
            .file(try await makeDatabaseFile(in: directory, mode: .wal, playersSchema)))
        let query = "SELECT name FROM players"
        let regions = try await database.writer.writeWithoutTransaction { db in
            // GRDB's statements learn what they read from its authorizer.
            let before = try db.makeStatement(sql: query).databaseRegion
            #expect(GRDBAuthorizer.isSuspendable(db))
            let during = try GRDBAuthorizer.suspended(on: db) { try db.makeStatement(sql: query).databaseRegion }
            let after = try db.makeStatement(sql: query).databaseRegion
            return (before, during, after)
        }
        #expect(regions.0.description == "players(name)")
        // Set aside: nobody reported the column read (what the direct path saves).
        #expect(regions.1.isEmpty)
        #expect(regions.2 == regions.0)

        // After scripts ran directly, GRDB's observation still sees every
        // kind of write: a DELETE of every row (SQLite's truncate
        // optimization, which GRDB's authorizer turns off while deletions are
        // observed, would skip the row events) reaches a live query.
        _ = try await database.execute("SELECT * FROM players; INSERT INTO players(gameID, name) VALUES (1, 'A')")
        let recorder = EventRecorder(database)
        let first = try await database.directory.register(
            name: "n", LiveQueryDefinition(sql: "SELECT count(*) FROM players"))
        #expect(first.result.rows == [[.integer(5)]])
        _ = try await database.execute("DELETE FROM players")
        try await recorder.waitForRows("n") { $0 == [[.integer(0)]] }
        await database.close()
    }
}

extension LiveDatabase {
    /// The rows of a one-statement script, run on the calling thread.
    fileprivate func rows(sync sql: String) throws -> [[SQLValue]] {
        var consumer = ResultCollector()
        try run(sql, consumer: &consumer)
        return consumer.results[0].rows
    }
}
