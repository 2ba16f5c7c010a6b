import Foundation
import GRDB
import SQLiveEngine
import SQLiveLocks

/// Commits made through sqlive's engine; sqlive's update latency against
/// GRDB's `ValueObservation` observing the same query on the same database
/// connection, in the same process and the same run.
enum LocalLatency: Scenario {
    static let name = "local-latency"
    static let query = "SELECT count(*), max(v) FROM t"

    static func run(quick: Bool, directory: URL) async throws -> ResultTable {
        let count = quick ? 30 : 500
        let path = try makeDatabase(directory, "local.sqlite", "CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER)")
        // No coalescing window: each commit is alone, as in the anchor.
        let database = try await LiveDatabase.open(.file(path))
        let arrivals = Locked((sqlive: [Int64: Int64](), grdb: [Int64: Int64]()))
        let events = database.liveQueryEvents()
        _ = try await database.registerLiveQuery(name: "q", LiveQueryDefinition(sql: query))
        let listener = Task {
            for await event in events {
                guard case .changed(let change) = event, case .integer(let v) = change.result.rows[0][1] else {
                    continue
                }
                let now = Monotonic.now()
                arrivals.withLock { $0.sqlive[v] = now }
            }
        }
        let observation = ValueObservation.tracking { db in
            try Row.fetchOne(db, sql: query).flatMap { $0[1] as Int64? }
        }
        let writer = database.writer
        let anchor = Task {
            do {
                for try await value in observation.values(in: writer) {
                    let now = Monotonic.now()
                    if let v = value { arrivals.withLock { $0.grdb[v] = now } }
                }
            } catch {}
        }
        try await Task.sleep(for: .milliseconds(100))
        var ours = Samples()
        var theirs = Samples()
        for value in 1...Int64(count) {
            let start = Monotonic.now()
            _ = try await database.execute("INSERT INTO t(v) VALUES (?)", parameters: .positional([.integer(value)]))
            try await waitUntil("both observers saw \(value)") {
                arrivals.withLock { $0.sqlive[value] != nil && $0.grdb[value] != nil }
            }
            let (a, b) = arrivals.withLock { ($0.sqlive[value]!, $0.grdb[value]!) }
            ours.append(a - start)
            theirs.append(b - start)
            // Apart by more than the coalescing window: each commit is a leading edge.
            try await Task.sleep(for: .milliseconds(25))
        }
        listener.cancel()
        anchor.cancel()
        await database.close()
        var table = ResultTable(
            scenario: name,
            note:
                "\(count) single-row commits through sqlive; latency in ms from the start of the write to the delivered update."
        )
        for (label, p) in [("p50", 50.0), ("p95", 95.0), ("p99", 99.0)] {
            table.add(
                "\(label) latency (ms)", ours.percentile(p), anchor: theirs.percentile(p), "GRDB ValueObservation")
        }
        table.add("max latency (ms)", ours.max, anchor: theirs.max, "GRDB ValueObservation")
        table.checks.append("both saw all \(count) values")
        return table
    }
}
