import Foundation
import SQLiveTestSupport
import Testing

@testable import SQLiveEngine

@Suite("Live queries", .timeLimit(.minutes(5)))
struct LiveQueryTests {
    @Test("Registering answers with the first result at version 1", arguments: JournalMode.allCases)
    func register(mode: JournalMode) async throws {
        let directory = try TemporaryDirectory()
        let database = try await LiveDatabase.open(
            .file(try await makeDatabaseFile(in: directory, mode: mode, playersSchema)))
        let snapshot = try await database.directory.register(
            name: "leaders",
            LiveQueryDefinition(
                sql: "SELECT name, score FROM players WHERE gameID = ? ORDER BY score DESC",
                parameters: .positional([.integer(1)])))
        #expect(snapshot.version == 1)
        #expect(snapshot.result.columns == ["name", "score"])
        #expect(snapshot.result.rows.map { $0[0] } == [.text("Blob Jr"), .text("Blob Sr"), .text("Blob")])
        #expect(snapshot.tables == ["players"])
        let list = await database.directory.list()
        #expect(list.map(\.name) == ["leaders"])
        #expect(list[0].region == "players(gameID,name,score)")
        await database.close()
    }

    @Test("Writes, several statements and duplicate names are refused clearly")
    func refusals() async throws {
        let database = try await LiveDatabase.open(.memory)
        _ = try await database.execute(playersSchema)
        await #expect(
            throws: SQLiveError.invalidLiveQuery(
                "a live query must be a read-only statement (SELECT, WITH, VALUES or a read-only PRAGMA)")
        ) {
            try await database.directory.register(name: "w", LiveQueryDefinition(sql: "DELETE FROM players"))
        }
        await #expect(throws: SQLiveError.invalidLiveQuery("a live query must be a single statement")) {
            try await database.directory.register(name: "m", LiveQueryDefinition(sql: "SELECT 1; SELECT 2"))
        }
        _ = try await database.directory.register(name: "a", LiveQueryDefinition(sql: "SELECT 1"))
        await #expect(throws: SQLiveError.liveQueryNameTaken("a")) {
            try await database.directory.register(name: "a", LiveQueryDefinition(sql: "SELECT 2"))
        }
        await #expect(throws: SQLiveError.unknownLiveQuery("b")) {
            try await database.directory.unregister(name: "b")
        }
        let error = await #expect(throws: SQLiveError.self) {
            try await database.directory.register(name: "x", LiveQueryDefinition(sql: "SELECT * FROM nowhere"))
        }
        #expect(error?.description == "no such table: nowhere")
        #expect(await database.directory.list().map(\.name) == ["a"])
        await database.close()
    }

    @Test(
        "A local write refreshes the query with cause local; a rollback refreshes nothing",
        arguments: JournalMode.allCases)
    func localWrite(mode: JournalMode) async throws {
        let directory = try TemporaryDirectory()
        let database = try await LiveDatabase.open(
            .file(try await makeDatabaseFile(in: directory, mode: mode, playersSchema)))
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(
            name: "total", LiveQueryDefinition(sql: "SELECT sum(score) FROM players"))
        _ = try await database.execute("BEGIN; UPDATE players SET score = 0; ROLLBACK;")
        _ = try await database.execute("UPDATE players SET score = score + 1 WHERE name = 'Blob'")
        try await recorder.waitForRows("total") { $0 == [[.integer(186)]] }
        let changes = recorder.changes("total")
        #expect(changes.count == 1)
        #expect(changes[0].version == 2)
        #expect(changes[0].cause == .local)
        #expect(changes[0].previous.rows == [[.integer(185)]])
        await database.close()
    }

    @Test(
        "The sqlite3 CLI inserts a row: the update arrives with cause external",
        arguments: JournalMode.allCases)
    func externalWrite(mode: JournalMode) async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(in: directory, mode: mode, playersSchema)
        let database = try await LiveDatabase.open(.file(path))
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(
            name: "names", LiveQueryDefinition(sql: "SELECT name FROM players ORDER BY id"))
        try await SQLite3CLI.run(path, "INSERT INTO players(gameID, name) VALUES (2, 'Bea');")
        try await recorder.waitForRows("names") { $0.last == [.text("Bea")] }
        let change = try #require(recorder.changes("names").last)
        #expect(change.cause == .external)
        #expect(change.version == 2)
        #expect(change.diff.added == [[.text("Bea")]])
        #expect(change.diff.removed.isEmpty)
        await database.close()
    }

    @Test("Polling detects other writers where inotify is not used", arguments: JournalMode.allCases)
    func pollingMonitor(mode: JournalMode) async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(in: directory, mode: mode, playersSchema)
        let options = LiveDatabase.Options(
            liveQueries: LiveQueryOptions(externalDetection: .polling(.milliseconds(50))))
        let database = try await LiveDatabase.open(.file(path), options: options)
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "n", LiveQueryDefinition(sql: "SELECT count(*) FROM players"))
        try await SQLite3CLI.run(path, "DELETE FROM players WHERE name = 'Ann';")
        try await recorder.waitForRows("n") { $0 == [[.integer(3)]] }
        #expect(recorder.changes("n").last?.cause == .external)
        await database.close()
    }

    @Test(
        "A burst of 2,000 commits by another process: final result right, far fewer refreshes",
        arguments: JournalMode.allCases)
    func burst(mode: JournalMode) async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(
            in: directory, mode: mode, "CREATE TABLE events(id INTEGER PRIMARY KEY, n);")
        let database = try await LiveDatabase.open(.file(path))
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(
            name: "count", LiveQueryDefinition(sql: "SELECT count(*), sum(n) FROM events"))
        let commits = 2_000
        let script = (1...commits).map { "INSERT INTO events(n) VALUES (\($0));" }.joined(separator: "\n")
        try await SQLite3CLI.run(path, script)
        let expected: [[SQLValue]] = [[.integer(Int64(commits)), .integer(Int64(commits * (commits + 1) / 2))]]
        try await recorder.waitForRows("count") { $0 == expected }
        // Let any late refresh land, then check nothing stale came after.
        try await Task.sleep(for: .milliseconds(300))
        let changes = recorder.changes("count")
        #expect(changes.last.map { Array($0.result.rows) } == expected)
        let info = try #require(await database.directory.list().first)
        #expect(info.refreshes < commits / 4, "refreshes: \(info.refreshes)")
        #expect(changes.map(\.version) == Array(2..<(2 + changes.count)))
        #expect(changes.map(\.coalesced).reduce(0, +) >= changes.count)
        await database.close()
    }

    @Test("Precision: 50 queries over 10 tables; a local write refreshes only its table's queries")
    func precision() async throws {
        let directory = try TemporaryDirectory()
        let schema = (0..<10).map { "CREATE TABLE t\($0)(id INTEGER PRIMARY KEY, a, b);" }.joined()
        let database = try await LiveDatabase.open(.file(try await makeDatabaseFile(in: directory, mode: .wal, schema)))
        let recorder = EventRecorder(database)
        for table in 0..<10 {
            for query in 0..<5 {
                _ = try await database.directory.register(
                    name: "q\(table)_\(query)",
                    LiveQueryDefinition(sql: "SELECT count(*) + \(query) FROM t\(table)"))
            }
        }
        _ = try await database.execute("INSERT INTO t3(a) VALUES (1)")
        try await recorder.wait("5 changes") { _ in recorder.all.count >= 5 }
        try await Task.sleep(for: .milliseconds(200))
        let refreshed = await database.directory.list().filter { $0.refreshes > 0 }.map(\.name)
        #expect(refreshed == (0..<5).map { "q3_\($0)" })
        #expect(Set(recorder.all.compactMap(\.name)) == Set(refreshed))
        await database.close()
    }

    @Test("Column precision: an update of a column the query does not read refreshes nothing")
    func columnPrecision() async throws {
        let database = try await LiveDatabase.open(.memory)
        _ = try await database.execute(playersSchema)
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "names", LiveQueryDefinition(sql: "SELECT name FROM players"))
        _ = try await database.directory.register(
            name: "scores", LiveQueryDefinition(sql: "SELECT sum(score) FROM players"))
        _ = try await database.execute("UPDATE players SET score = score * 2")
        try await recorder.waitForRows("scores") { $0 == [[.integer(370)]] }
        try await Task.sleep(for: .milliseconds(100))
        let info = await database.directory.list()
        #expect(info.first { $0.name == "names" }?.refreshes == 0)
        #expect(info.first { $0.name == "scores" }?.refreshes == 1)
        await database.close()
    }

    @Test("Identical SQL and parameters share one evaluation")
    func sharing() async throws {
        let database = try await LiveDatabase.open(.memory)
        _ = try await database.execute(playersSchema)
        let recorder = EventRecorder(database)
        database.traceSettings = TraceSettings(enabled: true)
        let trace = TraceRecorder(database)
        _ = try await database.directory.register(name: "a", LiveQueryDefinition(sql: "SELECT count(*) FROM players"))
        _ = try await database.directory.register(name: "b", LiveQueryDefinition(sql: "SELECT count(*) FROM players"))
        // The second registration reuses the first one's result.
        try await trace.wait { $0.contains { $0.origin == .liveQuery } }
        _ = try await database.execute("INSERT INTO players(gameID, name) VALUES (1, 'Zed')")
        try await recorder.wait("both changed") { _ in
            recorder.changes("a").count == 1 && recorder.changes("b").count == 1
        }
        try await Task.sleep(for: .milliseconds(200))
        // One fetch at registration, one refresh for both queries.
        #expect(trace.all.filter { $0.origin == .liveQuery }.count == 2)
        let info = await database.directory.list()
        #expect(info.map(\.refreshes) == [1, 1])
        #expect(recorder.changes("a")[0].result == recorder.changes("b")[0].result)
        await database.close()
    }

    @Test("Directories of their own (MCP sessions over HTTP): a name in each, one evaluation for both")
    func directoriesShareEvaluations() async throws {
        let database = try await LiveDatabase.open(.memory)
        _ = try await database.execute(playersSchema)
        database.traceSettings = TraceSettings(enabled: true)
        let trace = TraceRecorder(database)
        let other = database.makeDirectory()
        let sql = LiveQueryDefinition(sql: "SELECT count(*) FROM players")
        _ = try await database.directory.register(name: "a", sql)
        // The same name is free in another directory; its query is the same evaluation.
        _ = try await other.register(name: "a", sql)
        #expect(other.names == ["a"] && database.directory.names == ["a"])
        var events = other.events().makeAsyncIterator()
        try await trace.wait { $0.contains { $0.origin == .liveQuery } }
        _ = try await database.execute("INSERT INTO players(gameID, name) VALUES (1, 'Zed')")
        guard case .changed(let change) = await events.next() else {
            Issue.record("no change")
            return
        }
        #expect(change.name == "a" && change.result.rows == [[.integer(5)]])
        try await Task.sleep(for: .milliseconds(200))
        #expect(trace.all.filter { $0.origin == .liveQuery }.count == 2)
        // Unregistered in one, it lives on in the other.
        await other.unregisterAll()
        #expect(other.names.isEmpty && database.directory.names == ["a"])
        #expect(try await database.directory.current(name: "a").snapshot.result.rows.count == 1)
        await database.close()
    }

    @Test("Pause stops the work; resume refreshes once if anything changed")
    func pauseResume() async throws {
        let database = try await LiveDatabase.open(.memory)
        _ = try await database.execute(playersSchema)
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "n", LiveQueryDefinition(sql: "SELECT count(*) FROM players"))
        try await database.directory.pause(name: "n")
        for name in ["X", "Y", "Z"] {
            _ = try await database.execute("INSERT INTO players(gameID, name) VALUES (1, '\(name)')")
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(recorder.changes("n").isEmpty)
        #expect(await database.directory.list()[0].refreshes == 0)
        #expect(await database.directory.list()[0].paused)
        try await database.directory.resume(name: "n")
        try await recorder.waitForRows("n") { $0 == [[.integer(7)]] }
        try await Task.sleep(for: .milliseconds(100))
        #expect(recorder.changes("n").count == 1)
        #expect(recorder.changes("n")[0].coalesced == 3)
        #expect(await database.directory.list()[0].refreshes == 1)
        await database.close()
    }

    @Test("A query can be redefined in place; its version goes on")
    func redefine() async throws {
        let database = try await LiveDatabase.open(.memory)
        _ = try await database.execute(playersSchema)
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(
            name: "p",
            LiveQueryDefinition(
                sql: "SELECT name FROM players WHERE gameID = ? ORDER BY name",
                parameters: .positional([.integer(1)])))
        let updated = try await database.directory.update(name: "p", parameters: .positional([.integer(2)]))
        #expect(updated.version == 2)
        #expect(updated.result.rows == [[.text("Ann")]])
        _ = try await database.execute("INSERT INTO players(gameID, name) VALUES (2, 'Bo')")
        try await recorder.waitForRows("p") { $0 == [[.text("Ann")], [.text("Bo")]] }
        #expect(recorder.changes("p").last?.version == 3)
        try await database.directory.unregister(name: "p")
        _ = try await database.execute("INSERT INTO players(gameID, name) VALUES (2, 'Cy')")
        try await Task.sleep(for: .milliseconds(100))
        #expect(recorder.changes("p").count == 1)
        #expect(await database.directory.list().isEmpty)
        await database.close()
    }

    @Test(
        "A dropped table yields an error; the query recovers when it returns",
        arguments: JournalMode.allCases)
    func droppedTable(mode: JournalMode) async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(in: directory, mode: mode, playersSchema)
        let database = try await LiveDatabase.open(.file(path))
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "n", LiveQueryDefinition(sql: "SELECT count(*) FROM players"))
        _ = try await database.execute("DROP TABLE players")
        try await recorder.wait("an error") { _ in !recorder.failures("n").isEmpty }
        #expect(recorder.failures("n").first?.description == "no such table: players")
        #expect(await database.directory.list()[0].error != nil)
        // Re-created by another process.
        try await SQLite3CLI.run(
            path,
            "CREATE TABLE players(id INTEGER PRIMARY KEY, gameID, name, score); INSERT INTO players(name) VALUES ('Back');"
        )
        try await recorder.waitForRows("n") { $0 == [[.integer(1)]] }
        #expect(recorder.failures("n").count == 1)
        #expect(await database.directory.list()[0].error == nil)
        await database.close()
    }

    @Test(
        "A writer holding the lock for seconds: no error, the update follows its commit",
        arguments: JournalMode.allCases)
    func longHeldLock(mode: JournalMode) async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(in: directory, mode: mode, playersSchema)
        let database = try await LiveDatabase.open(.file(path))
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "n", LiveQueryDefinition(sql: "SELECT count(*) FROM players"))
        let writer = try SQLite3CLI.Session(path)
        writer.send("BEGIN EXCLUSIVE;")
        for index in 0..<10 {
            writer.send("INSERT INTO players(gameID, name) VALUES (1, 'p\(index)');")
        }
        await writer.sync()
        try await Task.sleep(for: .seconds(2))
        writer.send("COMMIT;")
        await writer.finish()
        try await recorder.waitForRows("n") { $0 == [[.integer(14)]] }
        #expect(recorder.failures("n").isEmpty)
        await database.close()
    }

    @Test("A database file deleted under sqlive is reported")
    func fileDeleted() async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(in: directory, mode: .delete, playersSchema)
        let database = try await LiveDatabase.open(.file(path))
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "n", LiveQueryDefinition(sql: "SELECT count(*) FROM players"))
        try FileManager.default.removeItem(atPath: path)
        try await recorder.wait("file event") { events in
            events.contains { if case .databaseFileChanged = $0 { return true } else { return false } }
        }
        #expect(recorder.all.contains(.databaseFileChanged(DatabaseFileChange(path: path, reason: .deleted))))
        await database.close()
    }

    /// SQLite itself refuses a write to a deleted file in rollback-journal
    /// modes (`SQLITE_READONLY_DBMOVED`) but not in WAL mode, where the
    /// commit is acknowledged and lost with the file. Both are refused,
    /// said as what they are; reads go on; a new file put at the path is
    /// followed, and writes then land in it.
    @Test(
        "Writes to a file deleted under the session are refused until a file at the path is followed",
        arguments: JournalMode.allCases)
    func writesRefusedWhileDeleted(mode: JournalMode) async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(in: directory, mode: mode, playersSchema)
        let copy = directory.path("copy.sqlite")
        try await SQLite3CLI.run(path, "VACUUM INTO '\(copy)';")
        let database = try await LiveDatabase.open(.file(path))
        let recorder = EventRecorder(database)
        _ = try await database.execute("INSERT INTO players(gameID, name) VALUES (1, 'before')")
        // As `rm db.sqlite*` does (a `-wal` left behind would be replayed
        // onto whatever file comes next at the path: SQLite's rule, not ours).
        for suffix in ["", "-wal", "-shm", "-journal"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
        do {
            _ = try await database.execute("INSERT INTO players(gameID, name) VALUES (1, 'lost')")
            Issue.record("a write to a deleted file was acknowledged")
        } catch {
            #expect(error.failure.code == 8, "\(error)")
            #expect(error.failure.message.contains("\(path) was deleted while open"), "\(error)")
        }
        // Reads go on, on the file still open.
        let rows = try await database.execute("SELECT count(*) FROM players WHERE name = 'before'")
        #expect(rows.first?.rows == [[.integer(1)]])
        // A file put back at the path is followed; writes land in it.
        _ = rename(copy, path)
        try await recorder.wait("the path followed") { events in
            events.contains {
                if case .databaseFileChanged(let change) = $0 { change.reason == .replaced } else { false }
            }
        }
        _ = try await database.execute("INSERT INTO players(gameID, name) VALUES (1, 'after')")
        await database.close()
        let names = try await SQLite3CLI.run(
            path, "SELECT name FROM players WHERE name IN ('before', 'lost', 'after');")
        #expect(names == "after\n")
    }

    /// Where the guard skips its `stat`: only where no commit can follow.
    @Test("The path guard's skip rule: reads, and scripts inside a transaction that cannot end it")
    func pathGuardSkipRule() {
        #expect(PathGuard.cannotCommit("SELECT * FROM t", inTransaction: false))
        #expect(PathGuard.cannotCommit("  select 1;  ", inTransaction: false))
        #expect(PathGuard.cannotCommit("VALUES (1)", inTransaction: false))
        #expect(!PathGuard.cannotCommit("SELECT 1; DELETE FROM t", inTransaction: false))
        #expect(!PathGuard.cannotCommit("selected", inTransaction: false))
        #expect(!PathGuard.cannotCommit("/* a comment */ SELECT 1", inTransaction: false))
        #expect(!PathGuard.cannotCommit("INSERT INTO t VALUES (1)", inTransaction: false))
        #expect(PathGuard.cannotCommit("INSERT INTO t VALUES (1)", inTransaction: true))
        #expect(!PathGuard.cannotCommit("COMMIT", inTransaction: true))
        #expect(!PathGuard.cannotCommit("end transaction", inTransaction: true))
        #expect(!PathGuard.cannotCommit("RELEASE sp", inTransaction: true))
        #expect(!PathGuard.cannotCommit("WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x", inTransaction: false))
    }

    @Test("A database file replaced by another one is reported")
    func fileReplaced() async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(in: directory, mode: .delete, playersSchema)
        let database = try await LiveDatabase.open(.file(path))
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "n", LiveQueryDefinition(sql: "SELECT count(*) FROM players"))
        let other = directory.path("other.sqlite")
        try await SQLite3CLI.run(other, "CREATE TABLE players(id);")
        try FileManager.default.moveItem(atPath: other, toPath: directory.path("tmp-rename"))
        _ = rename(directory.path("tmp-rename"), path)
        try await recorder.wait("file event") { events in
            events.contains { if case .databaseFileChanged = $0 { return true } else { return false } }
        }
        // Followed: the message says the live queries read the new file.
        let message = "\(path) was replaced by another file: the live queries now read the new one"
        #expect(
            recorder.all.contains(
                .databaseFileChanged(DatabaseFileChange(path: path, reason: .replaced, message: message))))
        try await recorder.waitForRows("n") { $0 == [[.integer(0)]] }
        await database.close()
    }

    @Test("A result over the row cap is delivered truncated")
    func rowCap() async throws {
        let options = LiveDatabase.Options(liveQueries: LiveQueryOptions(rowCap: 10))
        let database = try await LiveDatabase.open(.memory, options: options)
        let snapshot = try await database.directory.register(
            name: "many",
            LiveQueryDefinition(
                sql: "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 1000000) SELECT i FROM n"))
        #expect(snapshot.result.rows.count == 10)
        #expect(snapshot.result.truncated)
        // The rows past the cap are counted, not kept.
        #expect(snapshot.result.total == 1_000_000)
        await database.close()
    }

    @Test("A truncated result says how many rows there really are, and a change of the count is delivered")
    func honestCount() async throws {
        let options = LiveDatabase.Options(liveQueries: LiveQueryOptions(rowCap: 3))
        let database = try await LiveDatabase.open(.memory, options: options)
        _ = try await database.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2), (3), (4), (5)")
        let recorder = EventRecorder(database)
        let snapshot = try await database.directory.register(
            name: "first", LiveQueryDefinition(sql: "SELECT x FROM t ORDER BY x"))
        #expect(snapshot.result.rows == [[.integer(1)], [.integer(2)], [.integer(3)]])
        #expect(snapshot.result.total == 5)
        // A row past the cap: the rows shown are the same, the count is not.
        _ = try await database.execute("INSERT INTO t VALUES (9)")
        try await recorder.wait("the count of 6") { _ in recorder.changes("first").last?.result.total == 6 }
        let change = try #require(recorder.changes("first").last)
        #expect(change.result.rows == snapshot.result.rows)
        #expect(change.result.truncated)
        await database.close()
    }

    @Test("Dropping every live query by name leaves the handles' own: the schema watch and unlisted queries go on")
    func unregisterAllLeavesHandles() async throws {
        let directory = try TemporaryDirectory()
        let database = try await LiveDatabase.open(
            .file(try await makeDatabaseFile(in: directory, mode: .wal, playersSchema)))
        var schema = try await database.schemaChanges().makeAsyncIterator()
        let unlisted = try await database.watch(
            name: "unlisted", LiveQueryDefinition(sql: "SELECT count(*) FROM games"))
        _ = try await database.directory.register(name: "a", LiveQueryDefinition(sql: "SELECT count(*) FROM players"))
        await database.directory.unregisterAll()
        #expect(await database.directory.list().isEmpty)
        _ = try await database.execute(
            "CREATE TABLE rounds(id INTEGER PRIMARY KEY); INSERT INTO games(title) VALUES ('Go')")
        // The unlisted query is still live: it reaches the new count.
        let deadline = ContinuousClock.now + .seconds(20)
        var rows = try await unlisted.current().snapshot.result.rows
        while rows != [[.integer(3)]] && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
            rows = try await unlisted.current().snapshot.result.rows
        }
        #expect(rows == [[.integer(3)]])
        #expect(await schema.next() != nil, "the schema watch saw the new table")
        await unlisted.cancel()
        await database.close()
    }

    @Test("An unlisted query is its handle's alone: no list, no name, no other stream sees it")
    func unlistedQueryIsTheHandles() async throws {
        let database = try await LiveDatabase.open(.memory)
        _ = try await database.execute(playersSchema)
        let everyone = EventRecorder(database)
        let session = StreamRecorder(database.sessionEvents())
        let unlisted = try await database.watch(
            name: "unlisted", LiveQueryDefinition(sql: "SELECT count(*) FROM games"))
        _ = try await database.directory.register(name: "named", LiveQueryDefinition(sql: "SELECT count(*) FROM games"))
        #expect(await database.directory.list().map(\.name) == ["named"])
        // A caller that learnt its name still cannot reach it by name.
        for attempt in [
            { try await database.directory.unregister(name: unlisted.name) },
            { try await database.directory.pause(name: unlisted.name) },
            { _ = try await database.directory.current(name: unlisted.name) },
            { _ = try await database.directory.update(name: unlisted.name, sql: "SELECT 1") },
        ] as [@Sendable () async throws -> Void] {
            await #expect(throws: SQLiveError.unknownLiveQuery(unlisted.name)) { try await attempt() }
        }
        var own = unlisted.events.makeAsyncIterator()
        _ = try await database.execute("INSERT INTO games(title) VALUES ('Go')")
        let change = try #require(await own.next())
        #expect(change.name == unlisted.name)
        // The named twin's change arrived everywhere; the unlisted one's only at its handle.
        try await everyone.wait("the named query's change") { !$0.isEmpty }
        try await session.wait("the named query's change") { !$0.isEmpty }
        #expect(everyone.all.allSatisfy { $0.name == "named" })
        #expect(
            session.all.allSatisfy { event in
                if case .live(let live) = event { return live.name == "named" }
                return true
            })
        #expect(try await unlisted.current().snapshot.version == 2)
        await unlisted.cancel()
        await database.close()
    }

    @Test("A handle ends its own registration only: not the directory's query of the same name")
    func handleEndsItsOwnRegistration() async throws {
        let database = try await LiveDatabase.open(.memory)
        _ = try await database.execute(playersSchema)
        let handle = try await database.watch(name: "a", LiveQueryDefinition(sql: "SELECT count(*) FROM games"))
        // A name is a label for a handle: the directory's own "a" is another registration.
        _ = try await database.directory.register(name: "a", LiveQueryDefinition(sql: "SELECT 2"))
        #expect(handle.id != database.directory.handle(named: "a")?.id)
        await handle.cancel()
        #expect(await database.live.scheduler.infos([handle.id]).isEmpty)
        #expect(await database.directory.list().map(\.name) == ["a"])
        #expect(try await database.directory.current(name: "a").snapshot.result.rows == [[.integer(2)]])
        await #expect(throws: SQLiveError.unknownLiveQuery("a")) { _ = try await handle.current() }
        await database.close()
    }

    @Test("Letting a handle go ends its live query")
    func releasedHandleEndsQuery() async throws {
        let database = try await LiveDatabase.open(.memory)
        _ = try await database.execute(playersSchema)
        let id: LiveQueryID
        do {
            let handle = try await database.watch(name: "kept", LiveQueryDefinition(sql: "SELECT count(*) FROM games"))
            #expect(handle.first.version == 1)
            id = handle.id
            #expect(await database.live.scheduler.infos([id]).count == 1)
        }
        let deadline = ContinuousClock.now + .seconds(20)
        while await !database.live.scheduler.infos([id]).isEmpty && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(await database.live.scheduler.infos([id]).isEmpty)
        await database.close()
    }
}

