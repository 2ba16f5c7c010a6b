import Foundation
import SQLiveTestSupport
import Testing

@testable import SQLiveEngine

/// sqlive's own commits read their quick live queries at the commit, on
/// the session's connection (`LocalPrefetch`): only in WAL mode, with no
/// temp schema and no attached database, and never a stale result.
@Suite("Live queries read at sqlive's own commit", .timeLimit(.minutes(3)))
struct ReadAtCommitTests {
    /// A limit every query of these tests passes even on a starved machine
    /// with a debug build (a read's time is wall-clock time; the default,
    /// 0.5 ms, is for release builds).
    static let generousLimit = Duration.seconds(30)

    /// A database whose own commits are all there is to watch, unless
    /// `watchOthers`: no finding of the file watcher drops what a commit read.
    private func open(_ path: String, limit: Duration? = generousLimit, watchOthers: Bool = false) async throws
        -> LiveDatabase
    {
        try await LiveDatabase.open(
            .file(path),
            options: .init(
                liveQueries: LiveQueryOptions(
                    externalDetection: watchOthers ? .automatic : .disabled, safetyPollInterval: .seconds(3600),
                    readAtCommitLimit: limit, maintainsFromRows: false)))
    }

    @Test("In WAL mode an own commit's refresh is the read at commit, with the rows a fresh read gives")
    func walReadsAtCommit() async throws {
        let directory = try TemporaryDirectory()
        for readsAtCommit in [true, false] {
            let path = try await makeDatabaseFile(in: directory, mode: .wal, playersSchema)
            let database = try await open(path, limit: readsAtCommit ? Self.generousLimit : nil)
            let recorder = EventRecorder(database)
            _ = try await database.directory.register(
                name: "top", LiveQueryDefinition(sql: "SELECT name, score FROM players ORDER BY score DESC LIMIT 2"))
            for (index, score) in [500, 700, 600].enumerated() {
                _ = try await database.execute(
                    "INSERT INTO players(gameID, name, score) VALUES (1, 'P\(index)', \(score))")
                let expected = try await database.rows("SELECT name, score FROM players ORDER BY score DESC LIMIT 2")
                try await recorder.waitForRows("top") { $0 == expected }
            }
            // One refresh per commit, each read at the commit when it is on.
            #expect(database.prefetchedRefreshCount == (readsAtCommit ? 3 : 0))
            let info = try #require(await database.directory.list().first)
            #expect(info.refreshes == 3)
            await database.close()
            try FileManager.default.removeItem(atPath: path)
        }
    }

