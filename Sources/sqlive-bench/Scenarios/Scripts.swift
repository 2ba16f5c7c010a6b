import Foundation
import GRDB

/// Scripted sessions statement for statement against the sqlite3 shell:
/// a load of many `INSERT`s, many one-row `SELECT`s, and start-up.
enum Scripts: Scenario {
    static let name = "scripts"

    static func run(quick: Bool, directory: URL) async throws -> ResultTable {
        let inserts = quick ? 5_000 : 50_000
        let selects = quick ? 1_000 : 10_000
        let runs = quick ? 1 : 5
        var table = ResultTable(
            scenario: name,
            note: "`sqlive FILE -f script.sql` against `sqlite3 FILE < script.sql`; best of \(runs) alternating "
                + "runs; peak memory of each process, measured by GNU time.")
        guard let sqlive = ChildProcess.sqlivePath else {
            table.checks.append("skipped: no sqlive binary next to sqlive-bench")
            return table
        }
        let sqlite3 = "/usr/bin/sqlite3"

        // A load: one transaction of INSERTs into a fresh file.
        let load = directory.appendingPathComponent("load.sql").path
        var text = "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, score INTEGER);\nBEGIN;\n"
        for index in 0..<inserts { text += "INSERT INTO t(name, score) VALUES ('player \(index)', \(index % 1000));\n" }
        text += "COMMIT;\n"
        try text.write(toFile: load, atomically: true, encoding: .utf8)
        let loaded = directory.appendingPathComponent("load.sqlite").path
        let fresh = {
            for suffix in ["", "-wal", "-shm", "-journal"] {
                try? FileManager.default.removeItem(atPath: loaded + suffix)
            }
        }
        let loading = try SideBySide(
            ours: [sqlive, loaded, "-f", load], theirs: [sqlite3, loaded], input: load, runs: runs, prepare: fresh)
        table.add(
            "\(inserts) INSERTs in a transaction (s)", loading.ours.seconds, anchor: loading.theirs.seconds, "sqlite3")
        table.add("  peak memory (MiB)", loading.ours.peakMiB, anchor: loading.theirs.peakMiB, "sqlite3")
        let count = try await DatabaseQueue(path: loaded).read { try Int.fetchOne($0, sql: "SELECT count(*) FROM t") }
        guard count == inserts else {
            throw BenchmarkCheckFailed(description: "the load left \(count ?? -1) rows, not \(inserts)")
        }
        table.checks.append("the load leaves \(inserts) rows")

        // Queries: one-row SELECTs in list mode.
        let path = try makeDatabase(
            directory, "scripts.sqlite",
            """
            CREATE TABLE players(id INTEGER PRIMARY KEY, name TEXT, score INTEGER);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
            INSERT INTO players SELECT i, 'player ' || i, i % 100 FROM n;
            """)
        let queries = directory.appendingPathComponent("queries.sql").path
        text = ""
        for index in 0..<selects { text += "SELECT id, name, score FROM players WHERE id = \(index % 1000 + 1);\n" }
        try text.write(toFile: queries, atomically: true, encoding: .utf8)
        let querying = try SideBySide(
            ours: [sqlive, path, "-f", queries], theirs: [sqlite3, path], input: queries, runs: runs)
        table.add(
            "\(selects) one-row SELECTs, list mode (s)", querying.ours.seconds, anchor: querying.theirs.seconds,
            "sqlite3")
        table.add("  peak memory (MiB)", querying.ours.peakMiB, anchor: querying.theirs.peakMiB, "sqlite3")

        // Start-up: open, run one statement, exit.
        let starting = try SideBySide(
            ours: [sqlive, path, "-c", "SELECT 1;"], theirs: [sqlite3, path, "SELECT 1;"], runs: quick ? 3 : 30)
        table.add(
            "start, SELECT 1, exit (ms)", starting.ours.seconds * 1000, anchor: starting.theirs.seconds * 1000,
            "sqlite3")
        table.add(
            "  median of the runs (ms)", starting.medians.ours * 1000, anchor: starting.medians.theirs * 1000,
            "sqlite3")
        table.add("  peak memory (MiB)", starting.ours.peakMiB, anchor: starting.theirs.peakMiB, "sqlite3")
        return table
    }
}
