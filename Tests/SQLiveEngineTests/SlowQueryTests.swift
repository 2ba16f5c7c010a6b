import Foundation
import SQLiveTestSupport
import Testing

@testable import SQLiveEngine

/// No live query holds back another (issue #39): a query the data makes
/// slow moves to a connection of its own, stops when nobody wants it, and
/// fails as too slow past its budget. The data grows by another process
/// (the sqlite3 CLI at its defaults).
@Suite("Slow live queries", .timeLimit(.minutes(5)))
struct SlowQueryTests {
    /// A query that is quick over 10 rows and takes minutes over 3,000:
    /// three nested scans that no index can shorten.
    static let slowSQL = "SELECT count(*) FROM big a, big b, big c WHERE a.x + b.x + c.x < 0"
    static let schema = """
        CREATE TABLE big(x INTEGER);
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10) INSERT INTO big SELECT i FROM n;
        CREATE TABLE small(y INTEGER);
        """
    static let grow =
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) INSERT INTO big SELECT i FROM n;"

    private func open(_ directory: TemporaryDirectory, mode: JournalMode, budget: Duration?) async throws
        -> (LiveDatabase, String)
    {
        let path = try await makeDatabaseFile(in: directory, mode: mode, Self.schema)
        let database = try await LiveDatabase.open(
            .file(path),
            options: LiveDatabase.Options(liveQueries: LiveQueryOptions(refreshBudget: budget)))
        return (database, path)
    }

    @Test(
        "A query the data makes slow never holds back another's updates; unregistering it stops its work",
        arguments: JournalMode.allCases)
    func slowBesideQuick(mode: JournalMode) async throws {
        let directory = try TemporaryDirectory()
        let (database, path) = try await open(directory, mode: mode, budget: .seconds(600))
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "slow", LiveQueryDefinition(sql: Self.slowSQL))
        _ = try await database.directory.register(name: "quick", LiveQueryDefinition(sql: "SELECT count(*) FROM small"))
        try await SQLite3CLI.run(path, Self.grow, defaultTimeout: false)
        for _ in 1...3 {
            try await SQLite3CLI.run(path, "INSERT INTO small VALUES (1);", defaultTimeout: false)
        }
        try await recorder.waitForRows("quick") { $0 == [[.integer(3)]] }
        // Delivered while the slow one still reads (it takes minutes), on
        // a connection of its own.
        #expect(recorder.changes("slow").isEmpty)
        #expect(recorder.failures("slow").isEmpty)
        #expect(await database.live.scheduler.fetchesInFlight == 1)
        #expect(database.live.reader.aloneCount == 1)

        try await database.directory.unregister(name: "slow")
        try await eventually("the slow query's work stopped and its connection closed", timeout: .seconds(5)) {
            await database.live.scheduler.fetchesInFlight == 0 && database.live.reader.aloneCount == 0
        }
        await database.close()
    }

    @Test(
        "A slow query kept from rows lets its own connection go once its rows are applied",
        arguments: JournalMode.allCases)
    func keptLetsItsLaneGo(mode: JournalMode) async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(
            in: directory, mode: mode, "CREATE TABLE items(id INTEGER PRIMARY KEY, v);")
        try await SQLite3CLI.run(
            path, "INSERT INTO items SELECT value, value % 7 FROM generate_series(1, 20000);")
        // Any read over a millisecond moves to a connection of its own.
        let database = try await LiveDatabase.open(
            .file(path),
            options: LiveDatabase.Options(liveQueries: LiveQueryOptions(ownConnectionAfter: .milliseconds(1))))
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(
            name: "all", LiveQueryDefinition(sql: "SELECT id, v FROM items", maxRows: 30_000))
        // Its first read moved to a connection of its own (nothing is
        // delivered from rows before a commit: it is still open).
        #expect(database.live.reader.aloneCount == 1)
        var next = 0
        // Kept from rows, then delivered from them: the connection goes.
        try await eventually("kept, and its connection closed", timeout: .seconds(60)) {
            next += 1
            _ = try? await SQLite3CLI.run(path, "UPDATE items SET v = v + 1 WHERE id = \(next);")
            try? await Task.sleep(for: .milliseconds(100))
            return await database.directory.list().first?.precision == .rows && database.live.reader.aloneCount == 0
        }
        // And it follows the next writes. (Read whole again under load — a
        // commit not yet in the inbox when its refresh began — it may move
        // to a connection of its own again: that is not asserted.)
        try await SQLite3CLI.run(path, "UPDATE items SET v = -1 WHERE id = 20000;")
        try await recorder.waitForRows("all") { $0.last == [.integer(20000), .integer(-1)] }
        await database.close()
    }

    enum Stopping: String, CaseIterable, CustomTestStringConvertible {
        case pause, replace
        var testDescription: String { rawValue }
    }

    @Test("Pausing or replacing a slow query stops its work", arguments: Stopping.allCases)
    func stopping(_ stopping: Stopping) async throws {
        let directory = try TemporaryDirectory()
        let (database, path) = try await open(directory, mode: .wal, budget: .seconds(600))
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "slow", LiveQueryDefinition(sql: Self.slowSQL))
        try await SQLite3CLI.run(path, Self.grow, defaultTimeout: false)
        try await eventually("the slow query reads") { await database.live.scheduler.fetchesInFlight == 1 }
        switch stopping {
        case .pause:
            try await database.directory.pause(name: "slow")
        case .replace:
            _ = try await database.directory.update(name: "slow", sql: "SELECT count(*) FROM big")
        }
        try await eventually("the slow query's work stopped", timeout: .seconds(5)) {
            await database.live.scheduler.fetchesInFlight == 0
        }
        if stopping == .pause {
            // What it missed is read again when it resumes.
            try await database.directory.resume(name: "slow")
            try await eventually("the resumed query reads again") { await database.live.scheduler.fetchesInFlight == 1 }
        } else {
            #expect(recorder.changes("slow").isEmpty)
            #expect(try await database.directory.current(name: "slow").snapshot.result.rows == [[.integer(3010)]])
        }
        await database.close()
    }

    @Test("Past its budget a query reports too slow to keep live, and waits for a change of what it reads")
    func budget() async throws {
        let directory = try TemporaryDirectory()
        let (database, path) = try await open(directory, mode: .wal, budget: .seconds(1))
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "slow", LiveQueryDefinition(sql: Self.slowSQL))
        _ = try await database.directory.register(name: "quick", LiveQueryDefinition(sql: "SELECT count(*) FROM small"))
        try await SQLite3CLI.run(path, Self.grow, defaultTimeout: false)
        try await recorder.wait("the budget's failure") { _ in !recorder.failures("slow").isEmpty }
        #expect(recorder.failures("slow") == [.tooSlowToKeepLive(budget: .seconds(1))])
        #expect(
            recorder.failures("slow")[0].description.hasPrefix("too slow to keep live: the query ran longer than 1 s"))
        try await eventually("its work stopped", timeout: .seconds(5)) {
            await database.live.scheduler.fetchesInFlight == 0
        }
        let refreshes = await database.directory.list().first { $0.name == "slow" }?.refreshes
        // A commit to a table it does not read leaves it waiting.
        try await SQLite3CLI.run(path, "INSERT INTO small VALUES (1);", defaultTimeout: false)
        try await recorder.waitForRows("quick") { $0 == [[.integer(1)]] }
        #expect(await database.directory.list().first { $0.name == "slow" }?.refreshes == refreshes)
        #expect(await database.live.scheduler.fetchesInFlight == 0)
        // Registering one over the grown table fails the same way.
        await #expect(throws: SQLiveError.tooSlowToKeepLive(budget: .seconds(1))) {
            try await database.directory.register(name: "again", LiveQueryDefinition(sql: Self.slowSQL + " AND 1"))
        }
        await database.close()
    }

    @Test("The guard's decision: unwanted first, then the budget, then the move to an own connection")
    func limits() {
        let limits = FetchGuard.Limits(budget: .seconds(5), ownLaneAfter: .milliseconds(100))
        #expect(limits.stop(unwanted: false, elapsed: .milliseconds(99)) == nil)
        #expect(limits.stop(unwanted: false, elapsed: .milliseconds(100)) == .ownLane)
        #expect(limits.stop(unwanted: false, elapsed: .seconds(5)) == .tooSlow)
        #expect(limits.stop(unwanted: true, elapsed: .zero) == .unwanted)
        #expect(FetchGuard.Limits().stop(unwanted: false, elapsed: .seconds(3600)) == nil)
    }
}
