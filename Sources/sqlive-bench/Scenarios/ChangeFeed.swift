import Foundation
import GRDB
import SQLiveEngine
import SQLiveLocks

/// The change feed (`LiveDatabase.rowChanges`) over a 1,000,000-row table
/// in WAL mode: one-row UPDATEs by another connection (GRDB at its
/// defaults, in this process), commit → the commit's rows delivered,
/// against what a user would do instead to learn what changed — read the
/// table again (the sqlite3 shell, `SELECT * FROM items`); the CPU per
/// changed row of bulk UPDATEs by the sqlite3 shell; and the memory the
/// feed keeps (its copy of the table's pages) against the table on disk.
enum ChangeFeed: Scenario {
    static let name = "change-feed"

    static func run(quick: Bool, directory: URL) async throws -> ResultTable {
        var table = try await run(quick: quick, directory: directory, journalMode: "WAL")
        let rollback = try await run(quick: quick, directory: directory, journalMode: "DELETE")
        for row in rollback.rows {
            var row = row
            row.metric += ", DELETE journal"
            table.rows.append(row)
        }
        table.checks += rollback.checks.map { "DELETE journal: " + $0 }
        return table
    }

    static func run(quick: Bool, directory: URL, journalMode: String) async throws -> ResultTable {
        let rows = quick ? 20_000 : 1_000_000
        let updates = quick ? 10 : 50
        let bulk = quick ? 2_000 : 10_000
        var table = ResultTable(
            scenario: name,
            note:
                "`rowChanges(tables: [\"items\"])` over a \(rows)-row table (WAL, then a DELETE-journal copy); \(updates) one-row UPDATEs by "
                + "another connection (GRDB at its defaults, in this process), 20 ms apart, timed from the writer's "
                + "commit to the commit's rows delivered; the anchor reads the whole table with the sqlite3 shell "
                + "(what finding the change takes without a feed). Then 5 UPDATEs of \(bulk) rows each by the "
                + "sqlite3 shell: this process's CPU per changed row.")
        let path = try makeDatabase(
            directory, "feed-\(journalMode).sqlite",
            """
            CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT, qty INTEGER);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT \(rows))
            INSERT INTO items SELECT i, 'item ' || i, i % 97 FROM n;
            """, journalMode: journalMode)
        let fileMiB = Double((try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) / 1_048_576
        let heapBefore = heapMiB()
        let database = try await LiveDatabase.open(.file(path))
        let feed = database.rowChanges(tables: ["items"])
        let delivered = Locked<[(at: Int64, commit: CommitRows)]>([])
        let listener = Task {
            for await commit in feed { delivered.withLock { $0.append((Monotonic.now(), commit)) } }
        }
        let writer = try DatabaseQueue(path: path)
        // Until the feed reads rows (its page map and its copy of the pages first).
        var warm = 0
        try await waitUntil("the feed reads rows") {
            warm += 1
            try await writer.write { db in try db.execute(sql: "UPDATE items SET qty = qty + 1 WHERE id = 1") }
            try await Task.sleep(for: .milliseconds(200))
            return delivered.withLock { $0.contains { $0.commit.changes.first?.operation == .update } }
        }
        let heapMiB = heapMiB() - heapBefore

        var latency = Samples()
        var unknown = 0
        for index in 0..<updates {
            let target = (index + 1) * 7919 % rows + 1
            let seen = delivered.withLock { $0.count }
            try await writer.write { db in
                try db.execute(sql: "UPDATE items SET qty = qty + 1 WHERE id = ?", arguments: [target])
            }
            let committed = Monotonic.now()
            try await waitUntil("the rows of the update of \(target)") { delivered.withLock { $0.count > seen } }
            let (at, commit) = delivered.withLock { $0[seen] }
            guard commit.changes.count == 1, commit.changes[0].key == .rowid(Int64(target)) else {
                if commit.changes.contains(where: { $0.operation == .unknown }) { unknown += 1 }
                throw BenchmarkCheckFailed(
                    description: "unexpected rows for \(target): \(commit.changes.map(\.operation))")
            }
            latency.append(at - committed)
            try await Task.sleep(for: .milliseconds(20))
        }
        try writer.close()

        // Bulk commits by the sqlite3 shell: this process's CPU per row.
        let sqlite3 = ChildProcess.executable(named: "sqlite3") ?? "/usr/bin/sqlite3"
        let cpuBefore = cpuSeconds()
        var changedRows = 0
        for round in 0..<5 {
            let seen = delivered.withLock { $0.count }
            let low = round * bulk + 1000
            _ = try ChildProcess.time(
                [sqlite3, path, "UPDATE items SET name = name || '+' WHERE id BETWEEN \(low) AND \(low + bulk - 1)"])
            try await waitUntil("the bulk update's rows") { delivered.withLock { $0.count > seen } }
            changedRows += delivered.withLock { $0[seen].commit.changes.filter { $0.operation == .update }.count }
        }
        let cpuPerRow = (cpuSeconds() - cpuBefore) / Double(max(changedRows, 1)) * 1e6
        listener.cancel()
        await database.close()

        // The anchor: the sqlite3 shell reading the table.
        var reread = Samples()
        for _ in 0..<(quick ? 3 : 5) {
            let (seconds, status) = try ChildProcess.time([sqlite3, path, "SELECT * FROM items"])
            guard status == 0 else { throw BenchmarkCheckFailed(description: "sqlite3 failed reading the table") }
            reread.append(Int64(seconds * 1e9))
        }
        table.add(
            "p50 commit → its rows delivered (ms)", latency.percentile(50), anchor: reread.percentile(50),
            "sqlite3 shell reading the table")
        table.add(
            "p99 commit → its rows delivered (ms)", latency.percentile(99), anchor: reread.percentile(50),
            "sqlite3 shell reading the table")
        table.add("CPU per changed row, bulk UPDATEs (µs)", cpuPerRow)
        table.add("heap kept by the feed (MiB)", heapMiB, anchor: fileMiB, "the table's file")
        table.checks.append(
            "each one-row UPDATE was delivered as exactly one update of its row (\(unknown) unknown); "
                + "\(changedRows) rows of \(5 * bulk) in the bulk UPDATEs")
        return table
    }
}