@Suite("Live queries: the directory of names", .timeLimit(.minutes(2)))
struct LiveQueryDirectoryTests {
    @Test("A directory answers with the first rows and keeps no copy of them: the query's state has them")
    func firstRowsNotKeptTwice() async throws {
        let database = try await LiveDatabase.open(.memory)
        _ = try await database.execute(playersSchema)
        let snapshot = try await database.directory.register(
            name: "names", LiveQueryDefinition(sql: "SELECT name FROM players ORDER BY name"))
        #expect(snapshot.result.rows.count == 4 && snapshot.version == 1)
        let handle = try #require(database.directory.handle(named: "names"))
        #expect(handle.first.result.rows.isEmpty)
        #expect(handle.first.version == 1 && handle.first.result.columns == ["name"] && handle.first.result.total == 4)
        #expect(try await database.directory.current(name: "names").snapshot.result == snapshot.result)
        // A handle of one's own keeps its first result whole.
        let own = try await database.watch(name: "own", LiveQueryDefinition(sql: "SELECT name FROM players"))
        #expect(own.first.result.rows.count == 4)
        await database.close()
    }

    @Test("A name is taken once, even by two registrations at the same moment; a blank one never")
    func namesAreUnique() async throws {
        let database = try await LiveDatabase.open(.memory)
        _ = try await database.execute(playersSchema)
        let definition = LiveQueryDefinition(sql: "SELECT count(*) FROM games")
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    do throws(SQLiveError) {
                        _ = try await database.directory.register(name: "q", definition)
                        return true
                    } catch {
                        #expect(error == .liveQueryNameTaken("q"))
                        return false
                    }
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 }.count == 1)
        #expect(await database.directory.list().map(\.name) == ["q"])
        // The losers registered nothing: one query in the engine.
        #expect(await database.live.scheduler.memberCount == 1)
        await #expect(throws: SQLiveError.invalidLiveQueryName("a live query needs a name that is not blank")) {
            _ = try await database.directory.register(name: " ", definition)
        }
        // A failed registration frees its name.
        await #expect(throws: SQLiveError.self) {
            _ = try await database.directory.register(name: "bad", LiveQueryDefinition(sql: "SELECT * FROM nothing"))
        }
        _ = try await database.directory.register(name: "bad", definition)
        await database.directory.unregisterAll()
        #expect(await database.live.scheduler.memberCount == 0)
        await database.close()
    }

    @Test("The directory's events carry its queries' changes from the first, and nothing of handles it does not hold")
    func eventsFromTheFirst() async throws {
        let database = try await LiveDatabase.open(.memory)
        _ = try await database.execute(playersSchema)
        let events = StreamRecorder(database.directory.events())
        let other = try await database.watch(name: "other", LiveQueryDefinition(sql: "SELECT count(*) FROM games"))
        for round in 1...20 {
            // Written while registering: a change right after the first
            // result is the directory's too.
            async let write: Void = {
                _ = try? await database.execute("INSERT INTO games(title) VALUES ('g\(round)')")
            }()
            _ = try await database.directory.register(
                name: "q\(round)", LiveQueryDefinition(sql: "SELECT count(*) FROM games"))
            await write
        }
        // What a new registration reads: every write above committed.
        let total = try await database.watch(name: "total", LiveQueryDefinition(sql: "SELECT count(*) FROM games"))
            .first.result.rows
        for round in 1...20 {
            try await Self.eventuallyTrue("q\(round) reaches the last count") {
                try await database.directory.current(name: "q\(round)").snapshot.result.rows == total
            }
        }
        // Every version after the first reached the directory's stream, in order.
        for round in 1...20 {
            let (snapshot, _) = try await database.directory.current(name: "q\(round)")
            try await events.wait("q\(round)'s versions") { events in
                events.contains { $0.name == "q\(round)" && Self.version(of: $0) == snapshot.version }
                    || snapshot.version == 1
            }
            let versions = events.all.filter { $0.name == "q\(round)" }.compactMap(Self.version)
            #expect(versions == Array(stride(from: 2, through: snapshot.version, by: 1)))
        }
        #expect(!events.all.contains { $0.name == "other" })
        await other.cancel()
        await database.close()
    }

    @Test("A registration while a refresh of the same SQL is under way reads the commit that refresh is for")
    func registrationDuringItsRefresh() async throws {
        // A query that takes a while on any machine: its refresh is still
        // reading when the second registration comes.
        let database = try await LiveDatabase.open(
            .memory, options: LiveDatabase.Options(liveQueries: LiveQueryOptions(refreshBudget: nil)))
        _ = try await database.execute(playersSchema)
        let sql =
            "SELECT (SELECT count(*) FROM games), (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
            + "WHERE i < 1500000) SELECT count(*) FROM n)"
        let first = try await database.watch(name: "first", LiveQueryDefinition(sql: sql))
        let before = first.first.result.rows[0][0]
        let started = ContinuousClock.now
        _ = try await database.execute("INSERT INTO games(title) VALUES ('new')")
        // The commit's refresh of `first` has begun (its read takes longer).
        try await Task.sleep(for: .milliseconds(100))
        let second = try await database.watch(name: "second", LiveQueryDefinition(sql: sql))
        let read = ContinuousClock.now - started
        #expect(before == .integer(2))
        #expect(
            second.first.result.rows[0][0] == .integer(3),
            "registered after the commit, its first result is older (\(read) after the commit)")
        await first.cancel()
        await second.cancel()
        await database.close()
    }

    static func version(of event: LiveQueryEvent) -> Int? {
        if case .changed(let change) = event { return change.version }
        return nil
    }

    static func eventuallyTrue(_ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while try await !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("timed out: \(what)")
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

@Suite("Live queries: a slow query", .timeLimit(.minutes(5)))
struct SlowLiveQueryTests {
    @Test("A slow live query does not hold back the others' updates")
    func slowQueryDoesNotDelayOthers() async throws {
        // No time budget: on a loaded machine this query may take longer
        // than the default one (SlowQueryTests checks the budget).
        let database = try await LiveDatabase.open(
            .memory, options: LiveDatabase.Options(liveQueries: LiveQueryOptions(refreshBudget: nil)))
        _ = try await database.execute(playersSchema)
        let recorder = EventRecorder(database)
        let slow = """
            SELECT count(*), (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000000)
            SELECT count(*) FROM n) FROM players
            """
        _ = try await database.directory.register(name: "slow", LiveQueryDefinition(sql: slow))
        _ = try await database.directory.register(
            name: "fast", LiveQueryDefinition(sql: "SELECT count(*) FROM players"))
        _ = try await database.execute("INSERT INTO players(gameID, name) VALUES (1, 'New')")
        try await recorder.wait("both updates") { _ in
            !recorder.changes("slow").isEmpty && !recorder.changes("fast").isEmpty
        }
        // The fast query's update was delivered first, without waiting for the slow one.
        #expect(recorder.all.compactMap(\.name) == ["fast", "slow"])
        await database.close()
    }
}
