import Foundation
import SQLiveTestSupport
import Testing

@testable import SQLiveEngine

/// The final-state guarantee at the edges users meet every day: schema
/// changes under `SELECT *`, a database opened through a symbolic link.
@Suite("Live queries at the edges", .timeLimit(.minutes(2)))
struct LiveEdgeTests {
    @Test(
        "sqlive's own writes to a WITHOUT ROWID table refresh its live queries (SQLite reports no row event for them)")
    func withoutRowidOwnWrites() async throws {
        let database = try await LiveDatabase.open(.memory)
        _ = try await database.execute(
            "CREATE TABLE k(a TEXT PRIMARY KEY, b) WITHOUT ROWID; INSERT INTO k VALUES ('p', 1)")
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "k", LiveQueryDefinition(sql: "SELECT a, b FROM k ORDER BY a"))
        _ = try await database.execute("INSERT INTO k VALUES ('q', 2)")
        try await recorder.waitForRows("k") { $0 == [[.text("p"), .integer(1)], [.text("q"), .integer(2)]] }
        _ = try await database.execute("UPDATE k SET b = 5 WHERE a = 'p'")
        try await recorder.waitForRows("k") { $0 == [[.text("p"), .integer(5)], [.text("q"), .integer(2)]] }
        _ = try await database.execute("DELETE FROM k WHERE a = 'q'")
        try await recorder.waitForRows("k") { $0 == [[.text("p"), .integer(5)]] }
        // A WITHOUT ROWID table made after the live query exists.
        _ = try await database.execute("CREATE TABLE w(x PRIMARY KEY) WITHOUT ROWID")
        _ = try await database.directory.register(name: "w", LiveQueryDefinition(sql: "SELECT count(*) FROM w"))
        _ = try await database.execute("INSERT INTO w VALUES (1), (2)")
        try await recorder.waitForRows("w") { $0 == [[.integer(2)]] }
        await database.close()
    }

    enum Writer: String, CaseIterable, Sendable {
        case otherProcess, session
    }

    static let schemaChanges: [(String, [String], [[SQLValue]])] = [
        ("ALTER TABLE t ADD COLUMN w DEFAULT 7", ["id", "v", "w"], [[.integer(1), .integer(10), .integer(7)]]),
        ("ALTER TABLE t RENAME COLUMN v TO value", ["id", "value"], [[.integer(1), .integer(10)]]),
        ("ALTER TABLE t DROP COLUMN v", ["id"], [[.integer(1)]]),
    ]

    static let cells = JournalMode.allCases.flatMap { mode in
        Writer.allCases.flatMap { writer in schemaChanges.indices.map { (mode, writer, $0) } }
    }

    @Test("A schema change refreshes a lone SELECT * whose columns it changes", arguments: cells)
    func selectStarFollowsTheSchema(mode: JournalMode, writer: Writer, change: Int) async throws {
        let (sql, columns, rows) = Self.schemaChanges[change]
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(
            in: directory, mode: mode, "CREATE TABLE t(id INTEGER PRIMARY KEY, v); INSERT INTO t VALUES (1, 10);")
        let database = try await LiveDatabase.open(.file(path), options: noSafetyPoll)
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "all", LiveQueryDefinition(sql: "SELECT * FROM t"))
        switch writer {
        case .otherProcess: try await SQLite3CLI.run(path, sql + ";")
        case .session: _ = try await database.execute(sql)
        }
        try await recorder.wait(timeout: .seconds(15), "the new columns") { _ in
            recorder.changes("all").last?.result.columns == columns
        }
        #expect(recorder.changes("all").last.map { Array($0.result.rows) } == rows)
        await database.close()
    }

    @Test("A database opened through a symbolic link is watched where SQLite writes", arguments: JournalMode.allCases)
    func symbolicLink(mode: JournalMode) async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(
            in: directory, mode: mode, "CREATE TABLE t(id INTEGER PRIMARY KEY, v); INSERT INTO t VALUES (1, 10);")
        let links = try TemporaryDirectory()
        let link = links.path("link.sqlite")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        // No safety poll: only the file events can bring the commits in time.
        let database = try await LiveDatabase.open(.file(link), options: noSafetyPoll)
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "sum", LiveQueryDefinition(sql: "SELECT sum(v) FROM t"))
        if mode == .wal {
            #expect(await database.directory.list().first?.precision == .tables)
        }
        let writer = try SQLite3CLI.Session(path)
        for step in 1...5 {
            writer.send("UPDATE t SET v = v + 1;")
            await writer.sync()
            // With no poll on, only the file events can bring it at all.
            try await recorder.waitForRows("sum", timeout: .seconds(15)) { $0 == [[.integer(Int64(10 + step))]] }
        }
        await writer.finish()
        if mode == .wal {
            #expect(recorder.changes("sum").last?.tables == ["t"])
        }
        await database.close()
    }
}

