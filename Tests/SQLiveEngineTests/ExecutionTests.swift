import Foundation
import SQLiveTestSupport
import Testing

@testable import SQLiveEngine

@Suite("Running SQL", .timeLimit(.minutes(5)))
struct ExecutionTests {
    let directory: TemporaryDirectory
    let database: LiveDatabase

    init() async throws {
        directory = try TemporaryDirectory()
        database = try await LiveDatabase.open(.file(directory.path("exec.sqlite")))
    }

    /// A statement prepared with the schema the session last read is
    /// prepared again by SQLite when its first step finds the schema changed:
    /// its columns are read after that step, as the sqlite3 shell reads
    /// them (a column another process added shows at once), on both ways a
    /// script runs (through GRDB while a live query watches, directly when
    /// none does).
    @Test("SELECT * after another process added a column shows the column", arguments: [false, true])
    func columnsAfterAnotherProcessAltered(watching: Bool) async throws {
        let path = directory.path("exec.sqlite")
        _ = try await database.execute(
            "CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO items VALUES (1, 'a');")
        if watching {
            _ = try await database.directory.register(name: "n", LiveQueryDefinition(sql: "SELECT count(*) FROM items"))
        }
        #expect(try await database.execute("SELECT * FROM items")[0].columns == ["id", "name"])
        try await SQLite3CLI.run(path, "ALTER TABLE items ADD COLUMN note TEXT DEFAULT 'n';")
        let after = try await database.execute("SELECT * FROM items")[0]
        #expect(after.columns == ["id", "name", "note"])
        #expect(Array(after.rows) == [[.integer(1), .text("a"), .text("n")]])
        // An error on the first step is still the statement's own.
        do {
            _ = try await database.execute("SELECT abs(-9223372036854775807 - 1) FROM items")
            Issue.record("abs() of the smallest integer ran")
        } catch {
            #expect("\(error)".contains("integer overflow"), "\(error)")
        }
        await database.close()
    }

