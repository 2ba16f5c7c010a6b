import Foundation
import SQLiveEngine
import SQLiveLocks

/// 1,000 live queries over 100 tables; another process (the sqlite3
/// shell, at its defaults) writes one table. With WAL precision only the
/// 10 queries reading it refresh; without (what every external commit
/// did before) all 1,000 do. In a rollback journal (DELETE), the queries
/// whose pages the commit left byte for byte the same are not read again.
enum ExternalFanOut: Scenario {
    static let name = "external-fan-out"

    struct Run {
        var refreshesPerCommit: Double
        var latency: Samples
        var statistics: WALPrecisionStatistics
        /// The same, over bulk commits (hundreds of frames each).
        var bulk: WALPrecisionStatistics
        var commits: Int
        /// This process's CPU per single-row commit (ms): watcher, scheduler, refreshes.
        var cpuPerCommit: Double = 0
    }

    static func run(quick: Bool, directory: URL) async throws -> ResultTable {
        // SQLIVE_BENCH_FANOUT_ONLY=WAL or DELETE: 10,000 queries over 1,000
        // tables in that mode alone, 200 commits (for a profiler).
        if let only = ProcessInfo.processInfo.environment["SQLIVE_BENCH_FANOUT_ONLY"] {
            let run = try await measure(directory, walPrecision: true, commits: 200, journalMode: only, tables: 1000)
            var table = ResultTable(scenario: name, note: "10,000 queries over 1,000 tables, \(only) alone.")
            table.add("refreshes per external commit", run.refreshesPerCommit)
            table.add("CPU per external commit (ms)", run.cpuPerCommit)
            table.add("p50 latency, commit sent → last of 10 updates (ms)", run.latency.percentile(50))
            return table
        }
        let commits = quick ? 10 : 200
        let precise = try await measure(directory, walPrecision: true, commits: commits)
        let everything = try await measure(directory, walPrecision: false, commits: commits)
        let rollback = try await measure(directory, walPrecision: true, commits: commits, journalMode: "DELETE")
        // Ten times as many: 10,000 queries over 1,000 tables.
        let wideCommits = quick ? 5 : 50
        let wideWAL = try await measure(directory, walPrecision: true, commits: wideCommits, tables: 1000)
        let wideDelete = try await measure(
            directory, walPrecision: true, commits: wideCommits, journalMode: "DELETE", tables: 1000)
        var table = ResultTable(
            scenario: name,
            note:
                "1,000 live queries over 100 tables (10 per table); the sqlite3 shell, at its defaults, commits "
                + "\(commits) single-row inserts into one table, one at a time (each waits for the 10 updates). "
                + "Then 10,000 queries over 1,000 tables, \(wideCommits) commits, in WAL and DELETE.")
        table.add(
            "refreshes per external commit", precise.refreshesPerCommit, anchor: everything.refreshesPerCommit,
            "without WAL precision")
        table.add("refreshes per external commit", precise.refreshesPerCommit, anchor: 10, "ideal")
        table.add(
            "refreshes per external commit, DELETE journal (tables from pages compared)", rollback.refreshesPerCommit,
            anchor: everything.refreshesPerCommit, "refresh everything")
        table.add(
            "p50 latency, commit sent → last of 10 updates, DELETE journal (ms)", rollback.latency.percentile(50),
            anchor: everything.latency.percentile(50), "WAL, without WAL precision")
        table.add(
            "CPU per external commit, DELETE journal (ms)", rollback.cpuPerCommit, anchor: precise.cpuPerCommit,
            "WAL, with WAL precision")
        table.add(
            "10,000 queries over 1,000 tables, DELETE journal: refreshes per external commit",
            wideDelete.refreshesPerCommit, anchor: wideWAL.refreshesPerCommit, "the same in WAL")
        table.add(
            "10,000 queries over 1,000 tables, DELETE journal: CPU per external commit (ms)", wideDelete.cpuPerCommit,
            anchor: wideWAL.cpuPerCommit, "the same in WAL")
        table.add(
            "10,000 queries over 1,000 tables, DELETE journal: p50 latency, commit sent → last of 10 updates (ms)",
            wideDelete.latency.percentile(50), anchor: wideWAL.latency.percentile(50), "the same in WAL")
        table.add(
            "CPU per external commit (ms)", precise.cpuPerCommit, anchor: everything.cpuPerCommit,
            "without WAL precision")
        table.add(
            "p50 latency, commit sent → last of 10 updates (ms)", precise.latency.percentile(50),
            anchor: everything.latency.percentile(50), "without WAL precision")
        table.add(
            "p95 latency, commit sent → last of 10 updates (ms)", precise.latency.percentile(95),
            anchor: everything.latency.percentile(95), "without WAL precision")
        let statistics = precise.statistics
        table.add(
            "reading the WAL and keeping the map, per single-row commit (µs)",
            Double(statistics.readNanoseconds) / Double(max(statistics.commits, 1)) / 1000)
        let bulk = precise.bulk
        table.add(
            "reading the WAL and keeping the map, per frame of bulk commits (µs; \(bulk.frames / max(bulk.commits, 1)) frames each)",
            Double(bulk.readNanoseconds) / Double(max(bulk.frames, 1)) / 1000)
        table.add(
            "building the page map from dbstat (ms, off the watcher's thread)",
            Double(statistics.mapBuildNanoseconds) / Double(max(statistics.mapBuilds, 1)) / 1_000_000)
        table.checks.append("each commit reached exactly the 10 queries of its table, with and without precision")
        table.checks.append(
            "\(statistics.commits) commits read from the WAL, \(statistics.frames) frames, "
                + "\(statistics.fallbacks) readings fell back to refreshing everything")
        return table
    }

