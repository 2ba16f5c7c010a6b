import Foundation
import SQLiveTestSupport
import Testing

@testable import SQLiveEngine

@Suite("Changes only: RowChanges", .timeLimit(.minutes(5)))
struct RowChangesTests {
    private func row(_ id: Int, _ value: String) -> [SQLValue] { [.integer(Int64(id)), .text(value)] }

    @Test("A one-row change in a long result is one changed row, keyed")
    func oneRowChange() {
        let old = (0..<100_000).map { row($0, "v\($0)") }
        var new = old
        new[54_321] = row(54_321, "changed")
        let changes = RowChanges(from: old, to: new, keyColumns: [0])
        #expect(changes.keyColumns == [0])
        #expect(changes.removed.isEmpty && changes.added.isEmpty)
        #expect(changes.changed == [.init(from: 54_321, at: 54_321, row: row(54_321, "changed"))])
        #expect(changes.apply(to: old) == new)
    }

    @Test("Inserted and deleted rows keep their positions; a moved row is changed")
    func positions() {
        let old = [row(1, "a"), row(2, "b"), row(3, "c"), row(4, "d")]
        let new = [row(4, "d"), row(1, "a"), row(5, "e"), row(3, "c")]
        let changes = RowChanges(from: old, to: new, keyColumns: [0])
        #expect(changes.removed.map(\.from) == [1])
        #expect(changes.added.map(\.at) == [2])
        #expect(changes.changed.count == 1)
        #expect(changes.apply(to: old) == new)
        #expect(RowChanges(from: old, to: old, keyColumns: [0]).isEmpty)
    }

    @Test("Repeated keys or no key: rows are matched by content")
    func contentMatching() {
        let old = [row(1, "a"), row(1, "b"), row(2, "c")]
        let new = [row(1, "b"), row(1, "a"), row(2, "c"), row(2, "c")]
        let keyed = RowChanges(from: old, to: new, keyColumns: [0])
        #expect(keyed.keyColumns == nil)
        #expect(keyed.apply(to: old) == new)
        let unkeyed = RowChanges(from: old, to: new)
        #expect(unkeyed.apply(to: old) == new)
        #expect(unkeyed.added.map(\.row) == [row(2, "c")])
    }

    @Test("Seeded random edits: applying the changes always gives the new rows, and they are few")
    func randomized() {
        var random = SeededRandom(seed: 31)
        for round in 0..<2_000 {
            let count = Int.random(in: 0..<40, using: &random)
            var nextID = 0
            let old: [[SQLValue]] = (0..<count).map { _ in
                nextID += 1
                return row(nextID, ["a", "b", "c"].randomElement(using: &random)!)
            }
            var new = old
            for _ in 0..<Int.random(in: 0..<5, using: &random) {
                switch Int.random(in: 0..<4, using: &random) {
                case 0 where !new.isEmpty: new.remove(at: Int.random(in: 0..<new.count, using: &random))
                case 1:
                    nextID += 1
                    new.insert(row(nextID, "n"), at: Int.random(in: 0...new.count, using: &random))
                case 2 where !new.isEmpty:
                    let index = Int.random(in: 0..<new.count, using: &random)
                    new[index][1] = .text("x\(round)")
                case 3 where new.count > 1:
                    let moved = new.remove(at: Int.random(in: 0..<new.count, using: &random))
                    new.insert(moved, at: Int.random(in: 0...new.count, using: &random))
                default: break
                }
            }
            // Duplicate rows now and then: no usable key.
            if round % 7 == 0, let first = new.first { new.append(first) }
            for key in [[0], nil] as [[Int]?] {
                let changes = RowChanges(from: old, to: new, keyColumns: key)
                #expect(changes.apply(to: old) == new, "round \(round), key \(String(describing: key))")
                #expect(changes.removed.count + changes.changed.count <= old.count)
                #expect(changes.added.count + changes.changed.count <= new.count)
            }
        }
    }

    @Test("The longest increasing run is found")
    func longestIncreasing() {
        let values = [5, 1, 6, 2, 7, 3, 8]
        let indexes = RowChanges.longestIncreasing(values)
        #expect(indexes.map { values[$0] } == [1, 2, 3, 8])
    }
}

