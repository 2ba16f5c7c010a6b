import Foundation
import SQLiveLocks
import SQLiveProtocol
import SQLiveTestSupport
import Testing

/// The change feed over the real binary: `sqlive FILE --changes` and
/// JSON-RPC's `changes/subscribe`, with the sqlite3 shell at its defaults
/// writing.
@Suite("The change feed, over the real binary", .timeLimit(.minutes(3)))
struct ChangeFeedServerTests {
    static let schema = """
        PRAGMA journal_mode=wal;
        CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, score REAL);
        CREATE TABLE kv(k TEXT PRIMARY KEY, v) WITHOUT ROWID;
        CREATE TABLE other(x);
        """

    /// Collects the lines a child prints, on a thread of its own.
    final class Lines: Sendable {
        private let lines = Locked<[String]>([])

        init(_ child: PipedChild) {
            let lines = lines
            Thread {
                var pending = Data()
                while true {
                    let data = child.read()
                    if data.isEmpty { break }
                    pending += data
                    while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                        let line = String(decoding: pending[..<newline], as: UTF8.self)
                        pending = pending[(newline + 1)...]
                        lines.withLock { $0.append(line) }
                    }
                }
            }.start()
        }

        var all: [String] { lines.withLock { $0 } }

        func wait(_ what: String, until condition: ([String]) -> Bool) async throws {
            let deadline = ContinuousClock.now + .seconds(60)
            while !condition(all) {
                guard ContinuousClock.now < deadline else { throw TimedOut(description: "\(what): \(all)") }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    struct TimedOut: Error, CustomStringConvertible {
        var description: String
    }

    /// Writes with the sqlite3 shell until the feed prints an inserted
    /// row: it reads rows once its page map is built.
    static func warmUp(_ path: String, _ lines: Lines, insert: (Int) -> String) async throws {
        var warmed = false
        for attempt in 0..<100 where !warmed {
            try await SQLite3CLI.run(path, insert(attempt))
            try await Task.sleep(for: .milliseconds(100))
            warmed = lines.all.contains { $0.contains("\"op\":\"insert\"") }
        }
        try #require(warmed, "no row came: \(lines.all)")
    }

    static func parse(_ line: String) throws -> JSONValue {
        try JSONCoding.decode(JSONValue.self, from: Array(line.utf8))
    }

    @Test("sqlive FILE --changes --table t: one JSON line per changed row of the tables named, until interrupted")
    func commandLine() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("feed.sqlite")
        try await SQLite3CLI.run(path, Self.schema)
        let child = try PipedChild(SQLiveBinary.path, [path, "--changes", "--table", "t", "--table", "KV"])
        let lines = Lines(child)
        try await Self.warmUp(path, lines) { "INSERT INTO t(id, name) VALUES (\(1000 + $0), 'warm');" }
        let before = lines.all.count
        try await SQLite3CLI.run(
            path,
            """
            INSERT INTO t VALUES (1, 'ann', 1.5);
            UPDATE t SET score = 2 WHERE id = 1;
            INSERT INTO other VALUES (1);
            INSERT INTO kv VALUES ('a', x'00ff');
            DELETE FROM t WHERE id = 1;
            BEGIN; INSERT INTO t VALUES (5, 'e', 5); INSERT INTO t VALUES (6, 'f', 6); COMMIT;
            """)
        try await lines.wait("six rows") { $0.count >= before + 6 }
        let rows = try lines.all[before...].map(Self.parse)
        #expect(rows.map { $0["op"] } == ["insert", "update", "insert", "delete", "insert", "insert"])
        #expect(rows.map { $0["table"] } == ["t", "t", "kv", "t", "t", "t"])
        // One commit, two lines, each a JSON object of its own.
        #expect(rows[4]["commit"] == rows[5]["commit"] && rows[5]["key"] == ["rowid": 6])
        #expect(rows[0]["key"] == ["rowid": 1])
        #expect(rows[0]["new"] == ["id": 1, "name": "ann", "score": 1.5])
        // A REAL is a JSON number (2.0 is written 2).
        #expect(rows[1]["old"]?["score"]?.doubleValue == 1.5 && rows[1]["new"]?["score"]?.doubleValue == 2)
        #expect(rows[2]["key"] == ["k": "a"] && rows[2]["new"]?["v"] == ["$blob": "AP8="])
        #expect(rows[3]["new"] == .null && rows[3]["old"]?["name"] == "ann")
        // Each commit its own number, in order; every line names its cause.
        let commits = rows.compactMap { $0["commit"]?.integerValue }
        #expect(commits == commits.sorted() && Set(commits).count == 5)
        #expect(rows.allSatisfy { $0["cause"] == "external" })
        child.child.send(SIGINT)
        #expect(await child.child.exit() == 0)
    }

    @Test(
        "Watching with the feed fails no commit of a writer with no busy timeout, and tells every commit",
        arguments: ["wal", "delete"])
    func feedHarmsNoWriter(mode: String) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("harm.sqlite")
        try await SQLite3CLI.run(
            path, "PRAGMA journal_mode=\(mode); CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT, b BLOB);")
        let child = try PipedChild(SQLiveBinary.path, [path, "--changes"])
        let lines = Lines(child)
        try await Self.warmUp(path, lines) { "INSERT INTO t(v) VALUES ('warm \($0)');" }
        let before = lines.all.count
        // 300 commits as fast as the shell makes them, at its defaults (no
        // busy timeout, -bail): one "database is locked" fails the run.
        let script = (1...300).map {
            "INSERT INTO t(id, v, b) VALUES (\(1000 + $0), 'v\($0)', randomblob(\($0 % 7 == 0 ? 5000 : 10)));"
        }
        .joined(separator: "\n")
        try await SQLite3CLI.run(path, script)
        // Every commit is told: its row, or the table unknown for commits read together.
        try await lines.wait("the last commit") { lines in
            lines[before...].contains { $0.contains("\"rowid\":1300}") || $0.contains("\"op\":\"unknown\"") }
        }
        try await Task.sleep(for: .milliseconds(500))
        let rows = try lines.all[before...].map(Self.parse)
        let inserted = rows.filter { $0["op"] == "insert" }.compactMap { $0["key"]?["rowid"]?.integerValue }
        #expect(Set(inserted).count == inserted.count, "a row told twice")
        #expect(inserted.allSatisfy { (1001...1300).contains($0) })
        #expect(rows.allSatisfy { $0["op"] == "insert" || $0["op"] == "unknown" })
        if mode == "wal" { #expect(inserted.count == 300, "WAL: every commit read from the log") }
        child.child.send(SIGINT)
        #expect(await child.child.exit() == 0)
    }

    @Test("changes/subscribe: changes/rows for each commit, until changes/unsubscribe")
    func jsonRPC() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        try await SQLite3CLI.run(path, Self.schema)
        let server = try ServerProcess(arguments: ["db.sqlite"], directory: directory.url)
        _ = try await server.result("initialize", ["capabilities": [:]])
        server.notify("initialized", [:])
        let subscribed = try await server.result("changes/subscribe", ["tables": ["t"]])
        let subscription = try #require(subscribed["subscription"]?.integerValue)
        // Until the feed reads rows.
        func insertArrived() -> Bool {
            server.messages.contains { message in
                message["method"] == "changes/rows"
                    && message["params"]?["rows"]?.arrayValue?.contains { $0["op"] == "insert" } == true
            }
        }
        for attempt in 0..<100 where !insertArrived() {
            try await SQLite3CLI.run(path, "INSERT INTO t(id, name) VALUES (\(1000 + attempt), 'warm');")
            try await Task.sleep(for: .milliseconds(100))
        }
        try #require(insertArrived())
        try await SQLite3CLI.run(path, "INSERT INTO other VALUES (1); UPDATE t SET score = 7 WHERE id = 1000;")
        let update = try await server.notification("changes/rows") { params in
            params["rows"]?.arrayValue?.first?["op"] == "update"
        }
        #expect(update["subscription"]?.integerValue == subscription)
        #expect(update["cause"] == "external")
        #expect(
            update["rows"] == [
                [
                    "table": "t", "op": "update", "key": ["rowid": 1000],
                    "old": ["id": 1000, "name": "warm", "score": .null],
                    "new": ["id": 1000, "name": "warm", "score": 7],
                ]
            ])
        _ = try await server.result("changes/unsubscribe", ["subscription": .integer(Int64(subscription))])
        let again = try await server.error("changes/unsubscribe", ["subscription": .integer(Int64(subscription))])
        #expect(again["code"] == -32602)
    }
}
