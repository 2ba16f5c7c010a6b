import Foundation
import SQLiveTestSupport
import Testing

@testable import SQLiveEngine

@Suite("Live queries under mixed writers", .timeLimit(.minutes(5)))
struct LiveQueryStressTests {
    @Test(
        "Random local and external writes: final results right, versions strictly increasing",
        arguments: (1...12).map { (($0 % 2 == 0 ? JournalMode.wal : .delete), UInt64($0)) })
    func randomized(mode: JournalMode, seed: UInt64) async throws {
        var random = SeededRandom(seed: seed)
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(
            in: directory, mode: mode,
            "CREATE TABLE a(id INTEGER PRIMARY KEY, v); CREATE TABLE b(id INTEGER PRIMARY KEY, v);")
        let window = Duration.milliseconds(Int.random(in: 0...30, using: &random))
        let database = try await LiveDatabase.open(
            .file(path), options: .init(liveQueries: LiveQueryOptions(coalescingWindow: window)))
        let recorder = EventRecorder(database)
        let queries = [
            "sa": "SELECT count(*), total(v) FROM a",
            "sb": "SELECT count(*), total(v) FROM b",
            "j": "SELECT (SELECT count(*) FROM a), (SELECT max(v) FROM b)",
            "rows": "SELECT id, v FROM a ORDER BY id DESC LIMIT 3",
        ]
        var initial: [String: [[SQLValue]]] = [:]
        for (name, sql) in queries {
            initial[name] = try await database.directory.register(name: name, LiveQueryDefinition(sql: sql)).result.rows
                .map { $0 }
        }
        for _ in 0..<Int.random(in: 20...40, using: &random) {
            let table = Bool.random(using: &random) ? "a" : "b"
            let value = Int.random(in: 1...1000, using: &random)
            let statement =
                switch Int.random(in: 0..<4, using: &random) {
                case 0: "DELETE FROM \(table) WHERE id IN (SELECT id FROM \(table) ORDER BY random() LIMIT 1);"
                case 1: "UPDATE \(table) SET v = v + \(value);"
                default: "INSERT INTO \(table)(v) VALUES (\(value));"
                }
            if Bool.random(using: &random) {
                _ = try await database.execute(statement)
            } else {
                try await SQLite3CLI.run(path, statement)
            }
            let pause = Int.random(in: 0...20, using: &random)
            if pause > 10 { try await Task.sleep(for: .milliseconds(pause)) }
        }
        // The final state, read now, must be every query's latest delivery.
        var expected: [String: [[SQLValue]]] = [:]
        for (name, sql) in queries {
            expected[name] = try await database.rows(sql)
        }
        try await recorder.wait("final results") { _ in
            queries.keys.allSatisfy { name in
                (recorder.changes(name).last.map { Array($0.result.rows) } ?? initial[name]) == expected[name]
            }
        }
        for name in queries.keys {
            let versions = recorder.changes(name).map(\.version)
            #expect(versions == Array(2..<(2 + versions.count)), "\(name): \(versions)")
        }
        #expect(recorder.all.allSatisfy { if case .failed = $0 { false } else { true } })
        await database.close()
    }

    @Test("Checkpoints and VACUUM by another process send no change; the results stay right")
    func checkpointAndVacuum() async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(in: directory, mode: .wal, playersSchema)
        let database = try await LiveDatabase.open(.file(path))
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "n", LiveQueryDefinition(sql: "SELECT count(*) FROM players"))
        try await SQLite3CLI.run(path, "PRAGMA wal_checkpoint(TRUNCATE);")
        try await SQLite3CLI.run(path, "VACUUM;")
        try await Task.sleep(for: .milliseconds(300))
        #expect(recorder.changes("n").isEmpty)
        try await SQLite3CLI.run(path, "INSERT INTO players(gameID, name) VALUES (1, 'After');")
        try await recorder.waitForRows("n") { $0 == [[.integer(5)]] }
        await database.close()
    }
}
