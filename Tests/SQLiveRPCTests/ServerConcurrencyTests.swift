import Foundation
import SQLiveProtocol
import SQLiveRPC
import SQLiveTestSupport
import Testing

/// Live queries fed by other processes, cancellation, and requests that
/// overtake a long query.
@Suite("Server concurrency", .timeLimit(.minutes(2)))
struct ServerConcurrencyTests {
    /// A query that never ends by itself.
    static let endlessQuery: JSONValue =
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"

    @Test(arguments: ["delete", "wal"])
    func liveQueryFollowsWritesOfTheSQLite3Shell(journalMode: String) async throws {
        let directory = try TemporaryDirectory()
        let database = directory.path("games.sqlite")
        try await sqlite3(
            database, "PRAGMA journal_mode=\(journalMode); CREATE TABLE games(title); INSERT INTO games VALUES ('Go');")
        let server = try await ServerProcess.started(database: "games.sqlite", directory: directory.url)
        let registered = try await server.result(
            "liveQuery/register", ["name": "titles", "sql": "SELECT title FROM games ORDER BY title"])
        #expect(registered["rows"] == [["Go"]])

        try await sqlite3(database, "INSERT INTO games VALUES ('Chess');")
        let changed = try await server.notification("liveQuery/changed") { $0["rows"] == [["Chess"], ["Go"]] }
        #expect(changed["name"] == "titles")
        #expect(changed["cause"] == "external")
        #expect(changed["version"]?.integerValue ?? 0 >= 2)

        // A burst: the latest notification equals the final result.
        for index in 0..<10 {
            try await sqlite3(database, "INSERT INTO games VALUES ('Game \(index)');")
        }
        let final = try await server.notification("liveQuery/changed") { $0["rows"]?.arrayValue?.count == 12 }
        #expect(final["rows"]?[0] == ["Chess"])
        let versions = server.messages.filter { $0["method"] == "liveQuery/changed" }
            .compactMap { $0["params"]?["version"]?.integerValue }
        #expect(versions == versions.sorted() && Set(versions).count == versions.count)
    }

    @Test func cancellingALongQueryAnswersCancelledWhileTheServerKeepsAnswering() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(database: "db.sqlite", directory: directory.url)
        _ = try await server.result("query/execute", ["sql": "CREATE TABLE t(a)"])
        _ = try await server.result("liveQuery/register", ["name": "q", "sql": "SELECT count(*) FROM t"])

        let long = server.sendRequest("query/execute", ["sql": Self.endlessQuery])
        // The long query does not block liveQuery/list.
        let list = try await server.result("liveQuery/list")
        #expect(list["liveQueries"]?[0]?["name"] == "q")
        #expect(!server.messages.contains { $0["id"] == long.json })

        server.notify("$/cancelRequest", ["id": long.json])
        let cancelled = try await server.response(to: long)
        #expect(cancelled["error"]?["code"] == -32800)
        #expect(cancelled["result"] == nil)

        // The database is usable again, and live queries still follow writes.
        _ = try await server.result("query/execute", ["sql": "INSERT INTO t VALUES (1)"])
        let changed = try await server.notification("liveQuery/changed")
        #expect(changed["rows"] == [[1]])
    }

    @Test func cancellingAQueuedRequestAnswersAtOnce() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(database: "db.sqlite", directory: directory.url)
        let long = server.sendRequest("query/execute", ["sql": Self.endlessQuery])
        let queued = server.sendRequest("query/execute", ["sql": "SELECT 1"], id: .string("queued"))
        server.notify("$/cancelRequest", ["id": queued.json])
        #expect(try await server.response(to: queued)["error"]?["code"] == -32800)
        server.notify("$/cancelRequest", ["id": long.json])
        #expect(try await server.response(to: long)["error"]?["code"] == -32800)
        // Cancelling a request that already answered, or an unknown one, does nothing.
        server.notify("$/cancelRequest", ["id": long.json])
        server.notify("$/cancelRequest", ["id": "never sent"])
        server.notify("$/cancelRequest", ["id": [1, 2]])
        #expect(try await server.result("query/execute", ["sql": "SELECT 2"])["results"]?[0]?["rows"] == [[2]])
        #expect(server.messages.filter { $0["id"] == long.json }.count == 1)
    }

    @Test func idsReusedAfterManyRequestsStillCancelTheRightOne() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(database: "db.sqlite", directory: directory.url)
        // More requests than the server keeps before it forgets ended ones.
        var bytes: [UInt8] = []
        for index in 0..<1100 {
            bytes += try MessageFraming.frame(
                [
                    "jsonrpc": "2.0", "id": .string("r\(index)"), "method": "query/execute",
                    "params": ["sql": "SELECT 1"],
                ])
        }
        server.sendRaw(bytes)
        _ = try await server.response(to: .string("r1099"))
        #expect(try await server.response(to: .string("r5"))["result"]?["results"]?[0]?["rows"] == [[1]])
        // Cancelling an answered request does nothing; its id, reused, names the new request.
        server.notify("$/cancelRequest", ["id": "r5"])
        let reused = server.sendRequest("query/execute", ["sql": Self.endlessQuery], id: .string("r5"))
        server.notify("$/cancelRequest", ["id": reused.json])
        #expect(try await server.response(to: reused)["error"]?["code"] == -32800)
        #expect(try await server.result("query/execute", ["sql": "SELECT 2"])["results"]?[0]?["rows"] == [[2]])
        #expect(server.messages.filter { $0["id"] == "r5" }.count == 2)
        #expect(Set(server.messages.compactMap { $0["id"] }).count >= 1100)
    }

    @Test func aResponseIsNotHeldBehindTheLongStatementAfterIt() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(database: "db.sqlite", directory: directory.url)
        // In one write, so that the quick request's response is sent while
        // the long one waits in line: the writer may hold it to batch it
        // with the next response, but not until the long statement ends.
        var bytes: [UInt8] = []
        for (id, sql) in [("quick", JSONValue.string("SELECT 42")), ("long", Self.endlessQuery)] {
            bytes += try MessageFraming.frame(
                ["jsonrpc": "2.0", "id": .string(id), "method": "query/execute", "params": ["sql": sql]])
        }
        server.sendRaw(bytes)
        let quick = try await server.response(to: .string("quick"))
        #expect(quick["result"]?["results"]?[0]?["rows"] == [[42]])
        #expect(!server.messages.contains { $0["id"] == "long" })
        server.notify("$/cancelRequest", ["id": "long"])
        #expect(try await server.response(to: .string("long"))["error"]?["code"] == -32800)
    }

    @Test func exitCancelsRunningQueries() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(database: "db.sqlite", directory: directory.url)
        let long = server.sendRequest("query/execute", ["sql": Self.endlessQuery])
        _ = try await server.result("liveQuery/list")
        server.notify("exit")
        #expect(try await server.waitForExit() == 1)
        #expect(try await server.response(to: long)["error"]?["code"] == -32800)
    }
}
