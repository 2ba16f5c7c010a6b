import Foundation
import SQLiveProtocol
import SQLiveRPC
import SQLiveTestSupport
import Testing

/// Requests whose SQL, params or names cannot run as given: each is a
/// -32602 naming the field, nothing runs, and the server goes on.
@Suite("Server: input checked before anything runs", .timeLimit(.minutes(2)))
struct ServerInputCheckTests {
    func count(_ server: ServerProcess) async throws -> JSONValue? {
        try await server.result("query/execute", ["sql": "SELECT count(*) FROM t"])["results"]?[0]?["rows"]
    }

    @Test("SQL holding a NUL byte is -32602 naming its offset, and no part of it runs")
    func nulInSQL() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(database: "db.sqlite", directory: directory.url)
        _ = try await server.result("query/execute", ["sql": "CREATE TABLE t(a)"])
        let error = try await server.error("query/execute", ["sql": "INSERT INTO t VALUES (1)\u{0}; DELETE FROM t"])
        #expect(error["code"] == -32602)
        #expect(error["data"]?["field"] == "sql")
        #expect(error["data"]?["offset"] == 24)
        #expect(error["message"]?.stringValue?.contains("NUL byte at offset 24") == true)
        #expect(try await count(server) == [[0]])
        for (method, params) in [
            ("liveQuery/register", ["name": "q", "sql": "SELECT 1\u{0}"] as JSONValue),
            ("explain", ["sql": "SELECT\u{0} 1"]),
        ] {
            let error = try await server.error(method, params)
            #expect(error["code"] == -32602, "\(method)")
            #expect(error["data"]?["field"] == "sql", "\(method)")
        }
        _ = try await server.result("liveQuery/register", ["name": "q", "sql": "SELECT 1"])
        let update = try await server.error("liveQuery/update", ["name": "q", "sql": "SELECT 2\u{0}"])
        #expect(update["code"] == -32602)
    }

    @Test("Params that do not match the SQL are -32602 naming params, before any statement runs")
    func mismatchedParams() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(database: "db.sqlite", directory: directory.url)
        _ = try await server.result("query/execute", ["sql": "CREATE TABLE t(a, b)"])
        let cases: [(JSONValue, String)] = [
            (["sql": "INSERT INTO t VALUES (?, 2)", "params": [1, 2]], "2 values given for 1 parameter"),
            (["sql": "INSERT INTO t VALUES (?, ?)", "params": [1]], "1 value given for 2 parameters"),
            (["sql": "INSERT INTO t VALUES (1, 2); INSERT INTO t VALUES (?, 3)", "params": [1, 2]], "2 values"),
            (["sql": "INSERT INTO t VALUES (?, ?)", "params": []], "no value given for 2 parameters"),
            (["sql": "INSERT INTO t VALUES (1, 2); INSERT INTO t VALUES (?, 3)"], "no value given for 1 parameter"),
            (["sql": "INSERT INTO t VALUES (:a, :b)", "params": ["a": 1]], "no value given for :b"),
            (["sql": "INSERT INTO t VALUES (:a, 1)", "params": ["a": 1, "c": 2]], ":c, which the SQL does not use"),
            (["sql": "INSERT INTO t VALUES (?, 1)", "params": ["a": 1]], "give them in an array"),
        ]
        for (params, message) in cases {
            let error = try await server.error("query/execute", params)
            #expect(error["code"] == -32602, "\(params)")
            #expect(error["data"]?["field"] == "params", "\(params)")
            #expect(error["message"]?.stringValue?.contains(message) == true, "\(error)")
        }
        #expect(try await count(server) == [[0]])
        // What matches runs: numbered, named (with or without a prefix), repeated names, literals that look like parameters.
        let fine: [JSONValue] = [
            ["sql": "INSERT INTO t VALUES (?1, ?1); INSERT INTO t VALUES (?, '?')", "params": [1, 2]],
            ["sql": "INSERT INTO t VALUES (:a, @a) -- :c", "params": [":a": 3]],
            ["sql": "INSERT INTO t VALUES ($a, ':b')", "params": ["a": 4]],
            ["sql": "INSERT INTO t VALUES (:a, @a); /* ? */", "params": [5, 5]],
        ]
        for params in fine {
            _ = try await server.result("query/execute", params)
        }
        #expect(try await count(server) == [[5]])
        // A live query: one statement, its parameters as SQLite prepared them.
        let live = try await server.error("liveQuery/register", ["name": "q", "sql": "SELECT ?", "params": [1, 2]])
        #expect(live["code"] == -32602)
        #expect(live["data"]?["field"] == "params")
        let registered = try await server.result(
            "liveQuery/register", ["name": "q", "sql": "SELECT count(*) FROM t WHERE a = :a", "params": ["a": 1]])
        #expect(registered["rows"] == [[1]])
    }

    @Test("Blank SQL and blank live-query names are -32602")
    func blankSQLAndNames() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(database: "db.sqlite", directory: directory.url)
        let cases: [(String, JSONValue, String)] = [
            ("query/execute", ["sql": ""], "sql"),
            ("query/execute", ["sql": "  -- nothing\n /* at all */ ;"], "sql"),
            ("liveQuery/register", ["name": "q", "sql": " "], "sql"),
            ("liveQuery/register", ["name": "", "sql": "SELECT 1"], "name"),
            ("liveQuery/register", ["name": "  ", "sql": "SELECT 1"], "name"),
            ("explain", ["sql": ""], "sql"),
        ]
        for (method, params, field) in cases {
            let error = try await server.error(method, params)
            #expect(error["code"] == -32602, "\(method) \(params)")
            #expect(error["data"]?["field"] == .string(field), "\(method) \(params)")
        }
        #expect(try await server.result("liveQuery/list")["liveQueries"] == [])
    }

    @Test("A bad file: URI parameter carries SQLite's own message")
    func uriErrors() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(directory: directory.url)
        for (uri, message) in [
            ("file:db.sqlite?mode=bogus", "no such access mode: bogus"),
            ("file:db.sqlite?cache=weird", "no such cache mode: weird"),
            ("file:db.sqlite?vfs=nope", "no such vfs: nope"),
        ] {
            let error = try await server.error("database/open", ["path": .string(uri)])
            #expect(error["code"] == -32001)
            #expect(error["message"]?.stringValue?.hasSuffix(message) == true, "\(error)")
        }
        _ = try await server.result("query/execute", ["sql": "SELECT 1"])
    }
}

