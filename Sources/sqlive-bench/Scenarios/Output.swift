import Foundation
import GRDB

/// One million rows in csv mode to /dev/null through a scripted session,
/// against the sqlite3 CLI doing the same, in the same run.
enum Output: Scenario {
    static let name = "output"

    static func run(quick: Bool, directory: URL) async throws -> ResultTable {
        let rows = quick ? 50_000 : 1_000_000
        var table = ResultTable(
            scenario: name, note: "\(rows) rows (id, text, integer, real) as CSV to /dev/null; best of 3 runs.")
        guard let sqlive = ChildProcess.sqlivePath else {
            table.checks.append("skipped: no sqlive binary next to sqlive-bench")
            return table
        }
        let path = try makeDatabase(
            directory, "output.sqlite",
            """
            CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, score INTEGER, ratio REAL);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows))
            INSERT INTO t SELECT i, 'player ' || i, i * 7 % 1000, i / 3.0 FROM n;
            """)
        let query = "SELECT * FROM t"
        let ours = [sqlive, path, "--mode", "csv", "-c", query]
        let theirs = ["/usr/bin/sqlite3", "-csv", path, query]
        let probe = try ChildProcess.measure([sqlive, path, "--mode", "csv", "-c", "SELECT 1"])
        guard probe.status == 0 else {
            table.checks.append("skipped: sqlive's scripted sessions do not run yet (exit \(probe.status))")
            return table
        }
        var best = (ours: (seconds: Double.infinity, peak: 0.0), theirs: (seconds: Double.infinity, peak: 0.0))
        for _ in 0..<3 {
            let a = try ChildProcess.measure(ours)
            let b = try ChildProcess.measure(theirs)
            guard a.status == 0, b.status == 0 else { throw BenchmarkCheckFailed(description: "a CSV run failed") }
            if a.seconds < best.ours.seconds { best.ours = (a.seconds, a.peakMiB) }
            if b.seconds < best.theirs.seconds { best.theirs = (b.seconds, b.peakMiB) }
        }
        table.add("wall time (s)", best.ours.seconds, anchor: best.theirs.seconds, "sqlite3 -csv")
        table.add("peak resident memory (MiB)", best.ours.peak, anchor: best.theirs.peak, "sqlite3 -csv")
        return table
    }
}
