import Foundation
import SQLiveTestSupport
import Testing

@testable import SQLiveEngine

@Suite("Confined reader (statements an agent sends)", .timeLimit(.minutes(2)))
struct ConfinedReaderTests {
    /// Statements that would change the file, another file, or the
    /// connection, each of which must be refused by SQLite.
    /// (Files they name are in `directory`, given by the test.)
    static func attempts(in directory: String) -> [String] {
        attemptTemplates.map { $0.replacingOccurrences(of: "DIR/", with: directory + "/") }
    }

    static let attemptTemplates = [
        "INSERT INTO t VALUES (9)",
        "WITH x AS (SELECT 1) DELETE FROM t",
        "DELETE FROM t RETURNING *",
        "UPDATE t SET x = x + 1",
        "REPLACE INTO t VALUES (1)",
        "CREATE TABLE u(a)",
        "CREATE TEMP TABLE u(a)",
        "CREATE VIEW v AS SELECT 1",
        "DROP TABLE t",
        "ALTER TABLE t ADD COLUMN y",
        "UPDATE sqlite_schema SET sql = 'CREATE TABLE t(z)' WHERE name = 't'",
        "PRAGMA journal_mode = WAL",
        "PRAGMA journal_mode = DELETE",
        "PRAGMA writable_schema = ON",
        "PRAGMA user_version = 5",
        "PRAGMA wal_checkpoint(TRUNCATE)",
        "PRAGMA query_only = OFF",
        "PRAGMA trusted_schema = ON",
        "PRAGMA locking_mode = EXCLUSIVE",
        "PRAGMA soft_heap_limit = 1",
        "PRAGMA hard_heap_limit = 1",
        "PRAGMA cache_size = 1",
        "PRAGMA mmap_size = 0",
        "PRAGMA busy_timeout = 60000",
        "PRAGMA temp_store = MEMORY",
        "PRAGMA case_sensitive_like = ON",
        "PRAGMA reverse_unordered_selects = ON",
        "PRAGMA automatic_index = OFF",
        "PRAGMA threads = 8",
        "PRAGMA optimize",
        "PRAGMA shrink_memory",
        "ATTACH 'DIR/evil.sqlite' AS evil",
        "ATTACH ':memory:' AS scratch",
        "VACUUM INTO 'DIR/copy.sqlite'",
        "VACUUM",
        "REINDEX",
        "ANALYZE",
        "SELECT load_extension('libc.so.6')",
        "BEGIN IMMEDIATE",
        "SAVEPOINT s",
        "SELECT 1; DELETE FROM t",
        "SELECT 1; ATTACH 'DIR/evil.sqlite' AS evil",
    ]

    /// A database in `mode`, its directory, and what must not change.
    struct Fixture {
        let directory: TemporaryDirectory
        let path: String

        init(mode: String) async throws {
            directory = try TemporaryDirectory()
            path = directory.path("db.sqlite")
            try await sqlite3(
                path,
                "PRAGMA journal_mode=\(mode); CREATE TABLE t(x); INSERT INTO t VALUES (1), (2), (3); "
                    + "CREATE INDEX tx ON t(x); CREATE TABLE big(b); INSERT INTO big VALUES (zeroblob(100000));")
        }

        var bytes: Data { FileManager.default.contents(atPath: path) ?? Data() }
        var names: [String] {
            (try? FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()) ?? []
        }
    }

    @Test("Nothing that writes runs, and the file is unchanged", arguments: ["delete", "wal"])
    func refused(mode: String) async throws {
        let fixture = try await Fixture(mode: mode)
        let reader = try ConfinedReader(path: fixture.path)
        let (bytes, names) = (fixture.bytes, fixture.names)
        for sql in Self.attempts(in: fixture.directory.url.path) {
            switch Result(catching: { () throws(SQLiveError) in try reader.run(sql) }) {
            case .success(.rows(let rows)):
                Issue.record("ran: \(sql) → \(rows.rows)")
            case .success(.writes), .failure:
                break
            }
            #expect(fixture.bytes == bytes, "\(sql) changed the file")
            #expect(fixture.names == names, "\(sql) made or removed a file")
        }
        // And the connection still reads.
        guard case .rows(let rows) = try reader.run("SELECT count(*) FROM t") else {
            Issue.record("no rows")
            return
        }
        #expect(rows.rows == [[.integer(3)]])
    }

