import Foundation
import SQLiveEngine
import SQLiveREPL
import Testing

@Suite("Demo database", .timeLimit(.minutes(2)))
struct DemoTests {
    func count(_ sql: String, in database: LiveDatabase) async throws -> Int64 {
        let results = try await database.execute(sql)
        guard case .integer(let value) = results.first?.rows.first?.first else { return -1 }
        return value
    }

    @Test func seedFollowsTheTour() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("demo.sqlite")
        try DemoDatabase.create(atPath: path)
        let database = try await LiveDatabase.open(.file(path))
        #expect(database.info.journalMode == "wal")
        #expect(try await count("SELECT count(*) FROM games", in: database) == 3)
        let firstGame = try await database.execute(
            "SELECT name, score FROM players WHERE gameID = 1 ORDER BY name")
        #expect(
            firstGame.first?.rows == [
                [.text("Blob"), .integer(20)], [.text("Blob Jr"), .integer(100)], [.text("Blob Sr"), .integer(60)],
            ])
        let board = try await database.directory.register(name: "leaderboard", DemoDatabase.leaderboard)
        #expect(board.result.columns == ["game", "players", "points", "best"])
        // The counts differ, so the order is clear.
        #expect(board.result.rows.map { $0[1] } == [.integer(4), .integer(3), .integer(2)])
        let players = try await database.execute(
            DemoDatabase.players(ofGame: 1).sql, parameters: DemoDatabase.players(ofGame: 1).parameters)
        #expect(players.first?.rows.first == [.text("Blob Jr"), .integer(100)])
        await database.close()
    }

    @Test func writerChangesScoresAndPlayers() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("demo.sqlite")
        try DemoDatabase.create(atPath: path)
        let database = try await LiveDatabase.open(.file(path))
        let before = try await database.execute("SELECT id, score FROM players ORDER BY id").first?.rows
        let writer = try DemoWriter(path: path)
        for _ in 0..<14 { await writer.tick() }
        let after = try await database.execute("SELECT id, score FROM players ORDER BY id").first?.rows
        #expect(before != after)
        let players = try await count("SELECT count(*) FROM players", in: database)
        #expect((7...11).contains(players), "two ticks of fourteen add or remove a player")
        await database.close()
    }
}
