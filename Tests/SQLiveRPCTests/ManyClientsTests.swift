import Foundation
import SQLiveProtocol
import SQLiveTestSupport
import Testing

/// Many clients of one real `sqlive --web`, over its sockets (issue 56):
/// long messages through the page's WebSocket.
@Suite("Many clients, one server", .timeLimit(.minutes(5)))
struct ManyClientsTests {
    /// A database with a table `t` of three rows, written by the sqlite3 shell.
    static func database(journal: String = "WAL") async throws -> (TemporaryDirectory, String) {
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent("games.sqlite").path
        let created = try await Launcher.run(
            "/usr/bin/sqlite3", [path],
            input: "PRAGMA journal_mode = \(journal); CREATE TABLE t(x INTEGER PRIMARY KEY, name TEXT); "
                + "INSERT INTO t(name) VALUES ('a'), ('b'), ('c');")
        #expect(created.status == 0, "\(created.stderr)")
        return (directory, path)
    }

    /// `sqlive --web 0 PATH` (and `extra` arguments), its port and token.
    static func web(_ path: String, _ extra: [String] = []) throws -> (server: PipedChild, port: Int, token: String) {
        let server = try PipedChild(SQLiveBinary.path, ["--web", "0"] + extra + [path])
        let (port, token) = try ReadOnlyServerTests.address(
            from: ReadOnlyServerTests.line(from: server, startingWith: "http://"))
        return (server, port, token)
    }

    /// The first value of the first row of a `query/execute` response.
    static func firstValue(_ response: JSONValue) -> JSONValue? {
        response["result"]?["results"]?[0]?["rows"]?[0]?[0]
    }

    /// A statement typed in the page is one text frame: 17 KB (over
    /// Hummingbird's default frame limit, 16 KiB, which closed the
    /// WebSocket) and 1 MB are answered; a frame over the message limit
    /// (64 MiB) closes that WebSocket with 1009 (message too big) before
    /// its payload is sent, and the server goes on serving.
    @Test func longMessages() async throws {
        let (directory, path) = try await Self.database()
        defer { withExtendedLifetime(directory) {} }
        let (server, port, token) = try Self.web(path)
        defer { server.child.terminate() }
        let page = try ReadOnlyServerTests.pageSession(port: port, token: token)
        for length in [17_000, 1_000_000] {
            let literal = String(repeating: "x", count: length)
            let response = try page.request("query/execute", ["sql": .string("SELECT length('\(literal)')")])
            #expect(Self.firstValue(response) == .integer(Int64(length)), "\(length) bytes: \(response)")
        }
        let other = try ReadOnlyServerTests.pageSession(port: port, token: token)
        try other.sendTextFrameHead(length: (64 << 20) + 1)
        #expect(try other.closeCode() == 1009)
        // The server goes on: the first page, and a new one.
        let again = try page.request("query/execute", ["sql": "SELECT count(*) FROM t"])
        #expect(Self.firstValue(again) == .integer(3), "\(again)")
        let third = try ReadOnlyServerTests.pageSession(port: port, token: token)
        #expect(Self.firstValue(try third.request("query/execute", ["sql": "SELECT 1"])) == .integer(1))
        server.child.terminate()
        #expect(await server.child.exit() == 0)
    }
}
