import Foundation
import SQLiveTestSupport
import Testing

/// The token checks of the real `sqlive --mcp --http` and `sqlive --web`
/// over their sockets: the `Bearer` scheme is matched without regard to
/// case (RFC 7235), the token itself exactly; and the page's headers
/// forbid framing it (`Content-Security-Policy` with
/// `frame-ancestors 'none'`, sent as a header, and `X-Frame-Options`).
@Suite("HTTP authorization and the page's headers", .timeLimit(.minutes(3)))
struct HTTPAuthorizationTests {
    static func database() async throws -> (TemporaryDirectory, String) {
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent("games.sqlite").path
        let created = try await Launcher.run(
            "/usr/bin/sqlite3", [path], input: "CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        #expect(created.status == 0, "\(created.stderr)")
        return (directory, path)
    }

    @Test func mcpBearerScheme() async throws {
        let (directory, path) = try await Self.database()
        defer { withExtendedLifetime(directory) {} }
        let server = try PipedChild(SQLiveBinary.path, ["--mcp", "--http", "0", path])
        defer { server.child.terminate() }
        // Its first two lines: the endpoint, and the token.
        let announced = try ReadOnlyServerTests.lines(from: server, count: 2)
        let url = try #require(URLComponents(string: announced[0]))
        let port = try #require(url.port)
        let authorization = announced[1]
        #expect(authorization.hasPrefix("Authorization: Bearer "))
        let token = String(authorization.dropFirst("Authorization: Bearer ".count))
        #expect(token.count == 64, "\(authorization)")
        let initialize = Array(
            #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"tests","version":"1"}}}"#
                .utf8)
        func status(_ authorization: String?) throws -> Int {
            var headers = [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")]
            if let authorization { headers.append(("Authorization", authorization)) }
            return try LoopbackClient.request(port: port, "POST", "/mcp", headers: headers, body: initialize).status
        }
        for accepted in ["Bearer \(token)", "bearer \(token)", "BEARER \(token)", "bEaReR  \(token)"] {
            #expect(try status(accepted) == 200, "\(accepted)")
        }
        for refused in [
            nil, "Bearer", "Bearer ", "Bearer \(token.uppercased())", "Bearer \(token.dropLast())", "Basic \(token)",
            "Bearer\(token)", "\(token)",
        ] {
            #expect(try status(refused) == 401, "\(refused ?? "no header")")
        }
        server.child.terminate()
        #expect(await server.child.exit() == 0)
    }

    @Test func webPageHeadersAndBearer() async throws {
        let (directory, path) = try await Self.database()
        defer { withExtendedLifetime(directory) {} }
        let server = try PipedChild(SQLiveBinary.path, ["--web", "0", path])
        defer { server.child.terminate() }
        let (port, token) = try ReadOnlyServerTests.address(
            from: ReadOnlyServerTests.line(from: server, startingWith: "http://"))
        let page = try LoopbackClient.request(port: port, "GET", "/?token=\(token)")
        #expect(page.status == 200)
        let policy = try #require(page.header("Content-Security-Policy"), "no Content-Security-Policy header")
        #expect(policy.contains("frame-ancestors 'none'"), "\(policy)")
        #expect(policy.contains("default-src 'none'") && policy.contains("connect-src 'self'"), "\(policy)")
        #expect(page.header("X-Frame-Options") == "DENY")
        // The token in an Authorization header instead of the query (a script's way).
        for accepted in ["Bearer \(token)", "bearer \(token)", "BEARER \(token)"] {
            #expect(
                try LoopbackClient.request(port: port, "GET", "/", headers: [("Authorization", accepted)]).status == 200
            )
        }
        for refused in ["Bearer \(token.uppercased())", "Basic \(token)", "Bearer"] {
            #expect(
                try LoopbackClient.request(port: port, "GET", "/", headers: [("Authorization", refused)]).status == 401)
        }
        let socket = try LoopbackClient.webSocket(
            port: port, "/rpc", headers: [("Origin", "http://127.0.0.1:\(port)"), ("Authorization", "bearer \(token)")])
        let initialized = try socket.request("initialize", ["clientInfo": ["name": "tests"]])
        #expect(initialized["result"]?["serverInfo"]?["name"] == "sqlive", "\(initialized)")
        server.child.terminate()
        #expect(await server.child.exit() == 0)
    }
}
