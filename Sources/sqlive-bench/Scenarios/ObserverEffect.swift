import Foundation
import GRDB
import SQLiveEngine
import SQLiveLocks

/// What watching costs the watched: another process commits single-row
/// inserts 20 ms apart, at its program's defaults, while nothing watches,
/// while a 1 s poller re-runs a query, and while sqlive keeps the same query
/// live. Failed commits ("database is locked") and each commit's time, per
/// journal mode, writer and query cost.
///
/// The writers are the sqlite3 CLI (no busy timeout: a lock it meets fails
/// its commit at once), Python's `sqlite3` (a 5 s busy timeout: a lock
/// delays its commit) and a GRDB `DatabaseQueue` process (no busy timeout,
/// GRDB's default). The poller is a GRDB `DatabaseQueue` reading the query
/// once a second, as `\watch`-style tools and app-side polling do.
enum ObserverEffect: Scenario {
    static let name = "observer-effect"
    static let query = "SELECT grp, sum(value), count(*), max(id) FROM items GROUP BY grp ORDER BY 2 DESC LIMIT 5"

    enum Watcher: String, CaseIterable {
        case none = "no watcher"
        case poller = "1 s poller"
        case sqlive
        /// An agent's statements through `sqlive --mcp`'s confined reader,
        /// back to back (a real agent calls every few seconds).
        case agent = "sqlive --mcp agent"
    }

    enum Writer: String, CaseIterable {
        case cli = "sqlite3 CLI"
        case python = "Python"
        case grdb = "GRDB"
    }

    struct Outcome {
        var failed: Int
        /// Each successful commit's time, in nanoseconds.
        var latencies: Samples
    }

    static func run(quick: Bool, directory: URL) async throws -> ResultTable {
        let modes = quick ? ["DELETE", "WAL"] : ["DELETE", "TRUNCATE", "PERSIST", "WAL"]
        let writers: [Writer] = quick ? [.cli] : Writer.allCases
        let costs: [(label: String, rows: Int)] =
            quick ? [("2k rows", 2_000)] : [("2k rows", 2_000), ("200k rows", 200_000)]
        let commits = quick ? 25 : 100
        var table = ResultTable(
            scenario: name,
            note: "Another process commits \(commits) single-row inserts 20 ms apart at its defaults (the sqlite3 CLI "
                + "and GRDB: no busy timeout; Python: 5 s), while nothing watches the file, while a GRDB queue polls "
                + "`\(query)` once a second, while sqlive keeps it live (in-process engine, defaults), and while an "
                + "agent runs it through sqlive --mcp's confined reader back to back. "
                + "failed: commits that failed with \"database is locked\"; p50/p99: each successful commit's time "
                + "(the CLI's own `.timer`; Python and GRDB around execute and commit). The query takes about 1 ms "
                + "over 2k rows and 40-60 ms over 200k.")
        var details = DetailTable(
            columns: ["journal", "writer", "table", "watcher", "failed", "p50 (ms)", "p99 (ms)", "sqlive updates"],
            numericFrom: 4)
        var failed: [Watcher: Int] = [:]
        var addedP99: [Double] = []
        for mode in modes {
            for cost in costs {
                let template = try makeItems(
                    directory, "observer-\(mode)-\(cost.rows).sqlite", rows: cost.rows, mode: mode)
                for writer in writers {
                    var none: Outcome?
                    for watcher in Watcher.allCases {
                        let path = directory.appendingPathComponent("observed.sqlite").path
                        for suffix in ["", "-journal", "-wal", "-shm"] {
                            try? FileManager.default.removeItem(atPath: path + suffix)
                        }
                        try FileManager.default.copyItem(atPath: template, toPath: path)
                        let pragmas = mode == "WAL" ? [] : ["journal_mode = \(mode)"]
                        let label = "\(mode), \(writer.rawValue), \(cost.label), \(watcher.rawValue)"
                        FileHandle.standardError.write(Data("observer-effect: \(label)\n".utf8))
                        let outcome: Outcome
                        let updates: Int
                        do {
                            (outcome, updates) = try await measure(
                                writer, watcher, path: path, commits: commits, pragmas: pragmas)
                        } catch {
                            throw BenchmarkCheckFailed(description: "\(label): \(error)")
                        }
                        failed[watcher, default: 0] += outcome.failed
                        if watcher == .none { none = outcome }
                        if watcher == .sqlive, writer == .python, let none {
                            addedP99.append(outcome.latencies.percentile(99) - none.latencies.percentile(99))
                        }
                        details.add(
                            [mode, writer.rawValue, cost.label, watcher.rawValue],
                            [
                                Double(outcome.failed), outcome.latencies.percentile(50),
                                outcome.latencies.percentile(99), watcher == .sqlive ? Double(updates) : .nan,
                            ])
                    }
                }
            }
        }
        table.add(
            "failed commits, all cases", Double(failed[.sqlive] ?? 0), anchor: Double(failed[.poller] ?? 0),
            "1 s poller")
        table.add(
            "failed commits, all cases (no watcher)", Double(failed[.none] ?? 0), anchor: nil, "")
        table.add(
            "failed commits beside an MCP agent, all cases", Double(failed[.agent] ?? 0),
            anchor: Double(failed[.poller] ?? 0), "1 s poller")
        if !addedP99.isEmpty {
            table.add(
                "Python's p99 commit time added by sqlive, worst case (ms)", addedP99.max() ?? .nan, anchor: nil, "")
        }
        table.details = details
        guard failed[.none, default: 0] == 0 else {
            throw BenchmarkCheckFailed(description: "commits failed with no watcher: the machine, not sqlive")
        }
        return table
    }