    @Test("SQLite's own refusals: not authorized, one statement per call")
    func messages() async throws {
        let fixture = try await Fixture(mode: "delete")
        let reader = try ConfinedReader(path: fixture.path)
        for sql in ["ATTACH 'evil.sqlite' AS evil", "PRAGMA writable_schema = ON", "SELECT load_extension('x')"] {
            #expect {
                try reader.run(sql)
            } throws: { error in
                (error as? SQLiveError)?.sqliteFailure?.message.hasPrefix("not authorized") == true
            }
        }
        #expect(throws: SQLiveError.invalidSQL("holds more than one statement: send one per call", offset: 10)) {
            try reader.run("SELECT 1; DELETE FROM t")
        }
        #expect(try reader.run("DELETE FROM t") == .writes)
    }

    @Test("CTEs, EXPLAIN, read-only PRAGMAs and parameters work")
    func reads() async throws {
        let fixture = try await Fixture(mode: "wal")
        let reader = try ConfinedReader(path: fixture.path)
        func rows(_ sql: String, _ parameters: QueryParameters = .none) throws -> [[SQLValue]] {
            guard case .rows(let rows) = try reader.run(sql, parameters: parameters) else { return [] }
            return rows.rows
        }
        #expect(try rows("WITH c AS (SELECT x FROM t WHERE x > 1) SELECT sum(x) FROM c") == [[.integer(5)]])
        #expect(try rows("EXPLAIN QUERY PLAN SELECT * FROM t").count == 1)
        #expect(try rows("EXPLAIN SELECT 1").count > 1)
        // SQLite counts `PRAGMA journal_mode` as a statement that may write.
        #expect(try reader.run("PRAGMA journal_mode") == .writes)
        #expect(try rows("PRAGMA page_count") != [])
        #expect(try rows("PRAGMA table_info(t)").count == 1)
        #expect(try rows("SELECT name FROM pragma_table_list WHERE name = 't'") == [[.text("t")]])
        #expect(try rows("PRAGMA user_version") == [[.integer(0)]])
        #expect(try rows("SELECT x FROM t WHERE x = ?", .positional([.integer(2)])) == [[.integer(2)]])
        #expect(try rows("SELECT x FROM t WHERE x = :x", .named(["x": .integer(3)])) == [[.integer(3)]])
        #expect(try rows("SELECT 1; -- a comment after is fine") == [[.integer(1)]])
    }

    @Test("The row cap, the size cap and the time limit")
    func limits() async throws {
        let fixture = try await Fixture(mode: "delete")
        let reader = try ConfinedReader(path: fixture.path)
        guard
            case .rows(let many) = try reader.run(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n",
                limits: .init(rows: 50))
        else { throw CancellationError() }
        #expect(many.rows.count == 50)
        #expect(many.truncated == .rows)
        guard
            case .rows(let heavy) = try reader.run(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT printf('%.1000c', 'x') FROM n",
                limits: .init(rows: 1_000_000, bytes: 100_000))
        else { throw CancellationError() }
        #expect(heavy.truncated == .bytes)
        #expect(heavy.rows.count == 100)
        // One value over the cap: SQLite refuses to make it.
        #expect {
            try reader.run("SELECT b FROM big", limits: .init(bytes: 10_000))
        } throws: { error in
            (error as? SQLiveError)?.sqliteFailure?.code == 18
                && (error as? SQLiveError)?.sqliteFailure?.message.contains("size cap") == true
        }
        // A statement that never ends is interrupted at the time limit.
        let start = ContinuousClock.now
        #expect {
            try reader.run(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n",
                limits: .init(time: .milliseconds(300)))
        } throws: { error in
            (error as? SQLiveError)?.sqliteFailure?.code == 9
        }
        #expect(ContinuousClock.now - start < .seconds(30))
        // And the reader goes on.
        #expect(try reader.run("SELECT count(*) FROM t") != .writes)
    }

    /// An interrupt that comes before the statement's first step (an agent
    /// cancels a call still waiting for a reader) is not lost, as
    /// `sqlite3_interrupt`'s alone would be: the statement, which would run
    /// an hour, fails "interrupted" at once; the next call runs.
    @Test("An interrupt before the statement starts stops it; the next call is not touched")
    func interruptBeforeTheStatement() async throws {
        let fixture = try await Fixture(mode: "wal")
        let readers = ConfinedReaderPool(
            capacity: 1, first: try ConfinedReader(path: fixture.path)
        ) { () throws(SQLiveError) in try ConfinedReader(path: fixture.path) }
        let runaway = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"
        #expect {
            try readers.withReader { reader throws(SQLiveError) in
                reader.interrupt()
                return try reader.run(runaway, limits: .init(time: .seconds(3600)))
            }
        } throws: { error in
            (error as? SQLiveError)?.sqliteFailure?.code == 9
        }
        let next = try readers.withReader { reader throws(SQLiveError) in try reader.run("SELECT count(*) FROM t") }
        #expect(next != .writes)
    }

    /// A file replaced at the path: the pool's idle readers of the old one
    /// are dropped, and the next call reads the new file.
    @Test("A pool reads the file the path leads to, after a replacement")
    func poolFollowsAReplacedFile() async throws {
        let fixture = try await Fixture(mode: "delete")
        let readers = ConfinedReaderPool(
            capacity: 2, first: try ConfinedReader(path: fixture.path), path: fixture.path
        ) { () throws(SQLiveError) in try ConfinedReader(path: fixture.path) }
        let other = fixture.path + ".new"
        try await SQLite3CLI.run(other, "CREATE TABLE replaced(x); INSERT INTO replaced VALUES (42);")
        #expect(rename(other, fixture.path) == 0)
        let outcome = try readers.withReader { reader throws(SQLiveError) in
            try reader.run("SELECT x FROM replaced")
        }
        guard case .rows(let rows) = outcome else {
            Issue.record("no rows")
            return
        }
        #expect(rows.rows == [[.integer(42)]])
        #expect(readers.openCount == 1)
    }
}
