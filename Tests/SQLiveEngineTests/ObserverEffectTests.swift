import Foundation
import GRDB
import SQLiveLocks
import SQLiveTestSupport
import Testing

@testable import SQLiveEngine

/// Watching never hurts the watched: while sqlive watches a file, another
/// process writing at its defaults never fails a commit, in every journal
/// mode, and what sqlive shows is always one committed state of the file.
@Suite("Watching never hurts the watched", .timeLimit(.minutes(4)))
struct ObserverEffectTests {
    static let writerCells: [(String, WriterJournal)] = ["sqlite3", "python"].flatMap { writer in
        WriterJournal.observed.map { (writer, $0) }
    }

    @Test(
        "A writer at its defaults never fails a commit beside a slow live query, 100 cheap ones, the checker and an agent",
        arguments: writerCells)
    func noCommitFails(writer: String, journal: WriterJournal) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("observed.sqlite")
        try await SQLite3CLI.run(
            path,
            """
            \(journal.creatingPragma);
            CREATE TABLE items(id INTEGER PRIMARY KEY, grp INTEGER, value INTEGER, note TEXT);
            WITH RECURSIVE n(i) AS (VALUES(1) UNION ALL SELECT i + 1 FROM n WHERE i < 60000)
            INSERT INTO items(grp, value, note) SELECT i % 50, i, hex(randomblob(16)) FROM n;
            """)
        let database = try await LiveDatabase.open(.file(path))
        let recorder = EventRecorder(database)
        let slow = "SELECT grp, sum(value), count(*), max(id) FROM items GROUP BY grp ORDER BY 2 DESC LIMIT 5"
        _ = try await database.directory.register(name: "slow", LiveQueryDefinition(sql: slow))
        for group in 0..<100 {
            _ = try await database.directory.register(
                name: "cheap\(group)", LiveQueryDefinition(sql: "SELECT count(*) FROM items WHERE grp = \(group)"))
        }
        // An editor's hovers meanwhile: plans, hints with counted table sizes.
        let checker = try SQLChecker(.file(path))
        // And an agent's statements (sqlive --mcp), on the confined reader.
        let agent = try ConfinedReader(path: path)
        let stop = Locked(false)
        // However the test ends, the loop ends (an `async let` is awaited at the end of its scope).
        defer { stop.withLock { $0 = true } }
        async let hovers = onOwnThread {
            var count = 0
            while !stop.withLock({ $0 }) {
                _ = try? checker.explain("SELECT * FROM items WHERE note = 'x'", advise: true)
                _ = checker.rowCount(of: "items")
                _ = try? agent.run("SELECT grp, avg(value), max(note) FROM items GROUP BY grp")
                count += 1
            }
            return count
        }
        let script = writer == "sqlite3" ? ObserverWriter.cli : ObserverWriter.python
        let pragmas = journal.pragmas
        let summary = try await ObserverWriter.run(script, [path, "120", "10"] + pragmas)
        stop.withLock { $0 = true }
        let hoverCount = try await hovers

