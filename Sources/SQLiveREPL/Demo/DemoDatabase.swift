import Foundation
import GRDB
import SQLiveEngine

/// The demo database of `--demo`: games and players, as in Point-Free's
/// tour of SQLiteData.
///
/// ```swift
/// try DemoDatabase.create(atPath: "/tmp/demo.sqlite")
/// let database = try await LiveDatabase.open(.file("/tmp/demo.sqlite"))
/// _ = try await database.directory.register(name: "leaderboard", DemoDatabase.leaderboard)
/// ```
public enum DemoDatabase {
    /// The schema, from `demo.md`.
    public static let schema = """
        CREATE TABLE games(id INTEGER PRIMARY KEY, title TEXT NOT NULL);
        CREATE TABLE players(
          id INTEGER PRIMARY KEY,
          gameID INTEGER NOT NULL REFERENCES games(id) ON DELETE CASCADE,
          name TEXT NOT NULL,
          score INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX players_gameID ON players(gameID);
        """

    /// The seed rows: three games, and players so that each game has a different count.
    public static let seed = """
        INSERT INTO games(id, title) VALUES
          (1, 'Family gin rummy'), (2, 'Weekly poker night'), (3, 'Mahjong with grandma');
        INSERT INTO players(gameID, name, score) VALUES
          (1, 'Blob', 20), (1, 'Blob Jr', 100), (1, 'Blob Sr', 60),
          (2, 'Blob Esq', 45), (2, 'Blob III', 80), (2, 'Blobbo', 15), (2, 'Blobette', 70),
          (3, 'Grandma Blob', 90), (3, 'Blob Jr', 35);
        """

    /// Every game with its number of players, their points and the best
    /// score, most players first: one aggregate query rather than a query
    /// per game.
    public static let leaderboard = LiveQueryDefinition(
        sql: """
            SELECT games.title AS game, count(players.id) AS players, \
            coalesce(sum(players.score), 0) AS points, max(players.score) AS best \
            FROM games LEFT JOIN players ON players.gameID = games.id \
            GROUP BY games.id ORDER BY players DESC, games.title
            """)

    /// The players of one game, best score first: the per-screen list.
    public static func players(ofGame gameID: Int64) -> LiveQueryDefinition {
        LiveQueryDefinition(
            sql: "SELECT name, score FROM players WHERE gameID = ? ORDER BY score DESC, name",
            parameters: .positional([.integer(gameID)]))
    }

    /// Creates the demo database at a path (in WAL mode, so that the demo
    /// writer never blocks readers), replacing any file there.
    public static func create(atPath path: String) throws {
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.removeItem(atPath: path + suffix)
        }
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.inTransaction {
                try db.execute(sql: schema)
                try db.execute(sql: seed)
                return .commit
            }
        }
        try queue.close()
    }
}
