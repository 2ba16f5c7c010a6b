import Foundation
import SQLiveLocks
import SQLiveTestSupport
import Testing

@testable import SQLiveEngine

/// A journal mode as another writer sets it: the file's mode and, for WAL,
/// the writer's `synchronous` setting.
enum WriterJournal: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case walFull = "WAL, synchronous=FULL"
    case walNormal = "WAL, synchronous=NORMAL"
    case walOff = "WAL, synchronous=OFF"
    case delete = "DELETE"
    case truncate = "TRUNCATE"
    case persist = "PERSIST"

    var testDescription: String { rawValue }

    /// The mode the file is created in.
    var fileMode: JournalMode {
        switch self {
        case .walFull, .walNormal, .walOff: .wal
        case .delete, .truncate, .persist: .delete
        }
    }

    /// What the writer runs first; nothing where the default applies.
    var pragmas: [String] {
        switch self {
        case .walFull: []
        case .walNormal: ["PRAGMA synchronous=NORMAL"]
        case .walOff: ["PRAGMA synchronous=OFF"]
        case .delete: []
        case .truncate: ["PRAGMA journal_mode=TRUNCATE"]
        case .persist: ["PRAGMA journal_mode=PERSIST"]
        }
    }
}

/// Live options under which a commit found only by the safety poll never arrives in time.
let noSafetyPoll = LiveDatabase.Options(liveQueries: LiveQueryOptions(safetyPollInterval: .seconds(3600)))

@Suite("Live queries with real writers at their defaults", .timeLimit(.minutes(5)))
struct LiveWriterTests {
    static let cells = WriterProcess.Kind.allCases.flatMap { kind in WriterJournal.allCases.map { (kind, $0) } }

    @Test(
        "Each commit arrives on its own, the last one included, never by the safety poll",
        arguments: cells)
    func everyCommitArrives(kind: WriterProcess.Kind, journal: WriterJournal) async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(
            in: directory, mode: journal.fileMode, "CREATE TABLE events(id INTEGER PRIMARY KEY, n);")
        let database = try await LiveDatabase.open(.file(path), options: noSafetyPoll)
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(
            name: "events", LiveQueryDefinition(sql: "SELECT count(*), max(n) FROM events"))
        let writer = try WriterProcess(kind, path: path, pragmas: journal.pragmas)
        // Lockstep: the next commit waits for the update of this one, so a
        // commit delivered only "at the next commit" hangs the test.
        for n in 1...5 {
            try await writer.commit("INSERT INTO events(n) VALUES (\(n));")
            try await recorder.waitForRows("events", timeout: .seconds(15)) {
                $0 == [[.integer(Int64(n)), .integer(Int64(n))]]
            }
        }
        await writer.finish()
        let changes = recorder.changes("events")
        #expect(changes.map(\.version) == Array(2...6))
        #expect(changes.allSatisfy { $0.cause == .external })
        await database.close()
    }

    @Test("A long statement of the session does not hold other writers' updates back", arguments: JournalMode.allCases)
    func longStatement(mode: JournalMode) async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(
            in: directory, mode: mode, "CREATE TABLE events(id INTEGER PRIMARY KEY, n);")
        let database = try await LiveDatabase.open(.file(path), options: noSafetyPoll)
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "n", LiveQueryDefinition(sql: "SELECT count(*) FROM events"))
        // Counts for minutes; it reads no table, so it locks nothing in either mode.
        let ended = Locked(false)
        let long = Task {
            defer { ended.withLock { $0 = true } }
            return try await database.execute(
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c")
        }
        try await Task.sleep(for: .milliseconds(200))
        for n in 1...3 {
            try await SQLite3CLI.run(path, "INSERT INTO events(n) VALUES (\(n));")
            try await recorder.waitForRows("n", timeout: .seconds(15)) { $0 == [[.integer(Int64(n))]] }
        }
        // Still running: the updates did not wait for it.
        #expect(!ended.withLock { $0 })
        database.interrupt()
        let result = await long.result
        #expect(throws: ScriptFailure.self) { try result.get() }
        await database.close()
    }

    @Test("In WAL mode, a transaction open in the session does not hold other writers' updates back")
    func openTransactionWAL() async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(
            in: directory, mode: .wal, "CREATE TABLE events(id INTEGER PRIMARY KEY, n);")
        let database = try await LiveDatabase.open(.file(path), options: noSafetyPoll)
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "n", LiveQueryDefinition(sql: "SELECT count(*) FROM events"))
        _ = try await database.execute("BEGIN; SELECT count(*) FROM events;")
        for n in 1...3 {
            try await SQLite3CLI.run(path, "INSERT INTO events(n) VALUES (\(n));")
            try await recorder.waitForRows("n", timeout: .seconds(15)) { $0 == [[.integer(Int64(n))]] }
        }
        // The session's own snapshot is still the old one.
        #expect(try await database.rows("SELECT count(*) FROM events") == [[.integer(0)]])
        _ = try await database.execute("COMMIT")
        #expect(try await database.rows("SELECT count(*) FROM events") == [[.integer(3)]])
        await database.close()
    }

    @Test("In a rollback journal, another writer's commit arrives as soon as the session's transaction lets it")
    func openTransactionRollbackJournal() async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(
            in: directory, mode: .delete, "CREATE TABLE events(id INTEGER PRIMARY KEY, n);")
        let database = try await LiveDatabase.open(.file(path), options: noSafetyPoll)
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "n", LiveQueryDefinition(sql: "SELECT count(*) FROM events"))
        _ = try await database.execute("BEGIN; SELECT count(*) FROM events;")
        // The writer waits (a busy timeout: the user's own open transaction
        // holds SQLite's ordinary read lock, as in the sqlite3 shell).
        let writer = Task {
            try await SQLite3CLI.run(path, "INSERT INTO events(n) VALUES (1);", defaultTimeout: false)
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(recorder.changes("n").isEmpty)
        _ = try await database.execute("COMMIT")
        _ = try await writer.value
        try await recorder.waitForRows("n", timeout: .seconds(15)) { $0 == [[.integer(1)]] }
        await database.close()
    }
}

