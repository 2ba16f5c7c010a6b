import Foundation
import GRDB
import SQLiveEngine
import SQLiveLocks

/// 10,000 live queries over 1,000 tables of a WAL file, registered one by
/// one (each awaited), against GRDB `ValueObservation`s of the same queries
/// started one by one on a `DatabasePool` (each until its first value);
/// then what one commit costs with all of them live: another process's
/// commit to one table, and one of sqlive's own.
enum Registration: Scenario {
    static let name = "registration"

    static func sql(_ index: Int, tables: Int) -> String {
        "SELECT count(*), max(v) + \(index) FROM t\(index % tables)"
    }

    static func run(quick: Bool, directory: URL) async throws -> ResultTable {
        let tables = quick ? 100 : 1_000
        let queries = quick ? 1_000 : 10_000
        let schema = (0..<tables).map { "CREATE TABLE t\($0)(id INTEGER PRIMARY KEY, v);" }.joined()
        let path = try makeDatabase(directory, "registration.sqlite", schema)
        let tenth = queries / 10

        // sqlive: register one by one.
        let database = try await LiveDatabase.open(.file(path))
        let events = database.directory.events()
        let seen = Locked([String: Int]())
        let listener = Task {
            for await event in events {
                if case .changed(let change) = event { seen.withLock { $0[change.name, default: 0] += 1 } }
            }
        }
        var ours = Samples()
        let start = Monotonic.now()
        for index in 0..<queries {
            let before = Monotonic.now()
            _ = try await database.directory.register(
                name: "q\(index)", LiveQueryDefinition(sql: sql(index, tables: tables)))
            ours.append(Monotonic.now() - before)
        }
        let oursTotal = Double(Monotonic.now() - start) / 1e9

        // Another process's commit to one table (the sqlite3 shell at its defaults).
        let perTable = queries / tables
        let target = 7
        var cpuBefore = cpuSeconds()
        _ = try ChildProcess.time(["/usr/bin/sqlite3", path, "INSERT INTO t\(target)(v) VALUES (1)"])
        try await waitUntil("the queries of t\(target) saw the external commit") {
            seen.withLock { state in
                (0..<perTable).allSatisfy { state["q\(target + $0 * tables)"] == 1 }
            }
        }
        let externalCPU = (cpuSeconds() - cpuBefore) * 1000

        // One of sqlive's own commits, to another table.
        let local = 11
        cpuBefore = cpuSeconds()
        _ = try await database.execute("INSERT INTO t\(local)(v) VALUES (1)")
        try await waitUntil("the queries of t\(local) saw the local commit") {
            seen.withLock { state in
                (0..<perTable).allSatisfy { state["q\(local + $0 * tables)"] == 1 }
            }
        }
        let localCPU = (cpuSeconds() - cpuBefore) * 1000
        try await Task.sleep(for: .milliseconds(200))
        let refreshed = seen.withLock { $0.count }
        listener.cancel()
        await database.close()

        // GRDB: the same queries, as ValueObservations started one by one.
        let pool = try DatabasePool(path: path)
        var theirs = Samples()
        var cancellables: [AnyDatabaseCancellable] = []
        let queue = DispatchQueue(label: "sqlive-bench.registration")
        let anchorStart = Monotonic.now()
        for index in 0..<queries {
            let before = Monotonic.now()
            let first = DispatchSemaphore(value: 0)
            let statement = sql(index, tables: tables)
            let observation = ValueObservation.tracking { db in
                try Row.fetchOne(db, sql: statement).map { [$0[0] as Int64?, $0[1] as Int64?] }
            }
            let once = Locked(false)
            cancellables.append(
                observation.start(
                    in: pool, scheduling: .async(onQueue: queue), onError: { _ in first.signal() },
                    onChange: { _ in
                        if !once.withLock({ state in
                            defer { state = true }; return state
                        }) {
                            first.signal()
                        }
                    }))
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    first.wait()
                    continuation.resume()
                }
            }
            theirs.append(Monotonic.now() - before)
        }
        let theirsTotal = Double(Monotonic.now() - anchorStart) / 1e9
        for cancellable in cancellables { cancellable.cancel() }
        cancellables = []
        try pool.close()

        var table = ResultTable(
            scenario: name,
            note: "\(queries) live queries over \(tables) tables (WAL), registered one by one, each awaited; "
                + "the anchor starts GRDB ValueObservations of the same SQL on a DatabasePool, each until its "
                + "first value. Then one commit to one table (\(perTable) queries read it) with all of them live.")
        table.add("total registration (s)", oursTotal, anchor: theirsTotal, "GRDB ValueObservation")
        table.add(
            "first \(tenth): p50 per registration (ms)", ours.slice(0..<tenth).percentile(50),
            anchor: theirs.slice(0..<tenth).percentile(50), "GRDB ValueObservation")
        table.add(
            "last \(tenth): p50 per registration (ms)", ours.slice((queries - tenth)..<queries).percentile(50),
            anchor: theirs.slice((queries - tenth)..<queries).percentile(50), "GRDB ValueObservation")
        table.add("CPU of one external commit to one table (ms)", externalCPU)
        table.add("CPU of one own commit to one table (ms)", localCPU)
        table.checks.append(
            "both commits reached the \(perTable) queries of their table; \(refreshed) queries changed in all "
                + "(expected \(2 * perTable))")
        guard refreshed == 2 * perTable else {
            throw BenchmarkCheckFailed(description: "\(refreshed) queries changed, expected \(2 * perTable)")
        }
        return table
    }
}
