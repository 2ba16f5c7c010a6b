import Foundation
import GRDBSQLite
import SQLiveTestSupport

@testable import SQLiveEngine

/// A WAL-precision tracker read in lockstep with a real second process.
///
/// The writer is Python's `sqlite3` module at its defaults (synchronous,
/// secure-delete and checkpointing as Debian builds them; `pragmas` may
/// change them). After each step the test reads the tracker and compares
/// its answer with the truth: the tables whose content hash changed.
///
/// `@unchecked Sendable`: one test drives it, one call at a time (each
/// awaited), so its state is never touched from two threads at once; the
/// async calls only move the wait to a thread of its own.
final class WALLockstep: @unchecked Sendable {
    let directory: TemporaryDirectory
    let path: String
    /// The python writer (started by the `Launcher`: Foundation's
    /// `Process.run` crashed in its `memcpy` under the parallel suite).
    private let writer: PipedChild
    private var connection: OpaquePointer?
    private(set) var tracker: WALChangeTracker!
    /// The content hash of every table after the last step.
    private(set) var hashes: [String: String] = [:]

    /// The writer: each request is a JSON line — a list of transactions,
    /// each a list of statements (or one `PRAGMA`/`VACUUM` run alone) —
    /// answered by the content hash of every table.
    private static let writer = """
        import sqlite3, sys, json, hashlib, re
        connection = sqlite3.connect(sys.argv[1], isolation_level=None)
        # generate_series is the sqlite3 shell's, not the library's.
        def series(sql):
            return re.sub(r"generate_series\\(1, (\\d+)\\)", r"(SELECT value FROM numbers WHERE value <= \\1)", sql)
        def hashes():
            result = {}
            tables = [r[0] for r in connection.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")]
            for table in tables:
                h = hashlib.sha1()
                for row in connection.execute('SELECT * FROM "%s" ORDER BY 1' % table):
                    h.update(repr(row).encode())
                result[table.lower()] = h.hexdigest()
            return result
        for line in sys.stdin:
            request = json.loads(line)
            if request == "quit":
                break
            for transaction in request:
                if len(transaction) == 1 and transaction[0].upper().startswith(("PRAGMA", "VACUUM")):
                    connection.execute(transaction[0]).fetchall()
                    continue
                connection.execute("BEGIN")
                for statement in transaction:
                    connection.execute(series(statement))
                connection.execute("COMMIT")
            print(json.dumps(hashes()), flush=True)
        """

    init(schema: [String], pragmas: [String] = []) throws {
        directory = try TemporaryDirectory()
        path = directory.path("wal.sqlite")
        writer = try PipedChild("/usr/bin/env", ["python3", "-u", "-c", Self.writer, path])
        for pragma in ["PRAGMA journal_mode=WAL"] + pragmas { try send([[pragma]]) }
        try send([
            [
                "CREATE TABLE numbers(value INTEGER PRIMARY KEY)",
                "INSERT INTO numbers WITH RECURSIVE s(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM s WHERE v < 10000) SELECT v FROM s",
            ] + schema
        ])

        // The watcher's connection: read-only, its own.
        guard sqlite3_open_v2(path, &connection, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK
        else { throw LockstepFailure("cannot open \(path)") }
        tracker = WALChangeTracker(path: path, storage: WALStorage(connection: connection!))
        _ = dataVersion()
        tracker.start()
        _ = dataVersion()
        waitForMapBlocking()
    }

    deinit {
        tracker?.stop()
        writer.write("\"quit\"\n")
        // The writer ends on "quit" and its end of input; not waited for:
        // a deinit may run on the pool, which the launch needs to end
        // (see `Launcher`).
        writer.closeInput()
        sqlite3_close_v2(connection)
    }

    /// `PRAGMA data_version` on the watcher's connection (it opens the WAL and maps the wal-index).
    @discardableResult
    func dataVersion() -> Int64 {
        var statement: OpaquePointer?
        sqlite3_prepare_v2(connection, "PRAGMA data_version", -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        return sqlite3_step(statement) == SQLITE_ROW ? sqlite3_column_int64(statement, 0) : -1
    }

    /// Runs transactions in the writer; returns the tables whose content changed.
    @discardableResult
    func send(_ transactions: [[String]]) throws -> Set<String> {
        try sendBlocking(transactions)
    }

    /// `send`, waiting for the writer on a thread of its own: a test's
    /// wait must not hold one of Swift concurrency's few pool threads (on
    /// two cores, other suites' tasks starved behind these tests).
    @discardableResult
    func send(_ transactions: [[String]]) async throws -> Set<String> {
        try await onOwnThread { [self] in try sendBlocking(transactions) }
    }

    private func sendBlocking(_ transactions: [[String]]) throws -> Set<String> {
        let data = try JSONSerialization.data(withJSONObject: transactions)
        writer.write(String(decoding: data, as: UTF8.self) + "\n")
        var received = Data()
        while !received.contains(UInt8(ascii: "\n")) {
            let chunk = writer.read()
            guard !chunk.isEmpty else { throw LockstepFailure("the python writer ended") }
            received += chunk
        }
        let new = try JSONSerialization.jsonObject(with: received) as! [String: String]
        let old = hashes
        hashes = new
        return Set(Set(new.keys).union(old.keys).filter { new[$0] != old[$0] })
    }

    /// Reads the tracker, as the watcher does after a data version change.
    func read() -> WALChangeTracker.Changes {
        dataVersion()
        return tracker.read()
    }

    /// Waits until a requested map is built and installed.
    func waitForMap() async {
        _ = try? await onOwnThread { [self] in waitForMapBlocking() }
    }

    func waitForMapBlocking() {
        let deadline = Date().addingTimeInterval(30)
        while tracker.map == nil, Date() < deadline {
            while tracker.builder.isRunning, Date() < deadline { usleep(1000) }
            _ = read()
            if tracker.map == nil { usleep(2000) }
        }
    }

    /// The pages whose owner in the maintained map differs from a fresh
    /// `dbstat` map's (b-tree and overflow pages by owner name), and the
    /// free pages the maintained map still gives an owner (freed without
    /// being written: harmless, a refresh too many at most).
    func compareMap() throws -> (wrong: [String], stale: Int) {
        guard let map = tracker.map else { return (["no map"], 0) }
        let fresh = try PageMapBuilder(path: path).build()
        var wrong: [String] = []
        var stale = 0
        if fresh.pageCount != map.pageCount { wrong.append("page count \(map.pageCount), dbstat \(fresh.pageCount)") }
        for page in 1...UInt32(max(fresh.pageCount, 1)) {
            let truth = fresh.role(of: page)
            let kept = map.role(of: page)
            switch truth {
            case .btree, .overflow:
                let same: Bool
                switch (truth, kept) {
                case (.btree(let a), .btree(let b)), (.overflow(let a), .overflow(let b)):
                    same = fresh.owners[Int(a)].name == map.owners[Int(b)].name
                default:
                    same = false
                }
                if !same { wrong.append("page \(page): \(describe(kept, map)), dbstat \(describe(truth, fresh))") }
            case .free:
                if kept != .free { stale += 1 }
            default:
                if kept != truth {
                    wrong.append("page \(page): \(describe(kept, map)), dbstat \(describe(truth, fresh))")
                }
            }
        }
        return (wrong, stale)
    }

    private func describe(_ role: PageMap.Role, _ map: PageMap) -> String {
        switch role {
        case .btree(let owner): "b-tree \(map.owners[Int(owner)].name)"
        case .overflow(let owner): "overflow \(map.owners[Int(owner)].name)"
        default: "\(role)"
        }
    }
}

struct LockstepFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