@Suite("Changes only: live queries", .timeLimit(.minutes(5)))
struct ChangesOnlyLiveTests {
    @Test(
        "A changes-only live query delivers what another process changed, keyed by its primary key",
        arguments: JournalMode.allCases)
    func keyedByPrimaryKey(mode: JournalMode) async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(
            in: directory, mode: mode,
            """
            CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT, qty INTEGER);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 20000)
            INSERT INTO items SELECT i, 'item ' || i, i % 7 FROM n;
            """)
        let database = try await LiveDatabase.open(.file(path))
        let recorder = EventRecorder(database)
        let snapshot = try await database.directory.register(
            name: "items", LiveQueryDefinition(sql: "SELECT name, qty, id FROM items ORDER BY id", maxRows: 50_000),
            delivery: .changesOnly)
        #expect(snapshot.result.rows.count == 20_000)
        #expect(!snapshot.result.truncated)
        try await SQLite3CLI.run(
            path, "UPDATE items SET qty = 100 WHERE id = 777; DELETE FROM items WHERE id = 5;")
        try await recorder.wait("a change") { _ in !recorder.changes("items").isEmpty }
        // Both statements may come as one change or as two: apply them all.
        var rows = Array(snapshot.result.rows)
        for change in recorder.changes("items") {
            let changes = try #require(change.changes)
            #expect(change.delivery == .changesOnly)
            #expect(changes.keyColumns == [2])
            rows = changes.apply(to: rows)
        }
        try await recorder.wait("both writes") { _ in
            recorder.changes("items").last?.result.total == 19_999
        }
        rows = Array(snapshot.result.rows)
        for change in recorder.changes("items") { rows = change.changes!.apply(to: rows) }
        #expect(rows == (try await database.rows("SELECT name, qty, id FROM items ORDER BY id")))
        let all = recorder.changes("items").compactMap(\.changes)
        #expect(all.flatMap(\.changed).map(\.row) == [[.text("item 777"), .integer(100), .integer(777)]])
        #expect(all.flatMap(\.removed).map { $0.row[2] } == [.integer(5)])
        await database.close()
    }

    @Test("A query without a key is matched by content; a rowid selected is a key; rows queries carry no changes")
    func keys() async throws {
        let database = try await LiveDatabase.open(.memory)
        _ = try await database.execute(
            "CREATE TABLE t(a, b); INSERT INTO t VALUES (1, 'x'), (2, 'y'); CREATE TABLE k(a TEXT, b, PRIMARY KEY (a, b)) WITHOUT ROWID; INSERT INTO k VALUES ('p', 1)"
        )
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(
            name: "content", LiveQueryDefinition(sql: "SELECT a, b FROM t"), delivery: .changesOnly)
        _ = try await database.directory.register(
            name: "rowid", LiveQueryDefinition(sql: "SELECT b, rowid FROM t"), delivery: .changesOnly)
        _ = try await database.directory.register(
            name: "composite", LiveQueryDefinition(sql: "SELECT b, 'k', a FROM k"), delivery: .changesOnly)
        _ = try await database.directory.register(name: "plain", LiveQueryDefinition(sql: "SELECT a, b FROM t"))
        _ = try await database.execute("UPDATE t SET b = 'z' WHERE a = 2; INSERT INTO k VALUES ('q', 2)")
        try await recorder.wait("four changes") { _ in
            ["content", "rowid", "composite", "plain"].allSatisfy { !recorder.changes($0).isEmpty }
        }
        let content = try #require(recorder.changes("content").last?.changes)
        #expect(content.keyColumns == nil)
        #expect(content.removed.map(\.row) == [[.integer(2), .text("y")]])
        #expect(content.added.map(\.row) == [[.integer(2), .text("z")]])
        let rowid = try #require(recorder.changes("rowid").last?.changes)
        #expect(rowid.keyColumns == [1])
        #expect(rowid.changed.map(\.row) == [[.text("z"), .integer(2)]])
        #expect(recorder.changes("composite").last?.changes?.keyColumns == [0, 2])
        #expect(recorder.changes("plain").last?.changes == nil)
        let list = await database.directory.list()
        #expect(list.first { $0.name == "content" }?.delivery == .changesOnly)
        await database.close()
    }

    @Test("maxRows lowers and raises the cap per query; below 1 is refused")
    func maxRows() async throws {
        let database = try await LiveDatabase.open(.memory)
        let sql = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 30000) SELECT i FROM n"
        let low = try await database.directory.register(name: "low", LiveQueryDefinition(sql: sql, maxRows: 5))
        let high = try await database.directory.register(name: "high", LiveQueryDefinition(sql: sql, maxRows: 40_000))
        #expect(low.result.rows.count == 5 && low.result.truncated && low.result.total == 30_000)
        #expect(high.result.rows.count == 30_000 && !high.result.truncated)
        await #expect(throws: SQLiveError.self) {
            try await database.directory.register(name: "zero", LiveQueryDefinition(sql: sql, maxRows: 0))
        }
        await database.close()
    }
}

@Suite("Flat costs: the tables of a region", .timeLimit(.minutes(5)))
struct RegionTablesTests {
    @Test("A region's tables are read from it, and a name it cannot read for sure falls back to the schema")
    func namedTables() async throws {
        let database = try await LiveDatabase.open(.memory)
        _ = try await database.execute(
            """
            CREATE TABLE players(id INTEGER PRIMARY KEY, name, score);
            CREATE TABLE "odd (name), [x]"(a);
            CREATE TABLE "Mixed"(b);
            CREATE VIEW v AS SELECT name FROM players;
            """)
        let list = await database.directory.list()
        #expect(list.isEmpty)
        for (sql, tables) in [
            ("SELECT name FROM v", ["players", "v"]),
            ("SELECT * FROM players JOIN Mixed", ["Mixed", "players"]),
            ("SELECT a FROM \"odd (name), [x]\", players", ["odd (name), [x]", "players"]),
            ("SELECT 1", []),
            ("SELECT count(*) FROM sqlite_schema", []),
        ] {
            let snapshot = try await database.directory.register(name: sql, LiveQueryDefinition(sql: sql))
            #expect(snapshot.tables == tables, "\(sql)")
        }
        await database.close()
    }
}