/// A watched file damaged in place, told over the real server.
@Suite("Server: a damaged database file", .timeLimit(.minutes(2)))
struct ServerDamageTests {
    @Test("Overwritten in place: fileChanged {path, reason} and an error for each live query; restored: results again")
    func damagedAndRestored() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        try await SQLite3CLI.run(
            path,
            "PRAGMA journal_mode=wal; CREATE TABLE t(a); INSERT INTO t VALUES (1), (2);")
        let backup = try Data(contentsOf: URL(fileURLWithPath: path))
        let server = try await ServerProcess.started(database: path, directory: directory.url)
        for (name, sql) in [("n", "SELECT count(*) FROM t"), ("s", "SELECT sum(a) FROM t")] {
            _ = try await server.result("liveQuery/register", ["name": .string(name), "sql": .string(sql)])
        }
        let file = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try file.write(contentsOf: Data(repeating: 0x5A, count: 4096))
        let changed = try await server.notification("database/fileChanged")
        #expect(changed["path"] == .string(path))
        #expect(changed["reason"] == "damaged")
        #expect(changed["message"]?.stringValue?.contains("not a database") == true)
        for name in ["n", "s"] {
            let error = try await server.notification("liveQuery/error") { $0["name"] == .string(name) }
            #expect(error["error"]?["data"]?["sqliteCode"] == 26)
        }
        try file.seek(toOffset: 0)
        try file.write(contentsOf: backup)
        try file.close()
        #expect(try await server.notification("database/fileChanged")["reason"] == "repaired")
        #expect(try await server.notification("liveQuery/changed") { $0["name"] == "n" }["rows"] == [[2]])
        #expect(try await server.notification("liveQuery/changed") { $0["name"] == "s" }["rows"] == [[3]])
    }
}
