import Foundation
import GRDB
import SQLiveEngine
import SQLiveLocks

/// Live queries kept from rows (`precision: "rows"`) against the same
/// queries run again at each commit, over a 1,000,000-row table, in WAL and
/// in a DELETE journal: a `GROUP BY` aggregate and a filtered
/// `ORDER BY … LIMIT 50` (no index serves either), one registered at a
/// time. One-row UPDATEs by another connection (GRDB at its defaults, in
/// this process) that change the query's result, timed from the writer's
/// commit to the live query's change event; the anchor is one run of the
/// query by the sqlite3 shell. Also the writer's commit time (p99) with
/// the live query watching, against no watcher.
enum KeptLive: Scenario {
    static let name = "kept-live"

    static let queries: [(label: String, sql: String)] = [
        ("GROUP BY aggregate", "SELECT grp, count(*), sum(qty), avg(qty), max(qty) FROM items GROUP BY grp"),
        (
            "filtered ORDER BY … LIMIT 50",
            "SELECT id, name, price FROM items WHERE qty > 10 ORDER BY price DESC LIMIT 50"
        ),
    ]

    static func run(quick: Bool, directory: URL) async throws -> ResultTable {
        let rows = quick ? 20_000 : 1_000_000
        let updates = quick ? 5 : 30
        var table = ResultTable(
            scenario: name,
            note:
                "A live query over a \(rows)-row table `items(id, grp, qty, name, price)` (\(queries.map { "`\($0.sql)`" }.joined(separator: "; "))), "
                + "kept from rows or run again (`maintainsFromRows` off), in WAL and DELETE journal mode; \(updates) one-row UPDATEs "
                + "that change its result by another connection (GRDB at its defaults, in this process), 50 ms apart, "
                + "timed from the writer's commit to the change event. The anchor is the sqlite3 shell running the "
                + "query once; the writer's p99 commit time is compared with the same UPDATEs and no watcher.")
        // SQLIVE_BENCH_KEPT_ONLY=1: the kept WAL side alone (for a profiler).
        // SQLIVE_BENCH_KEPT_ONLY=DELETE: the kept DELETE-journal side alone.
        // SQLIVE_BENCH_KEPT_ONLY=MEMORY: the memory of a kept result of every row alone.
        let keptOnlyMode = ProcessInfo.processInfo.environment["SQLIVE_BENCH_KEPT_ONLY"]
        let keptOnly = keptOnlyMode == "1" || keptOnlyMode == "DELETE"
        let memoryOnly = keptOnlyMode == "MEMORY"
        for journalMode in keptOnlyMode == "DELETE" ? ["DELETE"] : keptOnly ? ["WAL"] : ["WAL", "DELETE"] {
            let path = try makeDatabase(
                directory, "kept-\(journalMode).sqlite",
                """
                CREATE TABLE items(id INTEGER PRIMARY KEY, grp INTEGER, qty INTEGER, name TEXT, price INTEGER);
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT \(rows))
                INSERT INTO items SELECT i, i % 100, i % 97, 'item ' || i, (i * 7919) % 1000003 FROM n;
                """, journalMode: journalMode)
            let sqlite3 = ChildProcess.executable(named: "sqlite3") ?? "/usr/bin/sqlite3"
            var next = 0
            // The writer alone, for its commit times.
            var alone = Samples()
            do {
                let writer = try DatabaseQueue(path: path)
                for _ in 0..<updates {
                    next += 1
                    let target = next * 7919 % rows + 1
                    let started = Monotonic.now()
                    try await writer.write { db in
                        try db.execute(sql: "UPDATE items SET qty = qty + 1 WHERE id = ?", arguments: [target])
                    }
                    alone.append(Monotonic.now() - started)
                    try await Task.sleep(for: .milliseconds(20))
                }
                try writer.close()
            }
            for query in memoryOnly ? [] : queries {
                var rerun = Samples()
                for _ in 0..<(quick ? 2 : 5) {
                    let (seconds, status) = try ChildProcess.time([sqlite3, path, query.sql])
                    guard status == 0 else { throw BenchmarkCheckFailed(description: "sqlite3 failed: \(query.sql)") }
                    rerun.append(Int64(seconds * 1e9))
                }
                var figures:
                    [(kept: Bool, latency: Samples, commits: Samples, cpu: Double, journals: WALPrecisionStatistics)] =
                        []
                for kept in keptOnly ? [true] : [true, false] {
                    var options = LiveDatabase.Options()
                    options.liveQueries.maintainsFromRows = kept
                    let database = try await LiveDatabase.open(.file(path), options: options)
                    let events = database.directory.events()
                    let arrivals = Locked<[Int64]>([])
                    let listener = Task {
                        for await event in events {
                            if case .changed = event { arrivals.withLock { $0.append(Monotonic.now()) } }
                        }
                    }
                    _ = try await database.directory.register(name: "q", LiveQueryDefinition(sql: query.sql))
                    let writer = try DatabaseQueue(path: path)
                    if kept {
                        // Until its base is read (the first commit may read it again in DELETE mode).
                        try await untilKept(database, writer, rows: rows, next: &next)
                    }
                    try await Task.sleep(for: .milliseconds(200))
                    var latency = Samples()
                    var commits = Samples()
                    let statisticsBefore = database.walPrecisionStatistics()
                    let cpuBefore = cpuSeconds()
                    for _ in 0..<updates {
                        next += 1
                        let target = next * 7919 % rows + 1
                        let seen = arrivals.withLock { $0.count }
                        // A new quantity (the group's sum and maximum change) and price (the row joins the top 50).
                        let sql = "UPDATE items SET qty = \(100 + next), price = \(2_000_000 + next) WHERE id = ?"
                        let started = Monotonic.now()
                        try await writer.write { db in
                            // Changes the aggregate's group, and brings the row into the top 50.
                            try db.execute(sql: sql, arguments: [target])
                        }
                        let committed = Monotonic.now()
                        commits.append(committed - started)
                        try await waitUntil("the change of row \(target)") { arrivals.withLock { $0.count > seen } }
                        latency.append(arrivals.withLock { $0[seen] } - committed)
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    let cpu = (cpuSeconds() - cpuBefore) / Double(updates) * 1e3
                    let readings = database.walPrecisionStatistics() - statisticsBefore
                    let precision = kept ? try await keptPrecision(database) : nil
                    try writer.close()
                    listener.cancel()
                    await database.close()
                    if kept, precision != .rows {
                        throw BenchmarkCheckFailed(
                            description: "\(query.label) was not kept from rows (\(String(describing: precision)))")
                    }
                    figures.append((kept, latency, commits, cpu, readings))
                }
                let label = "\(query.label), \(journalMode)"
                for figure in figures {
                    let how = figure.kept ? "kept from rows" : "run again"
                    table.add(
                        "\(label), \(how): p50 commit → change (ms)", figure.latency.percentile(50),
                        anchor: rerun.percentile(50), "sqlite3 shell running the query")
                    table.add(
                        "\(label), \(how): p99 commit → change (ms)", figure.latency.percentile(99),
                        anchor: rerun.percentile(50), "sqlite3 shell running the query")
                    table.add(
                        "\(label), \(how): writer's p99 commit (ms)", figure.commits.percentile(99),
                        anchor: alone.percentile(99), "the same UPDATEs, no watcher")
                    table.add("\(label), \(how): this process's CPU per commit (ms)", figure.cpu)
                    if journalMode == "DELETE", figure.kept {
                        // How the change feed read the commits: the journals' pages, or every page.
                        let readings = figure.journals
                        table.add(
                            "\(label), \(how): commits read from their journal's pages (%)",
                            readings.rollbackJournalReadings + readings.rollbackFullReadings == 0
                                ? 0
                                : 100 * Double(readings.rollbackJournalReadings)
                                    / Double(readings.rollbackJournalReadings + readings.rollbackFullReadings))
                    }
                }
            }
            if !memoryOnly {
                // The writer's commit times with a kept query watching and
                // with none, in alternating blocks (the machine's speed
                // drifts): enough commits for a p99.
                var watched = Samples()
                var alone = Samples()
                for _ in 0..<(quick ? 2 : 5) {
                    for watching in [false, true] {
                        var database: LiveDatabase?
                        let writer = try DatabaseQueue(path: path)
                        if watching {
                            let live = try await LiveDatabase.open(.file(path))
                            _ = try await live.directory.register(name: "q", LiveQueryDefinition(sql: queries[0].sql))
                            try await untilKept(live, writer, rows: rows, next: &next)
                            try await Task.sleep(for: .milliseconds(200))
                            database = live
                        }
                        for _ in 0..<(quick ? 10 : 40) {
                            next += 1
                            let target = next * 7919 % rows + 1
                            let sql = "UPDATE items SET qty = \(100 + next), price = \(2_000_000 + next) WHERE id = ?"
                            let started = Monotonic.now()
                            try await writer.write { db in try db.execute(sql: sql, arguments: [target]) }
                            if watching {
                                watched.append(Monotonic.now() - started)
                            } else {
                                alone.append(Monotonic.now() - started)
                            }
                            try await Task.sleep(for: .milliseconds(20))
                        }
                        try writer.close()
                        if let database {
                            let precision = try await keptPrecision(database)
                            await database.close()
                            if precision != .rows {
                                throw BenchmarkCheckFailed(description: "the watching query was not kept from rows")
                            }
                        }
                    }
                }
                table.add(
                    "\(journalMode): writer's p99 commit, a kept GROUP BY watching (\(watched.count) commits) (ms)",
                    watched.percentile(99), anchor: alone.percentile(99),
                    "the same UPDATEs, no watcher, in alternating blocks")
                table.add(
                    "\(journalMode): writer's p50 commit, a kept GROUP BY watching (ms)", watched.percentile(50),
                    anchor: alone.percentile(50), "the same UPDATEs, no watcher, in alternating blocks")
            }
            if !keptOnly {
                // The memory a kept result of every row holds, against the table on disk.
                let fileMiB =
                    Double((try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) / 1_048_576
                let before = try await settledHeapMiB()
                let database = try await LiveDatabase.open(.file(path))
                let events = database.directory.events()
                let changes = Locked(0)
                let listener = Task {
                    for await event in events {
                        if case .changed = event { changes.withLock { $0 += 1 } }
                    }
                }
                _ = try await database.directory.register(
                    name: "all", LiveQueryDefinition(sql: "SELECT id, qty FROM items", maxRows: rows + 1_000))
                let writer = try DatabaseQueue(path: path)
                try await untilKept(database, writer, rows: rows, next: &next)
                // Steady: three more commits, each delivered from the kept state.
                for _ in 0..<3 {
                    next += 1
                    let target = next * 7919 % rows + 1
                    let seen = changes.withLock { $0 }
                    try await writer.write { db in
                        try db.execute(sql: "UPDATE items SET qty = qty + 1 WHERE id = ?", arguments: [target])
                    }
                    try await waitUntil("the change") { changes.withLock { $0 > seen } }
                }
                let kept = try await settledHeapMiB() - before
                let precision = await database.directory.list().first?.precision
                try writer.close()
                listener.cancel()
                await database.close()
                if precision != .rows {
                    throw BenchmarkCheckFailed(description: "the result of every row was not kept from rows")
                }
                table.add(
                    "heap of a kept result of all \(rows) rows (MiB), \(journalMode)", kept, anchor: fileMiB,
                    "the table's file")
            }
        }
        return table
    }

    /// The database's one live query's precision once it is kept from rows
    /// again, if it reads its base again (after a removed maximum, or the
    /// last commit), 10 s at most.
    private static func keptPrecision(_ database: LiveDatabase) async throws -> ExternalPrecision? {
        var precision = await database.directory.list().first?.precision
        for _ in 0..<100 where precision != .rows {
            try await Task.sleep(for: .milliseconds(100))
            precision = await database.directory.list().first?.precision
        }
        return precision
    }

    /// The heap in use once it has stopped moving (what a database closed
    /// just before still frees, or a delivery still builds, is let settle):
    /// three readings 100 ms apart within 0.5 MiB.
    private static func settledHeapMiB() async throws -> Double {
        var readings = [heapMiB()]
        for _ in 0..<50 {
            try await Task.sleep(for: .milliseconds(100))
            readings.append(heapMiB())
            let last = readings.suffix(3)
            if last.count == 3, last.max()! - last.min()! < 0.5 { return readings.last! }
        }
        return readings.last!
    }

    /// One-row UPDATEs until the database's one live query is kept from rows.
    private static func untilKept(_ database: LiveDatabase, _ writer: DatabaseQueue, rows: Int, next: inout Int)
        async throws
    {
        var counter = next
        defer { next = counter }
        try await waitUntil("the query kept from rows") {
            counter += 1
            let target = counter * 7919 % rows + 1
            try await writer.write { db in
                try db.execute(sql: "UPDATE items SET qty = qty + 1 WHERE id = ?", arguments: [target])
            }
            try await Task.sleep(for: .milliseconds(300))
            return await database.directory.list().first?.precision == .rows
        }
    }
}