@Suite("A database file replaced on disk", .timeLimit(.minutes(2)))
struct ReplacedFileTests {
    /// Do no harm, when following: a file deleted and made again by the
    /// sqlite3 shell at its defaults (no busy timeout), which writes it
    /// commit after commit, is followed once it has settled; opening it
    /// while the shell still wrote it failed the shell's commits with
    /// "database is locked" (2 of 80 in a round of 20).
    @Test("Following a file another process is still writing fails none of its commits")
    func followingHarmsNoWriter() async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(in: directory, mode: .delete, "CREATE TABLE t(x);")
        let database = try await LiveDatabase.open(.file(path))
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "n", LiveQueryDefinition(sql: "SELECT count(*) FROM t"))
        for round in 1...15 {
            try FileManager.default.removeItem(atPath: path)
            // One process, four commits back to back, at its defaults.
            let outcome = try await Launcher.run(
                "/usr/bin/sqlite3", [path],
                input: "CREATE TABLE t(x);\n" + (1...3).map { "INSERT INTO t VALUES (\($0));\n" }.joined())
            #expect(outcome.status == 0 && outcome.stderr.isEmpty, "round \(round): \(outcome.stderr)")
            try await Task.sleep(for: .milliseconds(150))
        }
        try await recorder.waitForRows("n") { $0 == [[.integer(3)]] }
        await database.close()
    }

    @Test("The settle rule: content, no journal under way, quiet for 25 ms, or 2 s at most")
    func settleRule() {
        typealias Wait = SettleWait<ContinuousClock.Instant>
        let start = ContinuousClock.now
        var wait = Wait(start: start)
        let modification = DataVersionProbe.Modification(seconds: 1, nanoseconds: 0, size: 8192)
        let settled = Wait.Reading(size: 8192, modification: modification, journalBusy: false)
        #expect(wait.next(nil, at: start) == .look(after: Wait.interval))
        #expect(wait.next(Wait.Reading(size: 0, modification: modification, journalBusy: false), at: start) != .open)
        #expect(wait.next(Wait.Reading(size: 8192, modification: modification, journalBusy: true), at: start) != .open)
        #expect(wait.next(settled, at: start + .milliseconds(10)) != .open)
        #expect(wait.next(settled, at: start + .milliseconds(20)) != .open)
        #expect(wait.next(settled, at: start + .milliseconds(35)) == .open)
        // A change starts the quiet time again.
        var changing = Wait(start: start)
        var later = settled
        later.size = 12288
        _ = changing.next(settled, at: start)
        #expect(changing.next(later, at: start + .milliseconds(30)) != .open)
        #expect(changing.next(later, at: start + .milliseconds(56)) == .open)
        // A file that never settles is followed after the patience.
        var busy = Wait(start: start)
        #expect(busy.next(nil, at: start + .seconds(1)) != .open)
        #expect(busy.next(nil, at: start + .seconds(2)) == .open)
    }

    @Test(
        "Live queries follow the path: they read the new file, keep their names, and see its writers",
        arguments: JournalMode.allCases)
    func followsThePath(mode: JournalMode) async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(
            in: directory, mode: mode, "CREATE TABLE t(id INTEGER PRIMARY KEY, v); INSERT INTO t VALUES (1, 10);")
        let database = try await LiveDatabase.open(.file(path), options: noSafetyPoll)
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "sum", LiveQueryDefinition(sql: "SELECT sum(v) FROM t"))
        _ = try await database.directory.register(name: "rows", LiveQueryDefinition(sql: "SELECT * FROM t"))
        try await database.directory.pause(name: "rows")

        // A new copy, made aside and renamed over the file (`.backup`, then `mv`).
        let copy = directory.path("copy.sqlite")
        try await SQLite3CLI.run(path, ".backup '\(copy)'")
        try await SQLite3CLI.run(copy, "UPDATE t SET v = 500; INSERT INTO t VALUES (2, 1);")
        guard rename(copy, path) == 0 else { throw WriterFailed(description: "rename failed") }

        do {
            try await recorder.waitForRows("sum") { $0 == [[.integer(501)]] }
        } catch {
            // What the queries stood at, for a failure met only in the whole suite.
            let list = await database.directory.list().map {
                "\($0.name): \($0.precision), v\($0.version), error \(String(describing: $0.error))"
            }
            let kept = await database.live.scheduler.maintenanceCounts()
            Issue.record("after the file was replaced: \(list); kept: \(kept); events: \(recorder.all.count)")
            throw error
        }
        if mode == .wal {
            // This process still holds the shared lock that tells other
            // processes the wal-index is in use (SQLite's DMS byte, 128 in
            // `-shm`): without it, the next opener truncates `-shm` under
            // our mapping (the old connections, closed after the new ones
            // opened, used to drop it: SIGBUS in the suite).
            let probe = try await Launcher.run(
                "/usr/bin/env",
                [
                    "python3", "-c",
                    "import fcntl,os,struct,sys; fd=os.open(sys.argv[1], os.O_RDWR); "
                        + "l=struct.pack('hhqqi', fcntl.F_WRLCK, 0, 128, 1, 0); "
                        + "r=fcntl.fcntl(fd, fcntl.F_GETLK, l); "
                        + "print('held' if struct.unpack('hhqqi', r)[0] != fcntl.F_UNLCK else 'free')",
                    path + "-shm",
                ])
            #expect(probe.stdout == "held\n", "\(probe.stdout)\(probe.stderr)")
        }
        let events = recorder.all
        #expect(
            events.contains {
                if case .databaseFileChanged(let change) = $0 {
                    return change.reason == .replaced && change.message.contains("now read the new one")
                }
                return false
            })
        #expect(recorder.changes("sum").last?.version == 2)
        let names = await database.directory.list().map(\.name)
        #expect(names == ["rows", "sum"])
        #expect(await database.directory.list().first { $0.name == "rows" }?.paused == true)

        // Another process writes the new file: seen.
        try await SQLite3CLI.run(path, "UPDATE t SET v = v + 1 WHERE id = 2;")
        try await recorder.waitForRows("sum") { $0 == [[.integer(502)]] }
        // The session writes the new file too.
        _ = try await database.execute("UPDATE t SET v = v + 1 WHERE id = 2")
        try await recorder.waitForRows("sum") { $0 == [[.integer(503)]] }
        #expect(try await SQLite3CLI.run(path, "SELECT sum(v) FROM t;") == "503\n")
        // The paused query reads the new file when resumed.
        try await database.directory.resume(name: "rows")
        try await recorder.waitForRows("rows") { $0.count == 2 }
        await database.close()
    }
}

@Suite("Pages compared, members behind", .timeLimit(.minutes(3)))
struct PagesComparedTests {
    @Test("A paused query sharing an evaluation catches up when resumed, though no page changed since")
    func pausedMemberCatchesUp() async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(
            in: directory, mode: .delete,
            "CREATE TABLE t(id INTEGER PRIMARY KEY, v); INSERT INTO t VALUES (1, 10); CREATE TABLE u(x);")
        let database = try await LiveDatabase.open(.file(path), options: noSafetyPoll)
        let recorder = EventRecorder(database)
        let definition = LiveQueryDefinition(sql: "SELECT sum(v) FROM t")
        _ = try await database.directory.register(name: "a", definition)
        _ = try await database.directory.register(name: "b", definition)
        try await database.directory.pause(name: "b")
        try await SQLite3CLI.run(path, "UPDATE t SET v = 20;")
        try await recorder.waitForRows("a") { $0 == [[.integer(20)]] }
        // Another commit that leaves t's pages alone: a new generation.
        try await SQLite3CLI.run(path, "INSERT INTO u VALUES (1);")
        try await database.directory.resume(name: "b")
        try await recorder.waitForRows("b", timeout: .seconds(15)) { $0 == [[.integer(20)]] }
        await database.close()
    }
}