@Suite("Live queries show committed rows", .timeLimit(.minutes(5)))
struct CommittedRowsTests {
    @Test(
        "A query registered inside a transaction shows committed rows; after ROLLBACK it equals the database",
        arguments: JournalMode.allCases)
    func registeredInTransaction(mode: JournalMode) async throws {
        let directory = try TemporaryDirectory()
        let database = try await LiveDatabase.open(
            .file(try await makeDatabaseFile(in: directory, mode: mode, playersSchema)), options: noSafetyPoll)
        let recorder = EventRecorder(database)
        _ = try await database.execute("BEGIN; INSERT INTO players(gameID, name) VALUES (1, 'Ghost');")
        let snapshot = try await database.directory.register(
            name: "names", LiveQueryDefinition(sql: "SELECT count(*) FROM players WHERE name = 'Ghost'"))
        #expect(snapshot.result.rows == [[.integer(0)]])
        let updated = try await database.directory.update(name: "names", sql: "SELECT count(*) FROM players")
        #expect(updated.result.rows == [[.integer(4)]])
        // The session itself sees its row.
        #expect(try await database.rows("SELECT count(*) FROM players") == [[.integer(5)]])
        _ = try await database.execute("ROLLBACK")
        try await Task.sleep(for: .milliseconds(200))
        let latest = Array(recorder.changes("names").last?.result.rows ?? updated.result.rows)
        #expect(latest == (try await database.rows("SELECT count(*) FROM players")))
        await database.close()
    }

    @Test("A COMMIT delivers the committed rows", arguments: JournalMode.allCases)
    func committedInTransaction(mode: JournalMode) async throws {
        let directory = try TemporaryDirectory()
        let database = try await LiveDatabase.open(
            .file(try await makeDatabaseFile(in: directory, mode: mode, playersSchema)), options: noSafetyPoll)
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "n", LiveQueryDefinition(sql: "SELECT count(*) FROM players"))
        _ = try await database.execute("BEGIN; INSERT INTO players(gameID, name) VALUES (1, 'New');")
        try await Task.sleep(for: .milliseconds(100))
        #expect(recorder.changes("n").isEmpty)
        _ = try await database.execute("COMMIT")
        try await recorder.waitForRows("n") { $0 == [[.integer(5)]] }
        #expect(recorder.changes("n").last?.cause == .local)
        await database.close()
    }
}