    @Test("In DELETE mode nothing is read on the session's connection: it would take a lock")
    func rollbackJournalNeverReadsAtCommit() async throws {
        let directory = try TemporaryDirectory()
        let database = try await open(try await makeDatabaseFile(in: directory, mode: .delete, playersSchema))
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "n", LiveQueryDefinition(sql: "SELECT count(*) FROM players"))
        for count in 5...7 {
            _ = try await database.execute("INSERT INTO players(gameID, name) VALUES (1, 'X')")
            try await recorder.waitForRows("n") { $0 == [[.integer(Int64(count))]] }
        }
        #expect(database.prefetchedRefreshCount == 0)
        await database.close()
    }

    @Test("A temp table that shadows a watched one stops the reads at commit: the query keeps reading main")
    func tempShadowNeverReadsAtCommit() async throws {
        let directory = try TemporaryDirectory()
        let database = try await open(try await makeDatabaseFile(in: directory, mode: .wal, playersSchema))
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "n", LiveQueryDefinition(sql: "SELECT count(*) FROM players"))
        _ = try await database.execute("INSERT INTO players(gameID, name) VALUES (1, 'X')")
        try await recorder.waitForRows("n") { $0 == [[.integer(5)]] }
        #expect(database.prefetchedRefreshCount == 1)
        // On the session's connection, `players` is now the temp table (empty).
        _ = try await database.execute(
            "CREATE TEMP TABLE players(id INTEGER PRIMARY KEY, gameID, name, score); INSERT INTO temp.players(gameID, name) VALUES (1, 'T')"
        )
        _ = try await database.execute("INSERT INTO main.players(gameID, name) VALUES (1, 'Y')")
        try await recorder.waitForRows("n") { $0 == [[.integer(6)]] }
        #expect(database.prefetchedRefreshCount == 1)
        await database.close()
    }

    @Test("A column added by another process under SELECT *: the kept statement is not reused")
    func columnAddedByAnotherProcess() async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(in: directory, mode: .wal, playersSchema)
        let database = try await open(path, watchOthers: true)
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "all", LiveQueryDefinition(sql: "SELECT * FROM games"))
        _ = try await database.execute("INSERT INTO games(title) VALUES ('Go')")
        try await recorder.waitForRows("all") { $0.count == 3 }
        let before = database.prefetchedRefreshCount
        try await SQLite3CLI.run(path, "ALTER TABLE games ADD COLUMN seats INTEGER DEFAULT 4;")
        try await recorder.waitForRows("all") { $0.first?.count == 3 }
        // Apart, so that each is a refresh's leading edge and the watcher's
        // findings about the previous one are in; until one is read at the
        // commit (a finding of the watcher's handled in between drops what
        // a commit read: on a loaded machine, not every one is used).
        var inserted = 0
        while inserted < 4 || (database.prefetchedRefreshCount == before && inserted < 30) {
            _ = try await database.execute("INSERT INTO games(title) VALUES ('G\(inserted)')")
            inserted += 1
            try await recorder.waitForRows("all") { rows in
                rows.count == 3 + inserted && rows.allSatisfy { $0.count == 3 && $0[2] == .integer(4) }
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        let last = try #require(
            recorder.all.last { if case .changed(let change) = $0 { change.name == "all" } else { false } })
        if case .changed(let change) = last {
            #expect(change.result.columns == ["id", "title", "seats"])
        }
        // Read at commit again after the change, on a statement prepared
        // anew. That a read at the commit is used at all is scheduling: under
        // the whole suite in CI none of 30 was (each dropped by a finding of
        // the watcher's handled in between), so its absence is a known,
        // intermittent issue there; the columns above are what must hold.
        withKnownIssue("no read at the commit was used (a loaded machine)", isIntermittent: true) {
            #expect(database.prefetchedRefreshCount > before)
        }
        await database.close()
    }

    @Test("Own commits and another process's interleaved: the count never goes back and ends true")
    func neverStaleWithAnotherWriter() async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(in: directory, mode: .wal, playersSchema)
        let database = try await open(path, watchOthers: true)
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "n", LiveQueryDefinition(sql: "SELECT count(*) FROM players"))
        // Python's module at its defaults (a 5 s busy timeout: two writers wait for each other).
        let writer = try WriterProcess(.python, path: path)
        async let theirs: Void = {
            for index in 0..<60 {
                try await writer.commit("INSERT INTO players(gameID, name) VALUES (2, 'W\(index)')")
            }
        }()
        for index in 0..<60 {
            _ = try await database.execute("INSERT INTO players(gameID, name) VALUES (1, 'S\(index)')")
        }
        try await theirs
        await writer.finish()
        try await recorder.waitForRows("n") { $0 == [[.integer(124)]] }
        let counts = recorder.all.compactMap { event -> Int64? in
            guard case .changed(let change) = event, case .integer(let count) = change.result.rows.first?.first
            else { return nil }
            return count
        }
        #expect(counts == counts.sorted(), "a delivered count went back: \(counts)")
        #expect(database.prefetchedRefreshCount > 0)
        await database.close()
    }

    @Test("A slow query is not read at commit: the session's statement does not wait for it")
    func slowQueryIsNotReadAtCommit() async throws {
        let directory = try TemporaryDirectory()
        let database = try await open(
            try await makeDatabaseFile(in: directory, mode: .wal, playersSchema), limit: .milliseconds(5))
        let recorder = EventRecorder(database)
        // Tens of milliseconds: a count over a generated series joined to players.
        let slow = """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
            SELECT count(*) FROM n, players WHERE players.id = 1
            """
        _ = try await database.directory.register(name: "slow", LiveQueryDefinition(sql: slow))
        _ = try await database.execute("DELETE FROM players WHERE id = 1")
        try await recorder.waitForRows("slow") { $0 == [[.integer(0)]] }
        #expect(database.prefetchedRefreshCount == 0)
        await database.close()
    }

    @Test("Two queries of one commit are read at it together; with one that is not beside them, none is")
    func wholeCommitsOnly() async throws {
        let directory = try TemporaryDirectory()
        let database = try await open(try await makeDatabaseFile(in: directory, mode: .wal, playersSchema))
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "n", LiveQueryDefinition(sql: "SELECT count(*) FROM players"))
        _ = try await database.directory.register(
            name: "top", LiveQueryDefinition(sql: "SELECT max(score) FROM players"))
        _ = try await database.execute("INSERT INTO players(gameID, name, score) VALUES (1, 'A', 500)")
        try await recorder.waitForRows("n") { $0 == [[.integer(5)]] }
        try await recorder.waitForRows("top") { $0 == [[.integer(500)]] }
        #expect(database.prefetchedRefreshCount == 1, "one refresh, both queries read at the commit")

        // LIKE is the connection's (case_sensitive_like): read on the live queries' connection only.
        _ = try await database.directory.register(
            name: "b", LiveQueryDefinition(sql: "SELECT count(*) FROM players WHERE name LIKE 'b%'"))
        _ = try await database.execute("INSERT INTO players(gameID, name, score) VALUES (1, 'Bob', 700)")
        try await recorder.waitForRows("top") { $0 == [[.integer(700)]] }
        try await recorder.waitForRows("b") { $0 == [[.integer(4)]] }
        #expect(database.prefetchedRefreshCount == 1, "one of them is read on its connection: so are the others")
        await database.close()
    }

    @Test("SQL that answers by connection is never read at commit: last_insert_rowid() stays the live connection's")
    func connectionStateIsNotReadAtCommit() async throws {
        let directory = try TemporaryDirectory()
        let database = try await open(try await makeDatabaseFile(in: directory, mode: .wal, playersSchema))
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(
            name: "n", LiveQueryDefinition(sql: "SELECT count(*), last_insert_rowid() FROM players"))
        _ = try await database.execute("INSERT INTO players(gameID, name) VALUES (1, 'X')")
        // The session's connection would say 5 (its last insert); the live queries' says 0.
        try await recorder.waitForRows("n") { $0 == [[.integer(5), .integer(0)]] }
        #expect(database.prefetchedRefreshCount == 0)
        await database.close()
    }

    @Test("A script that sets reverse_unordered_selects ends reading at commit for the session")
    func pragmaStopsReadingAtCommit() async throws {
        let directory = try TemporaryDirectory()
        let database = try await open(try await makeDatabaseFile(in: directory, mode: .wal, playersSchema))
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "ids", LiveQueryDefinition(sql: "SELECT id FROM games"))
        _ = try await database.execute("INSERT INTO games(title) VALUES ('Go')")
        try await recorder.waitForRows("ids") { $0.count == 3 }
        #expect(database.prefetchedRefreshCount == 1)
        _ = try await database.execute("PRAGMA reverse_unordered_selects = ON; INSERT INTO games(title) VALUES ('Hex')")
        // Read on the live queries' connection, where the order is SQLite's usual one.
        try await recorder.waitForRows("ids") { $0 == (1...4).map { [.integer(Int64($0))] } }
        _ = try await database.execute("INSERT INTO games(title) VALUES ('Chess')")
        try await recorder.waitForRows("ids") { $0 == (1...5).map { [.integer(Int64($0))] } }
        #expect(database.prefetchedRefreshCount == 1)
        await database.close()
    }
}
