import Foundation
import GRDB
import SQLiveEngine
import SQLiveLocks

/// The demo's second connection: it keeps writing to the demo database so
/// that live queries have something to show.
///
/// About once a second it changes a player's score; now and then it adds a
/// player to a game, or removes one. It writes through its own GRDB
/// connection, exactly as another app would, so sqlive sees its commits as
/// external changes.
///
/// ```swift
/// let writer = try DemoWriter(path: "/tmp/demo.sqlite")
/// writer.start()
/// // ...
/// writer.stop()
/// ```
public final class DemoWriter: Sendable {
    private static let names = [
        "Blob", "Blobby", "Blobina", "Blobert", "Blobson", "Blobfish", "Blobathan", "Bloberta", "Globby", "Blip",
    ]

    private let queue: DatabaseQueue
    private let interval: Duration
    // Mutable State: guarded by the mutex; `start` and `stop` may be called from any thread.
    private struct State {
        var task: Task<Void, Never>?
        var ticks = 0
    }
    private let state = Locked(State())

    /// Opens the writer's connection.
    ///
    /// - parameter interval: The time between two writes (about one second in the demo).
    public init(path: String, interval: Duration = .seconds(1)) throws {
        var configuration = Configuration()
        configuration.label = "sqlive.demo-writer"
        configuration.busyMode = .timeout(5)
        queue = try DatabaseQueue(path: path, configuration: configuration)
        self.interval = interval
    }

    /// Starts writing, once per interval, until `stop()`.
    public func start() {
        let task = Task { [weak self, interval] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled, let self else { return }
                await self.tick()
            }
        }
        let previous = state.withLock { state in
            defer { state.task = task }
            return state.task
        }
        previous?.cancel()
    }

    /// Stops writing.
    public func stop() {
        let task = state.withLock { state in
            defer { state.task = nil }
            return state.task
        }
        task?.cancel()
    }

    /// Makes one change: usually a score, every seventh time a player comes or goes.
    public func tick() async {
        let ticks = state.withLock { state in
            state.ticks += 1
            return state.ticks
        }
        do {
            try await queue.write { db in
                if ticks % 7 == 0 {
                    let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM players") ?? 0
                    if count > 12 || (count > 6 && Bool.random()) {
                        try db.execute(
                            sql: "DELETE FROM players WHERE id = (SELECT id FROM players ORDER BY random() LIMIT 1)")
                    } else {
                        try db.execute(
                            sql: """
                                INSERT INTO players(gameID, name, score)
                                VALUES ((SELECT id FROM games ORDER BY random() LIMIT 1), ?, ?)
                                """,
                            arguments: [Self.names.randomElement()!, Int.random(in: 0...50)])
                    }
                } else {
                    try db.execute(
                        sql: """
                            UPDATE players SET score = max(0, score + ?)
                            WHERE id = (SELECT id FROM players ORDER BY random() LIMIT 1)
                            """,
                        arguments: [Int.random(in: -10...25)])
                }
            }
        } catch {
            FileHandle.standardError.write(Data("sqlive[demo]: \(error)\n".utf8))
        }
    }

    deinit {
        state.withLock { $0.task }?.cancel()
    }
}