        #expect(summary["failed"] as? Int == 0, "\(summary)")
        #expect(hoverCount > 0)
        let final = try await database.rows(slow)
        try await recorder.waitForRows("slow") { $0 == final }
        #expect(try await database.rows("SELECT count(*) FROM items") == [[.integer(60120)]])
        await database.close()
    }

    static let invariantTotal: Int64 = 6_000_000

    @Test(
        "Live queries and an observer reading as fast as it can never see a torn or rolled-back state",
        arguments: WriterJournal.observed)
    func neverTorn(journal: WriterJournal) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("transfers.sqlite")
        try await SQLite3CLI.run(
            path,
            """
            \(journal.creatingPragma);
            CREATE TABLE a(id INTEGER PRIMARY KEY, balance INTEGER NOT NULL, note TEXT);
            CREATE TABLE b(id INTEGER PRIMARY KEY, balance INTEGER NOT NULL, note TEXT);
            WITH RECURSIVE n(i) AS (VALUES(1) UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
            INSERT INTO a SELECT i, 1000, hex(randomblob(40)) FROM n;
            INSERT INTO b SELECT id, 1000, note FROM a;
            """)
        let database = try await LiveDatabase.open(.file(path))
        let recorder = EventRecorder(database)
        let total = "SELECT (SELECT sum(balance) FROM a) + (SELECT sum(balance) FROM b)"
        let joined = "SELECT sum(a.balance + b.balance), count(*) FROM a JOIN b USING (id)"
        _ = try await database.directory.register(name: "total", LiveQueryDefinition(sql: total))
        _ = try await database.directory.register(name: "joined", LiveQueryDefinition(sql: joined))

        // An observer connection of its own, reading the total again and
        // again in read transactions, as live queries do.
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(5)
        // It keeps no pages (`sqlive_budget=0`): every page it reads comes
        // from the file while the writer writes, and must be proven.
        let observer = try DatabaseQueue(
            path: ObserverVFS.openingName(.file(path), vfs: ObserverVFS.observer) + "&sqlive_budget=0",
            configuration: configuration)
        let stop = Locked(false)
        // However the test ends, the loop ends (an `async let` is awaited at the end of its scope).
        defer { stop.withLock { $0 = true } }
        async let reads = onOwnThread { () -> (reads: Int, wrong: [Int64], statistics: ObserverVFS.Statistics) in
            var reads = 0
            var wrong: [Int64] = []
            while !stop.withLock({ $0 }) {
                do {
                    let sql = reads % 2 == 0 ? total : joined
                    let value = try observer.writeWithoutTransaction { db in
                        try ObserverVFS.read(db) { try Int64.fetchOne($0, sql: sql) ?? -1 }
                    }
                    reads += 1
                    if value != Self.invariantTotal { wrong.append(value) }
                } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
                    // The writer held EXCLUSIVE for the whole busy timeout: read again.
                }
            }
            let statistics = try observer.writeWithoutTransaction { ObserverVFS.statistics($0.sqliteConnection) }
            return (reads, wrong, statistics)
        }
        // An agent's reads (sqlive --mcp), on the confined reader.
        let agent = try ConfinedReader(path: path)
        async let agentReads = onOwnThread { () -> (reads: Int, wrong: [String]) in
            var reads = 0
            var wrong: [String] = []
            while !stop.withLock({ $0 }) {
                switch Result(catching: { () throws(SQLiveError) in try agent.run(total) }) {
                case .success(.rows(let rows)) where rows.rows == [[.integer(Self.invariantTotal)]]:
                    reads += 1
                case .success(let outcome):
                    wrong.append("\(outcome)")
                case .failure(let error) where error.sqliteFailure?.code == 5:
                    break  // SQLITE_BUSY in WAL recovery: read again.
                case .failure(let error):
                    wrong.append(error.description)
                }
            }
            return (reads, wrong)
        }
        let pragmas = journal.pragmas
        let summary = try await ObserverWriter.run(ObserverWriter.transfers, [path, "1500", "7"] + pragmas)
        stop.withLock { $0 = true }
        let observed = try await reads
        let agentObserved = try await agentReads
        #expect(agentObserved.wrong.isEmpty, "the agent read: \(agentObserved.wrong.prefix(5))")
        #expect(agentObserved.reads > 50)

        #expect(summary["commits"] as? Int == 1500)
        #expect(observed.wrong.isEmpty, "torn or rolled-back totals read: \(observed.wrong.prefix(5))")
        #expect(observed.reads > 50)
        if journal.fileMode != .wal {
            // Rollback-journal modes are read lock-free, across many generations.
            #expect(observed.statistics.observing)
            #expect(observed.statistics.generations > 50, "\(observed.statistics)")
        }
        let expected: [[SQLValue]] = [[.integer(Self.invariantTotal)]]
        let totals = recorder.changes("total").map { Array($0.result.rows) }
        let joins = recorder.changes("joined").map { Array($0.result.rows) }
        #expect(totals.allSatisfy { $0 == expected }, "\(totals.filter { $0 != expected }.prefix(3))")
        #expect(
            joins.allSatisfy { $0 == [[.integer(Self.invariantTotal), .integer(3000)]] },
            "\(joins.prefix(3))")
        #expect(recorder.failures("total").isEmpty && recorder.failures("joined").isEmpty)
        // The live queries were read again and again while the writer ran
        // (a torn read would have differed from the last delivery, and
        // been delivered).
        let refreshes = await database.directory.list().first { $0.name == "total" }?.refreshes ?? 0
        #expect(refreshes >= 2, "refreshes: \(refreshes)")
        #expect(try await database.rows(total) == expected)
        await database.close()
    }
}
