import Foundation
import SQLiveEngine

/// Another process commits single-row inserts 40 ms apart; the time from
/// each commit's return in the writer to sqlive's delivered update.
///
/// A matrix: WAL at synchronous FULL, NORMAL and OFF, and the rollback
/// journal in DELETE, TRUNCATE and PERSIST modes, each written by the
/// sqlite3 CLI, Python's sqlite3 module and GRDB with their default
/// settings. The first case also runs polling anchors (re-execution every
/// 100 ms and every 1 s, as `\watch` users do) on the same commits.
///
/// The scenario fails when sqlive's final result misses a commit; slow or
/// late deliveries are reported, never judged.
enum ExternalLatency: Scenario {
    static let name = "external-latency"
    static let query = "SELECT id FROM events ORDER BY id"
    /// Wider than the 15 ms coalescing window: each commit is a leading edge.
    static let spacing = Duration.milliseconds(40)

    /// One case of the matrix.
    struct Case {
        var journal: JournalSetting
        var writer: ExternalWriter
    }

    /// Every journal setting with every writer; a few cases for `--quick`.
    static func cases(quick: Bool) -> [Case] {
        guard !quick else {
            return [
                Case(journal: .walFull, writer: .sqlite3CLI), Case(journal: .walFull, writer: .python),
                Case(journal: .walFull, writer: .grdb), Case(journal: .walNormal, writer: .sqlite3CLI),
                Case(journal: .delete, writer: .sqlite3CLI),
            ]
        }
        return JournalSetting.all.flatMap { journal in
            ExternalWriter.allCases.map { Case(journal: journal, writer: $0) }
        }
    }

    static func run(quick: Bool, directory: URL) async throws -> ResultTable {
        let commits = quick ? 8 : 100
        let cases = cases(quick: quick)
        var table = ResultTable(
            scenario: name,
            note: "\(commits) single-row commits per case by another process, one every 40 ms; latency in ms from the "
                + "writer's commit returning to sqlive's delivered update. Writers keep their defaults but for the "
                + "case's pragmas and a busy timeout (sqlite3 CLI `.timeout 10000`, GRDB 10 s, Python its default "
                + "5 s). The sqlite3 CLI's return is when its answer to `SELECT last_insert_rowid()` is read back: "
                + "a pipe round trip (tens of µs) later. late: delivered only once the writer began its next commit, "
                + "or over 500 ms after its own (a safety poll's work); early: delivered before the return time was "
                + "taken, counted as 0 ms. commit: the writer's own time to insert and commit (p50). "
                + "Each writer keeps its connection open until sqlive delivered its last commit (or 5 s).")
        var details = DetailTable(
            columns: [
                "journal", "writer", "delivered", "p50 (ms)", "p99 (ms)", "max (ms)", "late", "early", "commit (ms)",
            ], numericFrom: 2)
        for (index, item) in cases.enumerated() {
            let what = "\(item.journal.label), \(item.writer.rawValue)"
            let path = try makeDatabase(
                directory, "external-\(index).sqlite", "CREATE TABLE events(id INTEGER PRIMARY KEY, note TEXT)",
                journalMode: item.journal.fileMode)
            let (report, anchors) = try await measure(item, path: path, commits: commits, anchored: index == 0)
            details.add(
                [item.journal.label, item.writer.rawValue],
                [
                    Double(report.delivered), report.latency.percentile(50), report.latency.percentile(99),
                    report.latency.max, Double(report.late), Double(report.beforeReturn),
                    report.commitTime.percentile(50),
                ])
            for (anchorName, anchor) in anchors {
                table.add(
                    "p50 latency, \(what) (ms)", report.latency.percentile(50), anchor: anchor.percentile(50),
                    anchorName)
                table.add(
                    "p99 latency, \(what) (ms)", report.latency.percentile(99), anchor: anchor.percentile(99),
                    anchorName)
                table.add("max latency, \(what) (ms)", report.latency.max, anchor: anchor.max, anchorName)
            }
        }
        table.details = details
        table.checks.append("every commit was delivered (\(cases.count) cases × \(commits) commits)")
        return table
    }

    /// Runs one case on a fresh database: sqlive's report, and each polling anchor's latency samples.
    static func measure(
        _ item: Case, path: String, commits: Int, anchored: Bool
    ) async throws -> (DeliveryReport, [(String, Samples)]) {
        let database = try await LiveDatabase.open(.file(path))
        let recorder = DeliveryRecorder(database.directory.events())
        _ = try await database.directory.register(name: "events", LiveQueryDefinition(sql: query))
        let anchors =
            anchored
            ? try [
                ("poll 100 ms", PollingAnchor(path: path, query: query, interval: .milliseconds(100))),
                ("poll 1 s", PollingAnchor(path: path, query: query, interval: .seconds(1))),
            ] : []
        let delivered = { @Sendable (ids: Set<Int64>) in
            Set(recorder.latest).isSuperset(of: ids)
                && anchors.allSatisfy { Set($0.1.firstSeen.keys).isSuperset(of: ids) }
        }
        let made = try await onOwnThread {
            try item.writer.run(path: path, count: commits, interval: spacing, pragmas: item.journal.pragmas) { made in
                // The writer stays open meanwhile; 5 s leaves room for the 2 s safety poll.
                blockUntil(timeout: .seconds(5)) { delivered(Set(made.map(\.id))) }
            }
        }
        let ids = Set(made.map(\.id))
        // A miss is reported below, not as a time-out.
        try? await waitUntil(timeout: .seconds(5), "all commits delivered") { delivered(ids) }
        recorder.stop()
        anchors.forEach { $0.1.stop() }
        await database.close()

        let what = "\(item.journal.label), \(item.writer.rawValue)"
        if let failure = recorder.failures.first {
            throw BenchmarkCheckFailed(description: "\(what): the live query failed: \(failure)")
        }
        let missing = ids.subtracting(recorder.latest).sorted()
        guard missing.isEmpty else {
            throw BenchmarkCheckFailed(
                description: "\(what): sqlive's final result misses \(missing.count) of \(commits) commits "
                    + "(ids \(missing.prefix(10).map(String.init).joined(separator: ", ")))")
        }
        let report = DeliveryReport(commits: made, firstSeen: recorder.firstSeen)
        return (report, anchors.map { ($0.0, DeliveryReport(commits: made, firstSeen: $0.1.firstSeen).latency) })
    }
}
