import Foundation
import SQLiveProtocol
import SQLiveRPC
import SQLiveTestSupport
import Testing

/// The lifecycle of the real `sqlive --rpc`, over pipes.
@Suite("Server lifecycle", .timeLimit(.minutes(2)))
struct ServerLifecycleTests {
    /// A crash is never silent: a line on standard error, and the signal's
    /// own non-zero end (a real SIGSEGV delivered to the real binary).
    @Test func aCrashLeavesALineAndANonZeroStatus() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(
            database: directory.path("db.sqlite"), directory: directory.url, binary: true)
        kill(server.process.processIdentifier, SIGSEGV)
        let status = try await server.waitForExit()
        #expect(status == 128 + SIGSEGV)
        #expect(server.standardError.contains("sqlive: crashed with signal 11"))
    }

    @Test func shutdownThenExitEndsWithZero() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(directory: directory.url, binary: true)
        let response = try await server.request("shutdown")
        #expect(response["result"] == .null)
        #expect(response["error"] == nil)
        server.notify("exit")
        #expect(try await server.waitForExit() == 0)
    }

    @Test func exitWithoutShutdownEndsWithOne() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(directory: directory.url, binary: true)
        server.notify("exit")
        #expect(try await server.waitForExit() == 1)
    }

    @Test func exitBeforeInitializeEndsWithOne() async throws {
        let directory = try TemporaryDirectory()
        let server = try ServerProcess(directory: directory.url)
        server.notify("exit")
        #expect(try await server.waitForExit() == 1)
    }

    @Test func endOfInputEndsCleanlyAfterAnsweringWhatWasRead() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(database: "db.sqlite", directory: directory.url, binary: true)
        // Sent with the end of input right behind: still answered.
        let id = server.sendRequest("query/execute", ["sql": "SELECT 42"])
        server.closeInput()
        let response = try await server.response(to: id)
        #expect(response["result"]?["results"]?[0]?["rows"] == [[42]])
        #expect(try await server.waitForExit() == 0)
    }

    @Test func pipelinedShutdownAndExitAnswerEverything() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(database: "db.sqlite", directory: directory.url, binary: true)
        let query = server.sendRequest("query/execute", ["sql": "CREATE TABLE t(a); INSERT INTO t VALUES (1)"])
        let shutdown = server.sendRequest("shutdown")
        server.notify("exit")
        #expect(try await server.response(to: query)["result"] != nil)
        #expect(try await server.response(to: shutdown)["result"] == .null)
        #expect(try await server.waitForExit() == 0)
    }

    @Test func requestsBeforeInitializeAreRefused() async throws {
        let directory = try TemporaryDirectory()
        let server = try ServerProcess(directory: directory.url)
        for method in ["query/execute", "shutdown", "liveQuery/list", "no/such/method"] {
            let error = try await server.error(method, ["sql": "SELECT 1"])
            #expect(error["code"] == -32002)
        }
        // Notifications are not answered, even before initialize.
        server.notify("$/cancelRequest", ["id": 1])
        server.notify("unknown/notification")
        let result = try await server.result("initialize")
        #expect(result["serverInfo"]?["name"] == "sqlive")
        #expect(result["serverInfo"]?["version"]?.stringValue?.isEmpty == false)
        #expect(try await server.error("initialize")["code"] == -32600)
        #expect(server.messages.count == 6)
    }

    @Test func initializeReportsCapabilities() async throws {
        let directory = try TemporaryDirectory()
        let server = try ServerProcess(directory: directory.url)
        let result = try await server.result(
            "initialize", ["processId": 1, "clientInfo": ["name": "x"], "rootUri": nil])
        let capabilities = try #require(result["capabilities"]?["experimental"]?["sqlive"])
        #expect(capabilities["protocolVersion"] == "1.0")
        let methods = try #require(capabilities["methods"]?.arrayValue)
        for method in [
            "initialize", "shutdown", "database/open", "database/schema", "query/execute", "liveQuery/register",
            "liveQuery/unregister", "liveQuery/update", "liveQuery/pause", "liveQuery/resume", "liveQuery/list",
            "explain", "trace/set",
        ] {
            #expect(methods.contains(.string(method)))
        }
        #expect(capabilities["notifications"]?.arrayValue?.contains("liveQuery/changed") == true)
    }

    @Test func requestsAfterShutdownAreRefused() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(directory: directory.url, binary: true)
        _ = try await server.result("shutdown")
        #expect(try await server.error("query/execute", ["sql": "SELECT 1"])["code"] == -32600)
        server.notify("exit")
        #expect(try await server.waitForExit() == 0)
    }

    @Test func idsAreEchoedExactly() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(directory: directory.url, binary: true)
        for id in [RequestID.number(Int64.max), .number(Int64.min), .number(0), .string(""), .string("é 🎉 \"x\"")] {
            server.sendRequest("liveQuery/list", id: id)
            let response = try await server.response(to: id)
            #expect(response["id"] == id.json)
        }
    }

    @Test func batchesAreAnsweredAsArrays() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(database: ":memory:", directory: directory.url, binary: true)
        server.send([
            ["jsonrpc": "2.0", "id": "a", "method": "query/execute", "params": ["sql": "SELECT 1"]],
            ["jsonrpc": "2.0", "method": "some/notification"],
            ["jsonrpc": "2.0", "id": "b", "method": "no/such/method"],
            5,
        ])
        let batch = try await server.next("a batch response") { $0.arrayValue != nil }
        let responses = try #require(batch.arrayValue)
        #expect(responses.count == 3)
        let byID = Dictionary(grouping: responses) { $0["id"] ?? .null }
        #expect(byID["a"]?.first?["result"]?["results"]?[0]?["rows"] == [[1]])
        #expect(byID["b"]?.first?["error"]?["code"] == -32601)
        #expect(byID[.null]?.first?["error"]?["code"] == -32600)

        // A batch of notifications gets no answer; an empty batch one error.
        server.send([["jsonrpc": "2.0", "method": "a"], ["jsonrpc": "2.0", "method": "b"]])
        server.send([])
        let empty = try await server.next("an error for the empty batch") { $0["error"] != nil }
        #expect(empty["error"]?["code"] == -32600)
        #expect(empty["id"] == .null)
        let after = try await server.request("liveQuery/list")
        #expect(after["result"] != nil)
        #expect(!server.messages.contains { $0.arrayValue?.isEmpty == true })
    }

    @Test func garbageIsLoggedAndTheOutputHoldsOnlyFrames() async throws {
        // Everything on stdout must parse as frames of JSON: the test
        // client's parser counts any other byte. The server's logs go to
        // stderr.
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(
            database: "db.sqlite", directory: directory.url, binary: true)
        server.sendRaw(Array("garbage that the server logs\r\n".utf8))
        _ = try await server.result("liveQuery/list")
        server.notify("exit")
        _ = try await server.waitForExit()
        #expect(server.standardError.contains("skipped"))
        #expect(server.skippedOutputBytes == 0)
    }
}
