import Foundation
import SQLiveProtocol
import SQLiveRPC
import SQLiveTestSupport
import Testing

/// Each error code, and that the server goes on after each.
@Suite("Server errors", .timeLimit(.minutes(2)))
struct ServerErrorTests {
    /// Checks that the server still answers a valid request.
    func expectAlive(_ server: ServerProcess) async throws {
        let result = try await server.result("query/execute", ["sql": "SELECT 'alive'"])
        #expect(result["results"]?[0]?["rows"] == [["alive"]])
    }

    @Test func parseError() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(database: "db.sqlite", directory: directory.url)
        for content in ["{not json", "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"x\"", "", "\u{FEFF}{}"] {
            server.sendRaw(MessageFraming.frame(Array(content.utf8)))
            let error = try await server.next("a parse error") { $0["error"]?["code"] == -32700 }
            #expect(error["id"] == .null)
        }
        // Invalid UTF-8 inside a string.
        server.sendRaw(MessageFraming.frame([0x5B, 0x22, 0xFF, 0x22, 0x5D]))
        _ = try await server.next("a parse error") { $0["error"]?["code"] == -32700 }
        // Nesting deeper than Foundation's limit is refused, not a crash.
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        server.sendRaw(MessageFraming.frame(Array(deep.utf8)))
        _ = try await server.next("a parse error") { $0["error"]?["code"] == -32700 }
        // Within the limit, deep params are read, and refused as params.
        let deepParams = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        let request = #"{"jsonrpc":"2.0","id":"deep","method":"query/execute","params":\#(deepParams)}"#
        server.sendRaw(MessageFraming.frame(Array(request.utf8)))
        #expect(try await server.response(to: .string("deep"))["error"]?["code"] == -32602)
        // A number out of every range.
        server.sendRaw(MessageFraming.frame(Array(#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1e400]}"#.utf8)))
        _ = try await server.next("a parse error") { $0["error"]?["code"] == -32700 }
        // A non-numeric Content-Length.
        server.sendRaw(Array("Content-Length: twelve\r\n\r\n{}".utf8))
        _ = try await server.next("a framing error") { $0["error"]?["code"] == -32700 }
        try await expectAlive(server)
    }

    @Test func oversizedMessageIsRefused() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(database: "db.sqlite", directory: directory.url)
        server.sendRaw(Array("Content-Length: 999999999999\r\n\r\n{}".utf8))
        let error = try await server.next("a size error") { $0["error"]?["code"] == -32600 }
        #expect(error["error"]?["message"]?.stringValue?.contains("larger than the maximum") == true)
        try await expectAlive(server)
    }

    @Test func invalidRequest() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(database: "db.sqlite", directory: directory.url)
        server.send(["jsonrpc": "1.0", "id": 5, "method": "query/execute"])
        let wrongVersion = try await server.response(to: .number(5))
        #expect(wrongVersion["error"]?["code"] == -32600)
        server.send(["jsonrpc": "2.0", "id": "m", "method": 12])
        #expect(try await server.response(to: .string("m"))["error"]?["code"] == -32600)
        server.send("just a string")
        let notObject = try await server.next("an invalid request") { $0["error"]?["code"] == -32600 }
        #expect(notObject["id"] == .null)
        try await expectAlive(server)
    }

