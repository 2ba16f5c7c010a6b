import Foundation
import GRDB

/// One million rows to /dev/null through a scripted session, in csv, json,
/// box and table modes, against the sqlite3 CLI doing the same, in the same
/// run.
enum Output: Scenario {
    static let name = "output"

    static func run(quick: Bool, directory: URL) async throws -> ResultTable {
        let rows = quick ? 50_000 : 1_000_000
        let runs = quick ? 1 : 3
        var table = ResultTable(
            scenario: name,
            note: "\(rows) rows (id, text, integer, real) to /dev/null; best of \(runs) alternating runs; "
                + "peak memory of each process, measured by GNU time.")
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
        let probe = try ChildProcess.time([sqlive, path, "--mode", "csv", "-c", "SELECT 1"])
        guard probe.status == 0 else {
            table.checks.append("skipped: sqlive's scripted sessions do not run yet (exit \(probe.status))")
            return table
        }
        for mode in ["csv", "json", "box", "table"] {
            let result = try SideBySide(
                ours: [sqlive, path, "--mode", mode, "-c", query],
                theirs: ["/usr/bin/sqlite3", "-\(mode)", path, query], runs: runs)
            table.add("\(mode): wall time (s)", result.ours.seconds, anchor: result.theirs.seconds, "sqlite3 -\(mode)")
            table.add(
                "\(mode): peak memory (MiB)", result.ours.peakMiB, anchor: result.theirs.peakMiB, "sqlite3 -\(mode)")
        }
        return table
    }
}