    @Test("A script runs in order; each statement has columns, rows, changes and time")
    func script() async throws {
        let results = try await database.execute(
            """
            CREATE TABLE games(id INTEGER PRIMARY KEY, title TEXT NOT NULL);
            INSERT INTO games(title) VALUES ('Family gin rummy'), ('Weekly poker night');
            SELECT id, title FROM games ORDER BY id;
            UPDATE games SET title = upper(title) WHERE id = 2;
            """)
        #expect(results.count == 4)
        #expect(results[0].columns.isEmpty && results[0].changes == 0)
        #expect(results[1].changes == 2)
        #expect(results[2].columns == ["id", "title"])
        #expect(
            results[2].rows == [[.integer(1), .text("Family gin rummy")], [.integer(2), .text("Weekly poker night")]])
        #expect(results[2].changes == 0)
        #expect(results[3].changes == 1)
        #expect(results[3].sql == "UPDATE games SET title = upper(title) WHERE id = 2")
        #expect(results.allSatisfy { $0.elapsed >= .zero })
    }

    @Test("Storage classes stay distinct and 64-bit integers exact")
    func typedValues() async throws {
        let results = try await database.execute(
            "SELECT NULL, 9223372036854775807, -9223372036854775808, 0.5, 'text', x'00FF', 1e300, ''")
        #expect(
            results[0].rows[0] == [
                .null, .integer(.max), .integer(.min), .real(0.5), .text("text"), .blob(Data([0x00, 0xFF])),
                .real(1e300), .text(""),
            ])
    }

    @Test("Positional and named parameters bind")
    func parameters() async throws {
        let positional = try await database.execute(
            "SELECT ? + ?, ?", parameters: .positional([.integer(40), .integer(2), .text("x")]))
        #expect(positional[0].rows == [[.integer(42), .text("x")]])
        let named = try await database.execute(
            "SELECT :a, @b, $c", parameters: .named(["a": .integer(1), "b": .real(2.5), "c": .null]))
        #expect(named[0].rows == [[.integer(1), .real(2.5), .null]])
        let failure = await #expect(throws: ScriptFailure.self) {
            try await database.execute("SELECT ?, ?", parameters: .positional([.integer(1)]))
        }
        #expect(failure?.failure.message.contains("argument") == true)
    }

    @Test("A row limit truncates and says so, without reading the whole result")
    func rowLimit() async throws {
        // A billion rows: reading them all would never finish.
        let results = try await database.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000000) SELECT i FROM n",
            maxRows: 5)
        #expect(results[0].rows == (1...5).map { [.integer(Int64($0))] })
        #expect(results[0].truncated)
        let exact = try await database.execute("SELECT 1 UNION ALL SELECT 2", maxRows: 2)
        #expect(exact[0].truncated == false)
    }

    @Test("An error names the failing statement; statements before it stay applied")
    func errorKeepsEarlierStatements() async throws {
        let failure = await #expect(throws: ScriptFailure.self) {
            try await database.execute(
                """
                CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT UNIQUE);
                INSERT INTO t(name) VALUES ('a');
                INSERT INTO t(name) VALUES ('a');
                INSERT INTO t(name) VALUES ('b');
                """)
        }
        let error = try #require(failure)
        #expect(error.completed.count == 2)
        #expect(error.failure.statementIndex == 2)
        #expect(error.failure.code == 19)  // SQLITE_CONSTRAINT
        #expect(error.failure.extendedCode == 2067)  // SQLITE_CONSTRAINT_UNIQUE
        #expect(error.failure.message.contains("UNIQUE constraint failed: t.name"))
        let rows = try await database.execute("SELECT name FROM t")[0].rows
        #expect(rows == [[.text("a")]])
    }

    @Test("A syntax error says where SQLite located it in the script")
    func syntaxErrorOffset() async throws {
        let script = "SELECT 1;\nSELECT * FROM sqlite_master WHERE;\nSELECT 3;"
        let failure = await #expect(throws: ScriptFailure.self) {
            try await database.execute(script)
        }
        let error = try #require(failure?.failure)
        #expect(error.statementIndex == 1)
        #expect(error.message.contains("syntax error"))
        let offset = try #require(error.offset)
        let utf8 = Array(script.utf8)
        #expect(String(decoding: utf8[offset...].prefix(1), as: UTF8.self) == ";")
        #expect(failure?.completed.count == 1)
    }

    @Test("An unknown table is an error with SQLite's codes")
    func noSuchTable() async throws {
        let failure = await #expect(throws: ScriptFailure.self) {
            try await database.execute("SELECT * FROM nowhere")
        }
        #expect(failure?.failure.code == 1)
        #expect(failure?.failure.message == "no such table: nowhere")
    }

    @Test("Transactions span calls, as in the sqlite3 shell")
    func transactionAcrossCalls() async throws {
        _ = try await database.execute("CREATE TABLE t(x); BEGIN; INSERT INTO t VALUES (1);")
        _ = try await database.execute("ROLLBACK")
        #expect(try await database.execute("SELECT count(*) FROM t")[0].rows == [[.integer(0)]])
    }

    @Test("Streaming execution hands rows to a consumer one by one")
    func streaming() async throws {
        struct Counter: ResultConsumer {
            var headers: [StatementHeader] = []
            var rows = 0
            var summaries: [StatementSummary] = []
            mutating func statementDidStart(_ header: StatementHeader) { headers.append(header) }
            mutating func consume(row: StatementRow) { rows += 1 }
            mutating func statementDidFinish(_ summary: StatementSummary) { summaries.append(summary) }
        }
        let database = database
        let counter = try await Task.detached {
            var counter = Counter()
            try database.run(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000) SELECT i FROM n; SELECT 1",
                consumer: &counter)
            return counter
        }.value
        #expect(counter.headers.map(\.columns) == [["i"], ["1"]])
        #expect(counter.rows == 100_001)
        #expect(counter.summaries.map(\.rowCount) == [100_000, 1])
    }

    @Test("A running statement can be interrupted; the database stays usable")
    func interrupt() async throws {
        let database = database
        let long = Task {
            try await database.execute(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n")
        }
        try await Task.sleep(for: .milliseconds(300))
        database.interrupt()
        let result = await long.result
        guard case .failure(let error) = result, let failure = error as? ScriptFailure else {
            Issue.record("the long query was not interrupted: \(result)")
            return
        }
        #expect(failure.failure.isInterrupted)
        #expect(failure.failure.message == "interrupted")
        #expect(try await database.execute("SELECT 1")[0].rows == [[.integer(1)]])
    }

    @Test("Cancelling the task interrupts its statement")
    func cancellation() async throws {
        let database = database
        let long = Task {
            try await database.execute(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n")
        }
        try await Task.sleep(for: .milliseconds(300))
        long.cancel()
        let result = await long.result
        guard case .failure(let error) = result, let failure = error as? ScriptFailure else {
            Issue.record("the long query was not cancelled: \(result)")
            return
        }
        #expect(failure.failure.isInterrupted)
        #expect(try await database.execute("SELECT 2")[0].rows == [[.integer(2)]])
    }

    @Test("REALs print exactly as the sqlite3 shell prints them")
    func realFormatting() async throws {
        let sql = "SELECT 1.0, 0.5, 1e20, 1e300, 1.0/3, -0.0, 123456789012345.0, 1e15, 1e-5, 0.0001, 2.5e-7"
        let values = try await database.execute(sql)[0].rows[0]
        let shell = try await SQLite3CLI.run(":memory:", ".mode list\n" + sql + ";")
        #expect(values.map(\.description).joined(separator: "|") + "\n" == shell)
    }

    @Test("sqlite3_complete tells complete statements")
    func completeness() {
        #expect(SQLStatementCompleteness.isComplete("SELECT 1;"))
        #expect(!SQLStatementCompleteness.isComplete("SELECT 1"))
        #expect(!SQLStatementCompleteness.isComplete("SELECT ';"))
        #expect(!SQLStatementCompleteness.isComplete("CREATE TRIGGER t AFTER INSERT ON a BEGIN SELECT 1;"))
    }
}
