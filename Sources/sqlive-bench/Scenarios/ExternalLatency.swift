import Foundation
import GRDB
import SQLiveEngine
import Synchronization

/// Another process commits single-row inserts at a steady rate; the time
/// from each commit to sqlive's delivered update, against polling
/// re-execution at 100 ms and at 1 s (what `\watch` users do), all in the
/// same run on the same commits.
enum ExternalLatency: Scenario {
    static let name = "external-latency"
    static let query = "SELECT id, committedAt FROM events ORDER BY id DESC LIMIT 500"

    static func run(quick: Bool, directory: URL) async throws -> ResultTable {
        let count = quick ? 40 : 600
        let path = try makeDatabase(
            directory, "external.sqlite", "CREATE TABLE events(id INTEGER PRIMARY KEY, committedAt INTEGER)")
        let database = try await LiveDatabase.open(.file(path))
        let sqlive = Locked((samples: Samples(), seen: Int64(0)))
        let events = database.liveQueryEvents()
        _ = try await database.registerLiveQuery(name: "latest", LiveQueryDefinition(sql: query))
        let listener = Task {
            for await event in events {
                guard case .changed(let change) = event else { continue }
                let now = Monotonic.now()
                sqlive.withLock { state in
                    for row in change.result.rows {
                        guard case .integer(let id) = row[0], case .integer(let at) = row[1], id > state.seen else {
                            continue
                        }
                        state.samples.append(now - at)
                    }
                    if case .integer(let top)? = change.result.rows.first?[0] {
                        state.seen = Swift.max(state.seen, top)
                    }
                }
            }
        }
        let pollers = [Poller(path: path, interval: .milliseconds(100)), Poller(path: path, interval: .seconds(1))]
        let pollTasks = try pollers.map { poller in try poller.start() }

        let (writer, _) = try ChildProcess.startWriter(path: path, count: count, intervalMicroseconds: 20_000)
        writer.waitUntilExit()
        try await waitUntil("every observer saw the last commit") {
            sqlive.withLock { $0.seen } == Int64(count) && pollers.allSatisfy { $0.seen == Int64(count) }
        }
        listener.cancel()
        pollTasks.forEach { $0.cancel() }
        await database.close()

        let ours = sqlive.withLock { $0.samples }
        guard ours.count == count else {
            throw BenchmarkCheckFailed(description: "sqlive saw \(ours.count) of \(count) commits")
        }
        var table = ResultTable(
            scenario: name,
            note:
                "\(count) single-row commits by another process, one every 20 ms; latency in ms from commit to delivery."
        )
        for (label, p) in [("p50", 50.0), ("p95", 95.0), ("p99", 99.0)] {
            table.add(
                "\(label) latency (ms)", ours.percentile(p), anchor: pollers[0].samples.percentile(p), "poll 100 ms")
        }
        table.add("max latency (ms)", ours.max, anchor: pollers[0].samples.max, "poll 100 ms")
        for (label, p) in [("p50", 50.0), ("p95", 95.0), ("p99", 99.0)] {
            table.add("\(label) latency (ms)", ours.percentile(p), anchor: pollers[1].samples.percentile(p), "poll 1 s")
        }
        table.add("max latency (ms)", ours.max, anchor: pollers[1].samples.max, "poll 1 s")
        table.checks.append("every commit was delivered (\(count) of \(count))")
        return table
    }

    /// Re-runs the query at a fixed interval on its own connection, as `\watch` does.
    final class Poller: Sendable {
        let path: String
        let interval: Duration
        private let state = Locked((samples: Samples(), seen: Int64(0)))

        init(path: String, interval: Duration) {
            self.path = path
            self.interval = interval
        }

        var samples: Samples { state.withLock { $0.samples } }
        var seen: Int64 { state.withLock { $0.seen } }

        func start() throws -> Task<Void, Never> {
            var configuration = Configuration()
            configuration.readonly = true
            let pool = try DatabasePool(path: path, configuration: configuration)
            return Task {
                while !Task.isCancelled {
                    if let rows = try? await pool.read({ db in
                        try Row.fetchAll(db, sql: ExternalLatency.query).map { ($0[0] as Int64, $0[1] as Int64) }
                    }) {
                        let now = Monotonic.now()
                        state.withLock { state in
                            for (id, at) in rows where id > state.seen {
                                state.samples.append(now - at)
                            }
                            if let top = rows.first?.0 { state.seen = Swift.max(state.seen, top) }
                        }
                    }
                    try? await Task.sleep(for: interval)
                }
            }
        }
    }
}
