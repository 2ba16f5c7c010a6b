import Foundation
import SQLiveEngine
import SQLiveTestSupport
import Testing

/// The journal modes every live-query behaviour is checked against.
enum JournalMode: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case wal
    case delete

    var testDescription: String { rawValue }
}

/// Creates a database file in the journal mode, with the SQL run by the sqlite3 CLI.
func makeDatabaseFile(in directory: TemporaryDirectory, mode: JournalMode, _ sql: String) async throws -> String {
    let path = directory.path("live-\(mode.rawValue).sqlite")
    try await SQLite3CLI.run(path, "PRAGMA journal_mode=\(mode.rawValue);\n" + sql)
    return path
}

let playersSchema = """
    CREATE TABLE games(id INTEGER PRIMARY KEY, title TEXT NOT NULL);
    CREATE TABLE players(id INTEGER PRIMARY KEY, gameID INTEGER NOT NULL, name TEXT NOT NULL, score INTEGER NOT NULL DEFAULT 0);
    INSERT INTO games(title) VALUES ('Family gin rummy'), ('Weekly poker night');
    INSERT INTO players(gameID, name, score) VALUES (1, 'Blob', 20), (1, 'Blob Jr', 100), (1, 'Blob Sr', 60), (2, 'Ann', 5);
    """

extension LiveDatabase {
    /// The rows of a query, read now.
    func rows(_ sql: String) async throws -> [[SQLValue]] {
        try await execute(sql)[0].rows
    }
}

/// Waits until the condition holds (the time-out only catches hangs).
func eventually(
    _ description: String, timeout: Duration = .seconds(20), _ condition: () async -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while await !condition() {
        guard ContinuousClock.now < deadline else { throw TimedOut(description: "timed out: \(description)") }
        try await Task.sleep(for: .milliseconds(20))
    }
}