@Suite("Live queries see what the session sees", .timeLimit(.minutes(5)))
struct SessionObjectsTests {
    @Test(
        "Temp tables and views are watched; local writes refresh them; ROLLBACK corrects them",
        arguments: JournalMode.allCases)
    func tempTables(mode: JournalMode) async throws {
        let directory = try TemporaryDirectory()
        let database = try await LiveDatabase.open(
            .file(try await makeDatabaseFile(in: directory, mode: mode, playersSchema)), options: noSafetyPoll)
        let recorder = EventRecorder(database)
        _ = try await database.execute("CREATE TEMP TABLE tt(x); CREATE TEMP VIEW tv AS SELECT count(*) AS n FROM tt;")
        let table = try await database.directory.register(
            name: "tt", LiveQueryDefinition(sql: "SELECT x FROM tt ORDER BY x"))
        #expect(table.result.rows.isEmpty)
        _ = try await database.directory.register(name: "tv", LiveQueryDefinition(sql: "SELECT n FROM tv"))
        _ = try await database.execute("INSERT INTO tt VALUES (1), (2)")
        try await recorder.waitForRows("tt") { $0 == [[.integer(1)], [.integer(2)]] }
        try await recorder.waitForRows("tv") { $0 == [[.integer(2)]] }
        #expect(await database.directory.list().allSatisfy(\.readsSession))
        // Inside a transaction the session's rows may show; ROLLBACK takes them back.
        _ = try await database.execute("BEGIN; INSERT INTO tt VALUES (3);")
        _ = try await database.directory.update(name: "tt", sql: "SELECT x FROM tt ORDER BY x")
        _ = try await database.execute("ROLLBACK")
        try await recorder.waitForRows("tt") { $0 == [[.integer(1)], [.integer(2)]] }
        await database.close()
    }

    @Test("sqlite_temp_schema is refreshed by CREATE TEMP TABLE", arguments: JournalMode.allCases)
    func tempSchema(mode: JournalMode) async throws {
        let directory = try TemporaryDirectory()
        let database = try await LiveDatabase.open(
            .file(try await makeDatabaseFile(in: directory, mode: mode, playersSchema)), options: noSafetyPoll)
        let recorder = EventRecorder(database)
        let snapshot = try await database.directory.register(
            name: "temp", LiveQueryDefinition(sql: "SELECT name FROM sqlite_temp_master ORDER BY name"))
        #expect(snapshot.result.rows.isEmpty)
        _ = try await database.execute("CREATE TEMP TABLE scratch(x)")
        try await recorder.waitForRows("temp") { $0 == [[.text("scratch")]] }
        await database.close()
    }

    @Test(
        "An attached database file is watched: local writes and another process's commits",
        arguments: JournalMode.allCases)
    func attachedFile(mode: JournalMode) async throws {
        let directory = try TemporaryDirectory()
        let main = try await makeDatabaseFile(in: directory, mode: mode, playersSchema)
        let other = directory.path("other.sqlite")
        try await SQLite3CLI.run(other, "PRAGMA journal_mode=\(mode.rawValue); CREATE TABLE x(v);")
        let database = try await LiveDatabase.open(.file(main), options: noSafetyPoll)
        let recorder = EventRecorder(database)
        _ = try await database.execute("ATTACH '\(other)' AS aux")
        let snapshot = try await database.directory.register(
            name: "aux", LiveQueryDefinition(sql: "SELECT count(*) FROM aux.x"))
        #expect(snapshot.result.rows == [[.integer(0)]])
        _ = try await database.execute("INSERT INTO aux.x VALUES (1)")
        try await recorder.waitForRows("aux") { $0 == [[.integer(1)]] }
        try await SQLite3CLI.run(other, "INSERT INTO x VALUES (2);")
        try await recorder.waitForRows("aux", timeout: .seconds(15)) { $0 == [[.integer(2)]] }
        #expect(recorder.changes("aux").last?.cause == .external)
        await database.close()
    }

    @Test("A database attached in memory is watched through the session")
    func attachedMemory() async throws {
        let directory = try TemporaryDirectory()
        let database = try await LiveDatabase.open(
            .file(try await makeDatabaseFile(in: directory, mode: .wal, playersSchema)), options: noSafetyPoll)
        let recorder = EventRecorder(database)
        _ = try await database.execute("ATTACH ':memory:' AS scratch; CREATE TABLE scratch.notes(t);")
        _ = try await database.directory.register(
            name: "notes", LiveQueryDefinition(sql: "SELECT t FROM scratch.notes"))
        _ = try await database.execute("INSERT INTO scratch.notes VALUES ('hi')")
        try await recorder.waitForRows("notes") { $0 == [[.text("hi")]] }
        #expect(await database.directory.list().first?.readsSession == true)
        await database.close()
    }
}
