import Foundation
import GRDB
import SQLiveEngine
import SQLiveLocks

/// Commits made through sqlive's engine; sqlive's update latency against
/// GRDB's `ValueObservation` observing the same query on the same database
/// connection, in the same process and the same run.
///
/// Each observer is measured alone, in alternating blocks of commits: both
/// observe on the session's writer, where each one's work after a commit
/// delays the other's. In GRDB's blocks a sqlive live query of another
/// table stays registered, so the statements run through GRDB, as they do
/// in a GRDB app (sqlive runs them on SQLite directly when nothing is live).
///
/// `SQLIVE_BENCH_READ_AT_COMMIT=off` measures sqlive with every refresh
/// read on the live queries' own connection (`readAtCommitLimit: nil`).
enum LocalLatency: Scenario {
    static let name = "local-latency"
    static let query = "SELECT count(*), max(v) FROM t"

    static func run(quick: Bool, directory: URL) async throws -> ResultTable {
        let blocks = quick ? 2 : 10
        let perBlock = quick ? 15 : 50
        let path = try makeDatabase(
            directory, "local.sqlite",
            "CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER); CREATE TABLE u(id INTEGER PRIMARY KEY)")
        let readsAtCommit = ProcessInfo.processInfo.environment["SQLIVE_BENCH_READ_AT_COMMIT"] != "off"
        var live = LiveQueryOptions()
        if !readsAtCommit { live.readAtCommitLimit = nil }
        let database = try await LiveDatabase.open(.file(path), options: .init(liveQueries: live))
        let arrivals = Locked([Int64: Int64]())
        let other = try await database.watch(name: "other", LiveQueryDefinition(sql: "SELECT count(*) FROM u"))
        var ours = Samples()
        var theirs = Samples()
        var value: Int64 = 0
        var refreshes = 0
        for block in 0..<(2 * blocks) {
            let grdbBlock = block % 2 == 1
            let observer: Task<Void, Never>
            if grdbBlock {
                let observation = ValueObservation.tracking { db in
                    try Row.fetchOne(db, sql: query).flatMap { $0[1] as Int64? }
                }
                let writer = database.writer
                observer = Task {
                    do {
                        for try await seen in observation.values(in: writer) {
                            let now = Monotonic.now()
                            if let seen { arrivals.withLock { $0[seen] = now } }
                        }
                    } catch {}
                }
            } else {
                let handle = try await database.watch(name: "q", LiveQueryDefinition(sql: query))
                observer = Task {
                    for await event in handle.events {
                        guard case .changed(let change) = event, case .integer(let seen) = change.result.rows[0][1]
                        else { continue }
                        let now = Monotonic.now()
                        arrivals.withLock { $0[seen] = now }
                    }
                    await handle.cancel()
                }
            }
            try await Task.sleep(for: .milliseconds(100))
            for _ in 0..<perBlock {
                value += 1
                let start = Monotonic.now()
                _ = try await database.execute(
                    "INSERT INTO t(v) VALUES (?)", parameters: .positional([.integer(value)]))
                try await waitUntil("the observer saw \(value)") { arrivals.withLock { $0[value] != nil } }
                let latency = arrivals.withLock { $0[value]! } - start
                if grdbBlock { theirs.append(latency) } else { ours.append(latency) }
                // Apart by more than the coalescing window: each commit is a leading edge.
                try await Task.sleep(for: .milliseconds(25))
            }
            if !grdbBlock {
                refreshes += await database.directory.list().first { $0.name == "q" }?.refreshes ?? 0
            }
            observer.cancel()
            if !grdbBlock {
                // The handle goes with its task: wait until the query is gone.
                try await waitUntil("q unregistered") { await !database.directory.list().contains { $0.name == "q" } }
            }
        }
        await other.cancel()
        let prefetched = database.prefetchedRefreshCount
        await database.close()
        var table = ResultTable(
            scenario: name,
            note:
                "\(ours.count) single-row commits through sqlive for each observer, alone in alternating blocks of \(perBlock); latency in ms from the start of the write to the delivered update\(readsAtCommit ? "" : "; sqlive reading every refresh on its own connection (SQLIVE_BENCH_READ_AT_COMMIT=off)")."
        )
        for (label, p) in [("p50", 50.0), ("p95", 95.0), ("p99", 99.0)] {
            table.add(
                "\(label) latency (ms)", ours.percentile(p), anchor: theirs.percentile(p), "GRDB ValueObservation")
        }
        table.add("max latency (ms)", ours.max, anchor: theirs.max, "GRDB ValueObservation")
        table.checks.append("each observer saw all its \(ours.count) values")
        table.checks.append(
            "sqlive refreshed its query \(refreshes) times for \(ours.count) commits (read at commit: \(prefetched))")
        return table
    }
}
