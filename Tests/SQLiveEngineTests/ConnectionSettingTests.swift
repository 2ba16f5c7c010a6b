import Foundation
import SQLiveTestSupport
import Testing

@testable import SQLiveEngine

/// Statements that would change a shared connection are never prepared on
/// one (issue #39): many PRAGMAs act as SQLite prepares them.
@Suite("Connection settings stay sqlive's", .timeLimit(.minutes(3)))
struct ConnectionSettingTests {
    @Test("Which PRAGMAs may change a connection, read from the text")
    func settingPragmas() {
        #expect(ConnectionSetting.settingPragma(in: "PRAGMA locking_mode=EXCLUSIVE;") == "locking_mode")
        #expect(ConnectionSetting.settingPragma(in: "-- c\n pragma main.cache_size = 10") == "cache_size")
        #expect(ConnectionSetting.settingPragma(in: "EXPLAIN QUERY PLAN PRAGMA query_only(1)") == "query_only")
        #expect(ConnectionSetting.settingPragma(in: "PRAGMA soft_heap_limit=1000") == "soft_heap_limit")
        #expect(ConnectionSetting.settingPragma(in: "PRAGMA temp_store = MEMORY") == "temp_store")
        #expect(ConnectionSetting.settingPragma(in: "PRAGMA journal_mode=DELETE") == "journal_mode")
        #expect(ConnectionSetting.settingPragma(in: "PRAGMA optimize") == "optimize")
        // Reads.
        #expect(ConnectionSetting.settingPragma(in: "PRAGMA cache_size") == nil)
        #expect(ConnectionSetting.settingPragma(in: "PRAGMA table_info(t)") == nil)
        #expect(ConnectionSetting.settingPragma(in: "SELECT * FROM pragma_table_info('t')") == nil)
        #expect(ConnectionSetting.settingPragma(in: "SELECT 'PRAGMA cache_size=1'") == nil)
    }

    @Test(
        "A document's PRAGMA locking_mode=EXCLUSIVE leaves the checker seeing other writers' tables",
        arguments: JournalMode.allCases)
    func checker(mode: JournalMode) async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(in: directory, mode: mode, "CREATE TABLE t(a);")
        let checker = try SQLChecker(.file(path))
        let document = SQLSource("PRAGMA locking_mode=EXCLUSIVE;\nPRAGMA cache_size = 5;\nSELECT * FROM newt;")
        let before = checker.check(document)
        #expect(before.map(\.severity) == [.information, .information, .error])
        #expect(before.first?.message.hasPrefix("PRAGMA locking_mode may change the connection") ?? false)
        #expect(before.last?.message == "no such table: newt")
        // Another process, at its defaults, is not held back either.
        try await SQLite3CLI.run(path, "CREATE TABLE newt(b); INSERT INTO t VALUES (1);", defaultTimeout: false)
        #expect(checker.check(document).map(\.severity) == [.information, .information])
        #expect(checker.columnNames(of: "SELECT * FROM newt") == ["b"])
    }

    @Test("A live query or an explanation that would set a PRAGMA is refused, and the session keeps its locks")
    func liveQueries() async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(in: directory, mode: .delete, "CREATE TABLE t(a);")
        let database = try await LiveDatabase.open(.file(path))
        let recorder = EventRecorder(database)
        let refused = await #expect(throws: SQLiveError.self) {
            try await database.directory.register(name: "x", LiveQueryDefinition(sql: "PRAGMA locking_mode=EXCLUSIVE"))
        }
        #expect(refused?.description.hasPrefix("a live query must only read: PRAGMA locking_mode may change") ?? false)
        await #expect(throws: SQLiveError.self) {
            try await database.explain("PRAGMA locking_mode=EXCLUSIVE")
        }
        _ = try await database.directory.register(name: "columns", LiveQueryDefinition(sql: "PRAGMA table_info(t)"))
        _ = try await database.directory.register(name: "count", LiveQueryDefinition(sql: "SELECT count(*) FROM t"))
        _ = try await database.execute("SELECT count(*) FROM t")
        // The session's connection took no exclusive lock: a writer without
        // a busy timeout commits.
        try await SQLite3CLI.run(path, "INSERT INTO t VALUES (1);", defaultTimeout: false)
        try await recorder.waitForRows("count") { $0 == [[.integer(1)]] }
        await database.close()
    }
}
