import Foundation
import GRDB
import SQLiveEngine

/// A benchmark scenario: it measures sqlive and its anchor in the same run.
protocol Scenario {
    static var name: String { get }
    static func run(quick: Bool, directory: URL) async throws -> ResultTable
}

/// Creates a database file with the given schema, in WAL mode unless told
/// otherwise (`DELETE`: a rollback-journal file).
func makeDatabase(_ directory: URL, _ name: String, _ sql: String, journalMode: String = "WAL") throws -> String {
    let path = directory.appendingPathComponent(name).path
    let queue = try DatabaseQueue(path: path)
    try queue.writeWithoutTransaction { db in
        try db.execute(sql: "PRAGMA journal_mode = \(journalMode)")
        try db.execute(sql: sql)
    }
    try queue.close()
    return path
}

/// Waits for a condition, failing after a time-out that only catches hangs.
func waitUntil(timeout: Duration = .seconds(120), _ what: String, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw BenchmarkCheckFailed(description: "timed out: \(what)") }
        try await Task.sleep(for: .microseconds(200))
    }
}
