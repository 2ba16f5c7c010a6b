import Foundation
import GRDB
import SQLiveEngine

/// Another process commits while sqlive is busy on its own connection:
/// running one long statement (in a WAL database, then in a rollback-journal
/// one), or holding a transaction open (WAL). The time from each commit's
/// return to sqlive's delivered update, and how many deliveries waited for
/// the statement or transaction to end.
///
/// Only a missing commit fails the scenario; held deliveries are reported.
enum LongStatement: Scenario {
    static let name = "long-statement"
    static let query = "SELECT id FROM events ORDER BY id"
    static let spacing = Duration.milliseconds(100)

    /// What keeps sqlive's connection busy.
    enum Busy: String {
        case statement = "long statement"
        case transaction = "open transaction"
    }

    static func run(quick: Bool, directory: URL) async throws -> ResultTable {
        let commits = quick ? 6 : 20
        let rows = try await rowsTaking(quick ? .seconds(1) : .seconds(3))
        let statement =
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT \(rows)) SELECT count(*) FROM c"
        var table = ResultTable(
            scenario: name,
            note: "While sqlive runs one statement on its own connection (a recursive count of \(rows) rows) or holds "
                + "a transaction open (`BEGIN; SELECT count(*) FROM events;`, then `COMMIT` once the writer is done), "
                + "the sqlite3 CLI (defaults, `.timeout 10000`) commits \(commits) single-row inserts 100 ms apart. "
                + "during: commits that returned before the statement or transaction ended; latency in ms from "
                + "commit return to delivery, over those; held: of those, delivered only after it ended; last "
                + "held, after end: when the last of those came, counted from the end. The statement reads no "
                + "table, so it locks no file: a rollback-journal writer is not kept waiting by it. "
                + "longest commit: the CLI's longest insert-and-commit. The CLI keeps its connection open until "
                + "sqlive delivered its last commit (or 10 s).")
        var details = DetailTable(
            columns: [
                "sqlive busy with", "journal", "during", "p50 (ms)", "p99 (ms)", "max (ms)", "held",
                "last held, after end (ms)", "busy for (s)", "longest commit (ms)",
            ], numericFrom: 2)
        let cases: [(Busy, String)] = [(.statement, "WAL"), (.statement, "DELETE"), (.transaction, "WAL")]
        for (index, (busy, journal)) in cases.enumerated() {
            let path = try makeDatabase(
                directory, "long-\(index).sqlite", "CREATE TABLE events(id INTEGER PRIMARY KEY, note TEXT)",
                journalMode: journal)
            let outcome = try await measure(busy, journal, path: path, statement: statement, commits: commits)
            let during = outcome.commits.filter { $0.returned < outcome.end }
            let report = DeliveryReport(commits: during, firstSeen: outcome.firstSeen)
            let heldSince = during.compactMap { outcome.firstSeen[$0.id] }.filter { $0 >= outcome.end }
            let all = DeliveryReport(commits: outcome.commits, firstSeen: outcome.firstSeen)
            details.add(
                [busy.rawValue, journal],
                [
                    Double(during.count), report.latency.percentile(50), report.latency.percentile(99),
                    report.latency.max, Double(heldSince.count),
                    heldSince.max().map { Double($0 - outcome.end) / 1e6 } ?? .nan,
                    Double(outcome.end - outcome.start) / 1e9, all.commitTime.max,
                ])
        }
        table.details = details
        table.checks.append("every commit was delivered (\(cases.count) cases × \(commits) commits)")
        return table
    }

    /// One case's raw times: the writer's commits, when sqlive was busy, and when each id was delivered.
    struct Outcome {
        var commits: [WriterCommit]
        var start: Int64
        var end: Int64
        var firstSeen: [Int64: Int64]
    }

    /// Runs one case on a fresh database.
    static func measure(
        _ busy: Busy, _ journal: String, path: String, statement: String, commits: Int
    ) async throws -> Outcome {
        let database = try await LiveDatabase.open(.file(path))
        let recorder = DeliveryRecorder(database.directory.events())
        _ = try await database.directory.register(name: "events", LiveQueryDefinition(sql: query))
        let start = Monotonic.now()
        let running: Task<Int64, any Error>?
        switch busy {
        case .statement:
            running = Task {
                _ = try await database.execute(statement)
                return Monotonic.now()
            }
        case .transaction:
            _ = try await database.execute("BEGIN; SELECT count(*) FROM events;")
            running = nil
        }
        // Let the statement get going before the first commit.
        try await Task.sleep(for: .milliseconds(100))
        // Says when the writer made its commits (or failed), without polling.
        let (done, signal) = AsyncStream.makeStream(of: Void.self)
        let writer = Task {
            defer { signal.finish() }
            return try await onOwnThread {
                try ExternalWriter.sqlite3CLI.run(path: path, count: commits, interval: spacing, pragmas: []) { made in
                    signal.finish()
                    // The writer stays open until sqlive delivered its commits, or 10 s.
                    blockUntil(timeout: .seconds(10)) { Set(recorder.latest).isSuperset(of: made.map(\.id)) }
                }
            }
        }
        let end: Int64
        if let running {
            end = try await running.value
        } else {
            for await _ in done {}
            _ = try await database.execute("COMMIT")
            end = Monotonic.now()
        }
        let made = try await writer.value
        let ids = Set(made.map(\.id))
        recorder.stop()
        await database.close()

        let what = "\(busy.rawValue), \(journal)"
        if let failure = recorder.failures.first {
            throw BenchmarkCheckFailed(description: "\(what): the live query failed: \(failure)")
        }
        let missing = ids.subtracting(recorder.latest).count
        guard missing == 0 else {
            throw BenchmarkCheckFailed(
                description: "\(what): sqlive's final result misses \(missing) of \(commits) commits")
        }
        return Outcome(commits: made, start: start, end: end, firstSeen: recorder.firstSeen)
    }

    /// How many rows the recursive count must make to take about `target`, measured on this machine.
    static func rowsTaking(_ target: Duration) async throws -> Int {
        let probe = 1_000_000
        let queue = try DatabaseQueue()
        let start = Monotonic.now()
        _ = try await queue.read { db in
            try Int.fetchOne(
                db,
                sql: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT ?) SELECT count(*) FROM c",
                arguments: [probe])
        }
        let elapsed = Double(Swift.max(1, Monotonic.now() - start))
        let rows = Double(probe) * Double(target / .nanoseconds(1)) / elapsed
        return Swift.min(1_000, Swift.max(1, Int(rows / 100_000))) * 100_000
    }
}