    @Test func methodNotFound() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(database: "db.sqlite", directory: directory.url)
        let error = try await server.error("textDocument/formatting", [:])
        #expect(error["code"] == -32601)
        #expect(error["message"]?.stringValue?.contains("textDocument/formatting") == true)
        try await expectAlive(server)
    }

    @Test func invalidParamsNameTheField() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(database: "db.sqlite", directory: directory.url)
        let cases: [(String, JSONValue?, String)] = [
            ("query/execute", nil, "sql"),
            ("query/execute", ["sql": 5], "sql"),
            ("query/execute", ["sql": "SELECT ?", "params": [[1]]], "params[0]"),
            ("query/execute", ["sql": "SELECT ?", "params": "x"], "params"),
            ("query/execute", ["sql": "SELECT 1", "maxRows": "ten"], "maxRows"),
            ("query/execute", ["sql": "SELECT 1", "maxRows": -1], "maxRows"),
            ("liveQuery/register", ["name": "q"], "sql"),
            ("liveQuery/register", ["name": "q", "sql": "DELETE FROM t"], "sql"),
            ("liveQuery/pause", ["name": nil], "name"),
            ("database/open", ["path": "x", "readonly": "yes"], "readonly"),
            ("trace/set", [:], "enabled"),
            ("explain", ["sql": ["SELECT 1"]], "sql"),
        ]
        _ = try await server.result("query/execute", ["sql": "CREATE TABLE t(a)"])
        for (method, params, field) in cases {
            let error = try await server.error(method, params)
            #expect(error["code"] == -32602, "\(method) \(params.map(String.init(describing:)) ?? "")")
            #expect(error["data"]?["field"] == .string(field), "\(method): \(error)")
            #expect(error["message"]?.stringValue?.contains(field) == true)
        }
        let arrayParams = try await server.error("query/execute", ["SELECT 1"])
        #expect(arrayParams["code"] == -32602)
        try await expectAlive(server)
    }

    @Test func sqliteError() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(database: "db.sqlite", directory: directory.url)
        let error = try await server.error("query/execute", ["sql": "SELECT 1; SELECT nosuch FROM (SELECT 1 AS a)"])
        #expect(error["code"] == -32001)
        #expect(error["message"] == "no such column: nosuch")
        let data = try #require(error["data"])
        #expect(data["sqliteCode"] == 1)
        #expect(data["extendedCode"] == 1)
        #expect(data["message"] == "no such column: nosuch")
        #expect(data["offset"] == 17)  // the byte where "nosuch" starts
        #expect(data["statementIndex"] == 1)
        #expect(data["results"]?[0]?["rows"] == [[1]])

        _ = try await server.result("query/execute", ["sql": "CREATE TABLE u(a UNIQUE); INSERT INTO u VALUES (1)"])
        let constraint = try await server.error("query/execute", ["sql": "INSERT INTO u VALUES (1)"])
        #expect(constraint["data"]?["sqliteCode"] == 19)
        #expect(constraint["data"]?["extendedCode"] == 2067)
        try await expectAlive(server)
    }

    @Test func withoutADatabaseArgumentTheDatabaseIsInMemory() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(directory: directory.url)
        // No database/open needed: requests run against an in-memory database.
        _ = try await server.result("query/execute", ["sql": "CREATE TABLE t(a); INSERT INTO t VALUES (1)"])
        let registered = try await server.result("liveQuery/register", ["name": "q", "sql": "SELECT a FROM t"])
        #expect(registered["rows"] == [[1]])
        #expect(try await server.result("database/schema")["tables"]?[0]?["name"] == "t")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
        try await expectAlive(server)
    }

    @Test func noDatabaseOpen() async throws {
        let directory = try TemporaryDirectory()
        // A database that cannot be opened at start leaves none open.
        let server = try await ServerProcess.started(database: "missing/db.sqlite", directory: directory.url)
        for method in ["query/execute", "database/schema", "liveQuery/list", "explain", "liveQuery/register"] {
            let error = try await server.error(method, ["sql": "SELECT 1", "name": "q"])
            #expect(error["code"] == -32010, "\(method)")
        }
        let opened = try await server.error("database/open", ["path": "no/such/directory/db.sqlite"])
        #expect(opened["code"] == -32001)
        _ = try await server.result("database/open", ["path": ":memory:"])
        try await expectAlive(server)
    }

    @Test func databaseThatCannotBeOpenedAtStartIsReported() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(database: "missing/db.sqlite", directory: directory.url)
        let error = try await server.error("query/execute", ["sql": "SELECT 1"])
        #expect(error["code"] == -32010)
        #expect(error["message"]?.stringValue?.contains("missing") == true)
    }

    @Test func unknownAndTakenLiveQueryNames() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(database: "db.sqlite", directory: directory.url)
        for method in ["liveQuery/unregister", "liveQuery/pause", "liveQuery/resume", "liveQuery/update"] {
            let error = try await server.error(method, ["name": "ghost", "sql": "SELECT 1"])
            #expect(error["code"] == -32011, "\(method)")
        }
        _ = try await server.result("liveQuery/register", ["name": "q", "sql": "SELECT 1"])
        let taken = try await server.error("liveQuery/register", ["name": "q", "sql": "SELECT 2"])
        #expect(taken["code"] == -32012)
        try await expectAlive(server)
    }
}