    /// A database of `rows` items in a journal mode, made once per case and copied.
    static func makeItems(_ directory: URL, _ name: String, rows: Int, mode: String) throws -> String {
        try makeDatabase(
            directory, name,
            """
            CREATE TABLE items(id INTEGER PRIMARY KEY, grp INTEGER, value INTEGER, note TEXT);
            WITH RECURSIVE n(i) AS (VALUES(1) UNION ALL SELECT i + 1 FROM n WHERE i < \(rows))
            INSERT INTO items(grp, value, note) SELECT i % 100, i, hex(randomblob(16)) FROM n;
            """,
            journalMode: mode)
    }

    /// One case: the watcher started, the writer run to its end, the watcher stopped.
    static func measure(
        _ writer: Writer, _ watcher: Watcher, path: String, commits: Int, pragmas: [String]
    ) async throws -> (Outcome, Int) {
        var database: LiveDatabase?
        var poller: Task<Void, Never>?
        var pollerQueue: DatabaseQueue?
        let updates = Locked(0)
        let latest = Locked<[[SQLValue]]?>(nil)
        var events: Task<Void, Never>?
        let stopAgent = Locked(false)
        var agentLoop: Task<Int, any Error>?
        switch watcher {
        case .none: break
        case .agent:
            let reader = try ConfinedReader(path: path)
            agentLoop = Task {
                try await onThread {
                    var count = 0
                    while !stopAgent.withLock({ $0 }) {
                        _ = try? reader.run(query)
                        count += 1
                    }
                    return count
                }
            }
        case .poller:
            let queue = try DatabaseQueue(path: path)
            pollerQueue = queue
            poller = Task {
                while !Task.isCancelled {
                    _ = try? queue.read { db in try Row.fetchAll(db, sql: query) }
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        case .sqlive:
            let live = try await LiveDatabase.open(.file(path))
            let stream = live.directory.events()
            events = Task {
                for await event in stream {
                    if case .changed(let change) = event {
                        updates.withLock { $0 += 1 }
                        latest.withLock { $0 = Array(change.result.rows) }
                    }
                }
            }
            _ = try await live.directory.register(name: "q", LiveQueryDefinition(sql: query))
            database = live
        }
        let outcome = try await onThread { try runWriter(writer, path: path, commits: commits, pragmas: pragmas) }
        // Closed before the next case copies a file to the same path: the
        // last connection to a WAL file deletes `-wal` and `-shm` by path.
        poller?.cancel()
        await poller?.value
        stopAgent.withLock { $0 = true }
        if let agentLoop, try await agentLoop.value == 0 {
            throw BenchmarkCheckFailed(description: "the agent ran no statement")
        }
        try pollerQueue?.close()
        if let database {
            // The last commit reaches the live query (the scenario's check).
            let expected = try await database.execute(query)[0].rows
            try await waitUntil("sqlive's update after the last commit") { latest.withLock { $0 } == expected }
            await database.close()
        }
        events?.cancel()
        return (outcome, updates.withLock { $0 })
    }

    /// Runs a blocking body on a thread of its own (a writer waits for its child).
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    /// A writer process run to its end; its JSON summary parsed.
    static func runWriter(_ writer: Writer, path: String, commits: Int, pragmas: [String]) throws -> Outcome {
        let process: SpawnedProcess
        switch writer {
        case .cli, .python:
            guard let python = ChildProcess.executable(named: "python3") else {
                throw BenchmarkCheckFailed(description: "python3 is not on PATH")
            }
            process = SpawnedProcess()
            process.executableURL = URL(fileURLWithPath: python)
            process.arguments =
                ["-c", writer == .cli ? cliDriver : pythonWriter, path, "\(commits)", "0.02"] + pragmas
        case .grdb:
            process = ChildProcess.writer(
                path: path, count: commits, intervalMicroseconds: 20_000, pragmas: pragmas, holdOpen: false)
            process.arguments += ["--observer-table", "items"]
        }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0,
            let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last,
            let summary = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let failed = summary["failed"] as? Int, let latencies = summary["latencies"] as? [Int]
        else {
            throw BenchmarkCheckFailed(
                description:
                    "the \(writer.rawValue) writer failed: \(String(decoding: data, as: UTF8.self).prefix(300))")
        }
        var samples = Samples()
        for latency in latencies { samples.append(Int64(latency)) }
        return Outcome(failed: failed, latencies: samples)
    }

    /// Drives the sqlite3 CLI at its defaults; its `.timer` times each insert.
    static let cliDriver = #"""
        import json, re, subprocess, sys, time
        path, count, interval = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
        cli = subprocess.Popen(["sqlite3", path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        for pragma in sys.argv[4:]:
            cli.stdin.write("PRAGMA " + pragma + ";\n")
        cli.stdin.write(".timer on\n")
        for i in range(count):
            cli.stdin.write(f"INSERT INTO items(grp, value, note) VALUES ({i % 100}, {1000000000 + i}, 'cli');\n")
            cli.stdin.flush()
            time.sleep(interval)
        out, err = cli.communicate()
        times = [int(float(t) * 1e9) for t in re.findall(r"Run Time: real ([0-9.]+)", out)]
        failed = err.count("database is locked")
        print(json.dumps({"failed": failed, "latencies": times[len(times) - (count - failed):]}))
        """#

    /// Python's `sqlite3` at its defaults.
    static let pythonWriter = #"""
        import json, sqlite3, sys, time
        path, count, interval = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
        connection = sqlite3.connect(path)
        for pragma in sys.argv[4:]:
            connection.execute("PRAGMA " + pragma).fetchall()
        failed, times = 0, []
        for i in range(count):
            started = time.perf_counter_ns()
            try:
                connection.execute("INSERT INTO items(grp, value, note) VALUES (?, ?, 'python')", (i % 100, 1000000000 + i))
                connection.commit()
                times.append(time.perf_counter_ns() - started)
            except sqlite3.OperationalError:
                failed += 1
                connection.rollback()
            time.sleep(interval)
        print(json.dumps({"failed": failed, "latencies": times}))
        """#
}
