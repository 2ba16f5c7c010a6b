import Foundation
import GRDB

/// A live query of every row of a 1,000,000-row table, served by the real
/// `sqlive --rpc` over pipes, and one-row changes made by another
/// connection (this process, GRDB at its defaults): bytes and time per
/// notification with `diff: "only"` against today's full re-send (`diff`
/// off), each in a server of its own; and the changes-only refresh against
/// the query alone (GRDB fetching the same rows in this process).
enum BigResult: Scenario {
    static let name = "big-result"
    static let query = "SELECT id, name, qty FROM items ORDER BY id"

    struct Side {
        var register: Double
        var latency = Samples()
        var bytes: [Int] = []
        var peakMiB: Double?
    }

    static func run(quick: Bool, directory: URL) async throws -> ResultTable {
        let rows = quick ? 20_000 : 1_000_000
        let changes = quick ? 5 : 20
        var table = ResultTable(
            scenario: name,
            note: "A live query of all \(rows) rows (`maxRows` \(rows + 1_000)) over `sqlive --rpc`; \(changes) "
                + "one-row UPDATEs by another connection, 100 ms apart; latency from the writer's commit to the "
                + "notification parsed by the client; each side in a server of its own.")
        guard let sqlive = ChildProcess.sqlivePath else {
            table.checks.append("skipped: no sqlive binary next to sqlive-bench")
            return table
        }
        let path = try makeDatabase(
            directory, "big.sqlite",
            """
            CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT, qty INTEGER);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT \(rows))
            INSERT INTO items SELECT i, 'item ' || i, i % 97 FROM n;
            """)
        let writer = try DatabaseQueue(path: path)
        var next = 0
        func side(_ diff: Any) throws -> Side {
            let client = try LSPClient(executable: sqlive, arguments: ["--rpc", path])
            defer { client.stop() }
            _ = try client.response(to: try client.request("initialize", [:]).id)
            let (id, sent) = try client.request(
                "liveQuery/register", ["name": "big", "sql": query, "maxRows": rows + 1_000, "diff": diff])
            let answer = try client.response(to: id)
            guard let result = answer.message["result"] as? [String: Any], (result["total"] as? Int) == rows else {
                throw BenchmarkCheckFailed(description: "register failed: \(answer.message)")
            }
            var side = Side(register: Double(answer.at - sent) / 1e6)
            for _ in 0..<changes {
                next += 1
                let target = next * 7919 % rows + 1
                try writer.write { db in
                    try db.execute(sql: "UPDATE items SET qty = qty + 1 WHERE id = ?", arguments: [target])
                }
                let committed = Monotonic.now()
                let notification = try client.wait("the change of row \(target)") {
                    $0["method"] as? String == "liveQuery/changed"
                }
                side.latency.append(notification.at - committed)
                side.bytes.append(notification.length)
                guard let params = notification.message["params"] as? [String: Any] else { continue }
                if diff as? String == "only" {
                    guard let changes = params["changes"] as? [String: Any],
                        let changed = changes["changed"] as? [[String: Any]], changed.count == 1,
                        let row = changed[0]["row"] as? [Any], (row.first as? Int) == target
                    else { throw BenchmarkCheckFailed(description: "unexpected changes: \(params)") }
                } else if (params["rows"] as? [Any])?.count != rows {
                    throw BenchmarkCheckFailed(description: "a full notification without its \(rows) rows")
                }
                usleep(100_000)
            }
            side.peakMiB = peakResidentMiB(client.process.processIdentifier)
            return side
        }
        let full = try side(false)
        let only = try side("only")
        try writer.close()

        // The query alone: GRDB reading the same rows in this process.
        let queue = try DatabaseQueue(path: path)
        var alone = Samples()
        for _ in 0..<(quick ? 3 : 5) {
            let start = Monotonic.now()
            let count = try await queue.read { db in try Row.fetchAll(db, sql: query).count }
            alone.append(Monotonic.now() - start)
            guard count == rows else { throw BenchmarkCheckFailed(description: "GRDB read \(count) rows") }
        }
        try queue.close()

        let median: ([Int]) -> Double = { values in Double(values.sorted()[values.count / 2]) }
        table.add("bytes per notification (median)", median(only.bytes), anchor: median(full.bytes), "full re-send")
        for (label, p) in [("p50", 50.0), ("p99", 99.0)] {
            table.add(
                "\(label) commit → notification (ms)", only.latency.percentile(p), anchor: full.latency.percentile(p),
                "full re-send")
        }
        table.add(
            "p50 commit → notification (ms)", only.latency.percentile(50), anchor: alone.percentile(50),
            "the query alone (GRDB fetchAll)")
        table.add("register: first answer (ms)", only.register, anchor: full.register, "full re-send")
        if let ours = only.peakMiB, let theirs = full.peakMiB {
            table.add("server peak resident memory (MiB)", ours, anchor: theirs, "full re-send")
        }
        table.checks.append("each changes-only notification named exactly the row written; each full one had all rows")
        return table
    }

    /// A process's peak resident set (`VmHWM`), in MiB.
    static func peakResidentMiB(_ pid: Int32) -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kibibytes = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
        else { return nil }
        return kibibytes / 1024
    }
}