    /// Waits until this process uses under 2 ms of CPU in 200 ms (30 s at most).
    private static func untilIdle() async throws {
        for _ in 0..<150 {
            let before = cpuSeconds()
            try await Task.sleep(for: .milliseconds(200))
            if cpuSeconds() - before < 0.002 { return }
        }
    }

    static func measure(
        _ directory: URL, walPrecision: Bool, commits: Int, journalMode: String = "WAL", tables: Int = 100
    ) async throws -> Run {
        let perTable = 10
        let schema =
            (0..<tables).map { "CREATE TABLE t\($0)(id INTEGER PRIMARY KEY, v);" }.joined()
            + (0..<tables).map { "INSERT INTO t\($0)(v) VALUES (0);" }.joined()
        let path = try makeDatabase(
            directory, "external-fanout-\(walPrecision)-\(journalMode)-\(tables).sqlite", schema,
            journalMode: journalMode)
        let wal = journalMode == "WAL"
        var options = LiveDatabase.Options()
        options.liveQueries.walPrecision = walPrecision
        let database = try await LiveDatabase.open(.file(path), options: options)
        let fanOut = try await FanOutQueries(database, tables: tables, perTable: perTable)
        let arrivals = fanOut.arrivals
        // Let the page map be built before counting.
        try await waitUntil("the page map") {
            !walPrecision || !wal || database.walPrecisionStatistics().mapBuilds > 0
        }
        guard let sqlite3 = ChildProcess.executable(named: "sqlite3") else {
            throw BenchmarkCheckFailed(description: "sqlite3 is not on PATH")
        }
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: sqlite3)
        process.arguments = [path]
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // Warmed up alike in both modes: a first commit to another table,
        // delivered (in a rollback-journal file the first reading copies
        // every table's pages, as the page map is built in WAL mode).
        input.fileHandleForWriting.write(Data("INSERT INTO t7(v) VALUES (999999999);\n".utf8))
        try await waitUntil("the 10 queries of t7 saw the warm-up commit") {
            arrivals.withLock { ($0[999_999_999]?.count ?? 0) == perTable }
        }
        // What registering left running (the kept queries' bases read one
        // by one, a closed database's memory freed) ends before counting.
        try await untilIdle()
        let before = await database.directory.list().map(\.refreshes).reduce(0, +)
        let statisticsBefore = database.walPrecisionStatistics()
        var latency = Samples()
        let cpuBefore = cpuSeconds()
        for value in 1...Int64(commits) {
            let start = Monotonic.now()
            input.fileHandleForWriting.write(Data("INSERT INTO t42(v) VALUES (\(value));\n".utf8))
            try await waitUntil("the 10 queries of t42 saw \(value)") {
                arrivals.withLock { ($0[value]?.count ?? 0) == perTable }
            }
            latency.append(arrivals.withLock { $0[value]!.last } - start)
        }
        let cpuPerCommit = (cpuSeconds() - cpuBefore) / Double(commits) * 1000
        try await Task.sleep(for: .milliseconds(200))
        let after = await database.directory.list().map(\.refreshes).reduce(0, +)
        let total = database.walPrecisionStatistics()
        var statistics = total - statisticsBefore
        statistics.mapBuilds = total.mapBuilds
        statistics.mapBuildNanoseconds = total.mapBuildNanoseconds
        // Bulk commits: 50,000 rows each into t42, over a hundred frames.
        let bulkBefore = database.walPrecisionStatistics()
        for round in 1...max(1, commits / 10) where wal && tables == 100 {
            let value = Int64(1_000_000 * round)
            input.fileHandleForWriting.write(
                Data(
                    ("INSERT INTO t42(v) SELECT \(value) - 50000 + value FROM generate_series(1, 49999);\n"
                        + "INSERT INTO t42(v) VALUES (\(value));\n").utf8))
            try await waitUntil("the 10 queries of t42 saw \(value)") {
                arrivals.withLock { ($0[value]?.count ?? 0) == perTable }
            }
        }
        let bulk = database.walPrecisionStatistics() - bulkBefore
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        fanOut.listener.cancel()
        await database.close()
        return Run(
            refreshesPerCommit: Double(after - before) / Double(commits), latency: latency, statistics: statistics,
            bulk: bulk, commits: commits, cpuPerCommit: cpuPerCommit)
    }
}
