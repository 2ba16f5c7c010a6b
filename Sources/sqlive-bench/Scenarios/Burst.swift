import Foundation
import GRDB
import SQLiveEngine
import SQLiveLocks

/// Another process commits single-row inserts as fast as it can, with 100
/// live queries registered. Anchor: a 100 ms poller re-running the same
/// 100 queries, in the same run.
enum Burst: Scenario {
    static let name = "burst"

    static func run(quick: Bool, directory: URL) async throws -> ResultTable {
        let commits = quick ? 1_000 : 10_000
        let queries = 100
        let path = try makeDatabase(
            directory, "burst.sqlite", "CREATE TABLE events(id INTEGER PRIMARY KEY, committedAt INTEGER)")
        let database = try await LiveDatabase.open(.file(path))
        let definitions = (0..<queries).map { LiveQueryDefinition(sql: "SELECT count(*) + \($0) FROM events") }
        let state = Locked((notifications: 0, lastArrival: Int64(0), finals: Set<String>()))
        let events = database.directory.events()
        for (index, definition) in definitions.enumerated() {
            _ = try await database.directory.register(name: "q\(index)", definition)
        }
        let listener = Task {
            for await event in events {
                guard case .changed(let change) = event else { continue }
                let now = Monotonic.now()
                let index = Int(change.name.dropFirst())!
                state.withLock { state in
                    state.notifications += 1
                    state.lastArrival = now
                    if change.result.rows == [[.integer(Int64(commits + index))]] { state.finals.insert(change.name) }
                }
            }
        }
        // The anchor: a poller that re-runs all 100 queries every 100 ms.
        var configuration = Configuration()
        configuration.readonly = true
        let pool = try DatabasePool(path: path, configuration: configuration)
        let pollState = Locked((refreshes: 0, doneAt: Int64(0)))
        let poller = Task {
            while !Task.isCancelled {
                let values = try? await pool.read { db in
                    try definitions.map { try Int64.fetchOne(db, sql: $0.sql) ?? 0 }
                }
                let now = Monotonic.now()
                pollState.withLock { state in
                    state.refreshes += 1
                    if state.doneAt == 0, values?.first == Int64(commits) { state.doneAt = now }
                }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        let cpuBefore = cpuSeconds()
        // synchronous = NORMAL, as this scenario has always run: it measures coalescing, not durability.
        let made = try await onOwnThread {
            let (writer, output) = try ChildProcess.startWriter(
                path: path, count: commits, intervalMicroseconds: 0, pragmas: ["synchronous = NORMAL"])
            return try ChildProcess.commits(of: writer, output: output)
        }
        let lastCommit = made.last?.returned ?? 0
        try await waitUntil("every live query reached the final count") {
            state.withLock { $0.finals.count } == queries
        }
        try await waitUntil("the poller saw the final count") { pollState.withLock { $0.doneAt } != 0 }
        try await Task.sleep(for: .milliseconds(200))
        let cpu = cpuSeconds() - cpuBefore
        listener.cancel()
        poller.cancel()
        let info = await database.directory.list()
        // The final results, read now, must equal the last delivered ones.
        for (index, definition) in definitions.enumerated() {
            let rows = try await database.execute(definition.sql)[0].rows
            guard rows == [[.integer(Int64(commits + index))]] else {
                throw BenchmarkCheckFailed(description: "q\(index) final result \(rows) is wrong")
            }
        }
        await database.close()
        let (notifications, lastArrival) = state.withLock { ($0.notifications, $0.lastArrival) }
        let (pollRefreshes, pollDone) = pollState.withLock { ($0.refreshes, $0.doneAt) }
        let refreshesPerQuery = Double(info.map(\.refreshes).reduce(0, +)) / Double(queries)
        var table = ResultTable(
            scenario: name,
            note:
                "\(commits) single-row commits by another process (GRDB, synchronous=NORMAL) as fast as it can, "
                + "\(queries) live queries registered; times from the last commit's return."
        )
        table.add("refreshes per query", refreshesPerQuery, anchor: Double(pollRefreshes), "poll 100 ms")
        table.add("refreshes per query", refreshesPerQuery, anchor: Double(commits), "refresh per commit")
        table.add(
            "notifications sent", Double(notifications), anchor: Double(pollRefreshes * queries),
            "poll 100 ms (re-prints)")
        table.add(
            "last commit → last update (ms)", Double(lastArrival - lastCommit) / 1e6,
            anchor: Double(pollDone - lastCommit) / 1e6, "poll 100 ms")
        table.add("CPU seconds (sqlive and poller in one process)", cpu)
        table.checks.append("all \(queries) final results equal the final table")
        return table
    }
}
