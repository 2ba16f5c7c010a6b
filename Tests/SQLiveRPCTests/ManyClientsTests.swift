import Foundation
import SQLiveProtocol
import SQLiveTestSupport
import Testing

/// Many clients of one real `sqlive --web`, over its sockets (issue 56):
/// long messages through the page's WebSocket; each tab's connection
/// state (temporary tables, `PRAGMA`s, transactions) its own; a tab that
/// leaves inside a transaction gives its lock back at once (the sqlite3
/// shell, at its defaults, with no busy timeout, then writes); at most
/// `WebSite.maximumClients` tabs at once, the next refused.
@Suite(
    "Many clients, one server", .timeLimit(.minutes(5)),
    .disabled(if: SoloSuites.deferred, Comment(rawValue: SoloSuites.reason)))
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

    /// Runs `sql` in a tab and says what SQLite said, if it failed.
    static func run(_ tab: LoopbackClient, _ sql: String) throws -> JSONValue {
        let response = try tab.request("query/execute", ["sql": .string(sql)])
        #expect(response["error"] == nil, "\(sql): \(response)")
        return response
    }

    /// The names in `t`, in order, read by the sqlite3 shell.
    static func names(_ path: String) async throws -> String {
        try await Launcher.run(
            "/usr/bin/sqlite3", [path, "SELECT group_concat(name) FROM (SELECT name FROM t ORDER BY x)"]
        )
        .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A read-only page (its default): what one tab does to its connection
    /// is not another's.
    @Test func tabsHaveTheirOwnConnectionState() async throws {
        let (directory, path) = try await Self.database()
        defer { withExtendedLifetime(directory) {} }
        let (server, port, token) = try Self.web(path)
        defer { server.child.terminate() }
        let a = try ReadOnlyServerTests.pageSession(port: port, token: token)
        let b = try ReadOnlyServerTests.pageSession(port: port, token: token)
        // A's temporary t hides the real t from A only.
        _ = try Self.run(a, "CREATE TEMP TABLE t(y)")
        #expect(Self.firstValue(try Self.run(a, "SELECT count(*) FROM t")) == .integer(0))
        #expect(Self.firstValue(try Self.run(b, "SELECT count(*) FROM t")) == .integer(3))
        // A's PRAGMA is A's.
        _ = try Self.run(a, "PRAGMA cache_size = 123")
        #expect(Self.firstValue(try Self.run(a, "PRAGMA cache_size")) == .integer(123))
        #expect(Self.firstValue(try Self.run(b, "PRAGMA cache_size")) != .integer(123))
        // A's BEGIN does not make B's fail.
        _ = try Self.run(a, "BEGIN")
        _ = try Self.run(b, "BEGIN")
        _ = try Self.run(b, "COMMIT")
        _ = try Self.run(a, "COMMIT")
        server.child.terminate()
        #expect(await server.child.exit() == 0)
    }

    /// With `--allow-writes`: B's INSERT, sent while A's transaction holds
    /// the write lock, waits for it (SQLite's busy timeout) instead of
    /// joining A's transaction; A's ROLLBACK takes only A's row away, and
    /// B's acknowledged row stays.
    @Test func oneTabsRollbackIsNotAnothers() async throws {
        let (directory, path) = try await Self.database()
        defer { withExtendedLifetime(directory) {} }
        let (server, port, token) = try Self.web(path, ["--allow-writes"])
        defer { server.child.terminate() }
        let a = try ReadOnlyServerTests.pageSession(port: port, token: token)
        let b = try ReadOnlyServerTests.pageSession(port: port, token: token)
        let registered = try b.request("liveQuery/register", ["name": "count", "sql": "SELECT count(*) FROM t"])
        #expect(registered["result"]?["rows"]?[0]?[0] == .integer(3), "\(registered)")
        _ = try Self.run(a, "BEGIN")
        _ = try Self.run(a, "INSERT INTO t(name) VALUES ('rolled-back')")
        try b.sendRequest(id: 100, "query/execute", ["sql": "INSERT INTO t(name) VALUES ('kept')"])
        #expect(!b.hasInput(withinMilliseconds: 500), "B's INSERT did not wait for A's transaction")
        _ = try Self.run(a, "ROLLBACK")
        let inserted = try b.response(to: 100)
        #expect(inserted["error"] == nil, "\(inserted)")
        #expect(try await Self.names(path) == "a,b,c,kept")
        // B's live query follows A's commits (from A's own connection: as
        // another connection's, cause "external").
        _ = try Self.run(a, "INSERT INTO t(name) VALUES ('again')")
        var seen: JSONValue?
        while seen?[0]?[0] != .integer(5) {
            let message = try JSONCoding.decode(JSONValue.self, from: Array(try b.receiveText().utf8))
            if message["method"] == "liveQuery/changed" { seen = message["params"]?["rows"] }
        }
        server.child.terminate()
        #expect(await server.child.exit() == 0)
    }

    /// A tab closed inside a transaction that holds the write lock: within
    /// a second the sqlite3 shell, with no busy timeout, writes; the tab's
    /// row was rolled back. In WAL and in a rollback journal.
    @Test(arguments: ["WAL", "DELETE"])
    func aTabThatLeavesGivesItsLockBack(journal: String) async throws {
        let (directory, path) = try await Self.database(journal: journal)
        defer { withExtendedLifetime(directory) {} }
        let (server, port, token) = try Self.web(path, ["--allow-writes"])
        defer { server.child.terminate() }
        let a = try ReadOnlyServerTests.pageSession(port: port, token: token)
        _ = try Self.run(a, "BEGIN")
        _ = try Self.run(a, "INSERT INTO t(name) VALUES ('rolled-back')")
        let locked = try await Launcher.run("/usr/bin/sqlite3", [path, "INSERT INTO t(name) VALUES ('early')"])
        #expect(locked.status != 0, "the tab's transaction held no lock: \(locked.stdout)")
        a.abandon()
        let deadline = ContinuousClock.now.advanced(by: .seconds(1))
        var last = ""
        var wrote = false
        while ContinuousClock.now < deadline {
            let shell = try await Launcher.run("/usr/bin/sqlite3", [path, "INSERT INTO t(name) VALUES ('shell')"])
            if shell.status == 0 {
                wrote = true
                break
            }
            last = shell.stderr
        }
        #expect(wrote, "the sqlite3 shell could not write a second after the tab left: \(last)")
        #expect(try await Self.names(path) == (wrote ? "a,b,c,shell" : "a,b,c"))
        // The server goes on.
        let b = try ReadOnlyServerTests.pageSession(port: port, token: token)
        #expect(Self.firstValue(try Self.run(b, "SELECT count(*) FROM t")) == .integer(wrote ? 4 : 3))
        server.child.terminate()
        #expect(await server.child.exit() == 0)
    }

    /// At most 64 tabs at once, each with its connection: the next is
    /// closed as it opens, with 1013 (try again later) and why; once one
    /// leaves, a new one is served.
    @Test func tooManyTabs() async throws {
        let (directory, path) = try await Self.database()
        defer { withExtendedLifetime(directory) {} }
        let (server, port, token) = try Self.web(path)
        defer { server.child.terminate() }
        var tabs: [LoopbackClient] = []
        for _ in 0..<64 { tabs.append(try ReadOnlyServerTests.pageSession(port: port, token: token)) }
        let origin = [("Origin", "http://127.0.0.1:\(port)")]
        let refused = try LoopbackClient.webSocket(port: port, "/rpc?token=\(token)", headers: origin)
        #expect(try refused.closeCode() == 1013)
        #expect(refused.closeReason.contains("64 tabs"), "\(refused.closeReason)")
        tabs.removeLast().abandon()
        // Served once the server has seen the tab leave.
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        var answer: JSONValue?
        while answer == nil, ContinuousClock.now < deadline {
            let tab = try LoopbackClient.webSocket(port: port, "/rpc?token=\(token)", headers: origin)
            answer = try? {
                _ = try tab.request("initialize", ["clientInfo": ["name": "tests"]])
                return try tab.request("query/execute", ["sql": "SELECT count(*) FROM t"])
            }()
        }
        #expect(
            answer.flatMap(Self.firstValue) == .integer(3),
            "no tab was served after one left: \(String(describing: answer))")
        server.child.terminate()
        #expect(await server.child.exit() == 0)
    }

    /// `$/cancelRequest` is the tab's own: tab B cancelling id 1 leaves
    /// tab A's request 1 (a statement of about a second) to finish with its
    /// result; A cancelling its own gets -32800.
    @Test func aTabCancelsOnlyItsOwnRequests() async throws {
        let (directory, path) = try await Self.database()
        defer { withExtendedLifetime(directory) {} }
        let (server, port, token) = try Self.web(path)
        defer { server.child.terminate() }
        let a = try ReadOnlyServerTests.pageSession(port: port, token: token)
        let b = try ReadOnlyServerTests.pageSession(port: port, token: token)
        let slow =
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000000) SELECT count(*) FROM n"
        try a.sendRequest(id: 1, "query/execute", ["sql": .string(slow)])
        try b.sendNotification("$/cancelRequest", ["id": 1])
        // B goes on answering (and has read its cancellation by then).
        #expect(Self.firstValue(try Self.run(b, "SELECT 2")) == .integer(2))
        let finished = try a.response(to: 1)
        #expect(Self.firstValue(finished) == .integer(3_000_000), "\(finished)")
        try a.sendRequest(id: 2, "query/execute", ["sql": .string(slow)])
        try a.sendNotification("$/cancelRequest", ["id": 2])
        let cancelled = try a.response(to: 2)
        #expect(cancelled["error"]?["code"] == .integer(-32800), "\(cancelled)")
        server.child.terminate()
        #expect(await server.child.exit() == 0)
    }

    /// The server's resident memory, in MiB.
    static func residentMiB(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) / 1024
    }

    /// A tab that stops reading while a live query of some 4 MB changes at
    /// each of 200 commits by the sqlite3 shell: once the tab reads again,
    /// its last update is the final result (the updates it did not read
    /// meanwhile were replaced by later ones, not lost after them).
    @Test func aSlowTabGetsTheFinalState() async throws {
        let (directory, path) = try await Self.database()
        defer { withExtendedLifetime(directory) {} }
        let big = try await Launcher.run(
            "/usr/bin/sqlite3",
            [
                path,
                "CREATE TABLE big AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 4000) "
                    + "SELECT x, printf('%.1000c', 'x') AS pad FROM c",
            ])
        #expect(big.status == 0, "\(big.stderr)")
        let (server, port, token) = try Self.web(path)
        defer { server.child.terminate() }
        let tab = try ReadOnlyServerTests.pageSession(port: port, token: token)
        let registered = try tab.request(
            "liveQuery/register",
            ["name": "wide", "sql": "SELECT b.x, b.pad, (SELECT count(*) FROM t) AS n FROM big AS b", "maxRows": 5000])
        #expect(registered["result"]?["rows"]?[0]?[2] == .integer(3), "\(String(describing: registered["error"]))")
        let before = Self.residentMiB(server.child.processIdentifier)
        // The tab reads nothing while 60 commits change every row.
        for _ in 0..<60 {
            let wrote = try await Launcher.run("/usr/bin/sqlite3", [path, "INSERT INTO t(name) VALUES ('w')"])
            #expect(wrote.status == 0, "\(wrote.stderr)")
        }
        var grown = Self.residentMiB(server.child.processIdentifier) - before
        // Then it reads: the last update it gets is the final result.
        var last: JSONValue?
        var updates = 0
        while last?[0]?[2] != .integer(63) {
            let message = try JSONCoding.decode(JSONValue.self, from: Array(try tab.receiveText().utf8))
            if message["method"] == "liveQuery/changed" {
                last = message["params"]?["rows"]
                updates += 1
            }
            grown = max(grown, Self.residentMiB(server.child.processIdentifier) - before)
        }
        // What it cost is printed, not checked: the kernel's socket buffers
        // and the engine's own copies of a 4 MB result weigh as much as
        // the few states the outbox drops (WebOutboxTests checks those).
        print("a slow tab: the server grew by \(grown) MiB; \(updates) updates read")
        server.child.terminate()
        #expect(await server.child.exit() == 0)
    }

    /// The file replaced on disk (WAL, a new file renamed over it): the
    /// server follows it, and a tab's own connection with it (let go
    /// before the new file is opened, opened again at the tab's next
    /// statement); after that tab leaves, the server still follows the
    /// sqlite3 shell's commits.
    @Test func aTabFollowsTheFileReplaced() async throws {
        let (directory, path) = try await Self.database()
        defer { withExtendedLifetime(directory) {} }
        let (server, port, token) = try Self.web(path)
        defer { server.child.terminate() }
        let a = try ReadOnlyServerTests.pageSession(port: port, token: token)
        #expect(Self.firstValue(try Self.run(a, "SELECT count(*) FROM t")) == .integer(3))
        _ = try a.request("liveQuery/register", ["name": "n", "sql": "SELECT count(*) FROM t"])
        let replacement = directory.url.appendingPathComponent("new.sqlite").path
        let made = try await Launcher.run(
            "/usr/bin/sqlite3", [replacement],
            input: "PRAGMA journal_mode = WAL; CREATE TABLE t(x INTEGER PRIMARY KEY, name TEXT); "
                + "INSERT INTO t(name) VALUES ('p'), ('q'), ('r'), ('s');")
        #expect(made.status == 0, "\(made.stderr)")
        #expect(rename(replacement, path) == 0)
        func follow(_ tab: LoopbackClient, to count: Int64) throws {
            while true {
                let message = try JSONCoding.decode(JSONValue.self, from: Array(try tab.receiveText().utf8))
                if message["method"] == "liveQuery/changed", message["params"]?["rows"]?[0]?[0] == .integer(count) {
                    return
                }
            }
        }
        try follow(a, to: 4)
        #expect(Self.firstValue(try Self.run(a, "SELECT count(*) FROM t")) == .integer(4))
        a.abandon()
        let b = try ReadOnlyServerTests.pageSession(port: port, token: token)
        _ = try b.request("liveQuery/register", ["name": "n", "sql": "SELECT count(*) FROM t"])
        let wrote = try await Launcher.run("/usr/bin/sqlite3", [path, "INSERT INTO t(name) VALUES ('w')"])
        #expect(wrote.status == 0, "\(wrote.stderr)")
        try follow(b, to: 5)
        #expect(Self.firstValue(try Self.run(b, "SELECT count(*) FROM t")) == .integer(5))
        server.child.terminate()
        #expect(await server.child.exit() == 0)
    }

    // MARK: - Cancellation over MCP's HTTP transport

    /// `sqlive --mcp --http 0 PATH`: its port and token.
    static func mcpHTTP(_ path: String) throws -> (server: PipedChild, port: Int, token: String) {
        let server = try PipedChild(SQLiveBinary.path, ["--mcp", "--http", "0", path])
        let announced = try ReadOnlyServerTests.lines(from: server, count: 2)
        let port = try #require(URLComponents(string: announced[0])?.port)
        let token = String(announced[1].dropFirst("Authorization: Bearer ".count))
        return (server, port, token)
    }

    static let envelope: JSONValue = [
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": ["name": "tests", "version": "1"],
        "io.modelcontextprotocol/clientCapabilities": [:],
    ]

    /// A message of the stateless era (2026-07-28) and its headers.
    static func stateless(id: Int?, _ method: String, tool: String? = nil, _ arguments: JSONValue = [:], token: String)
        throws -> (headers: [(String, String)], body: [UInt8])
    {
        var params: [String: JSONValue] = ["_meta": envelope]
        if let tool {
            params["name"] = .string(tool)
            params["arguments"] = arguments
        } else if case .object(let given) = arguments {
            params.merge(given) { $1 }
        }
        var message: [String: JSONValue] = ["jsonrpc": "2.0", "method": .string(method), "params": .object(params)]
        if let id { message["id"] = .integer(Int64(id)) }
        var headers = [
            ("Authorization", "Bearer \(token)"), ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"), ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
        ]
        if let tool { headers.append(("Mcp-Name", tool)) }
        return (headers, try JSONCoding.encode(JSONValue.object(message)))
    }

    /// The JSON-RPC message of a response: its body, or its last event's data.
    static func message(_ response: LoopbackClient.Response) throws -> JSONValue {
        let text = response.text
        let json =
            text.components(separatedBy: "data: ").last.map { $0.components(separatedBy: "\n").first ?? "" } ?? text
        return try JSONCoding.decode(JSONValue.self, from: Array((text.hasPrefix("{") ? text : json).utf8))
    }

    /// Two stateless clients both use id 1: B's `notifications/cancelled`
    /// for id 1 does not cancel A's `wait` (id 1), which is answered when
    /// the sqlite3 shell commits; B's own call with id 1 gets its own
    /// answer meanwhile.
    @Test func statelessCancellationIsTheClientsOwn() async throws {
        let (directory, path) = try await Self.database()
        defer { withExtendedLifetime(directory) {} }
        let (server, port, token) = try Self.mcpHTTP(path)
        defer { server.child.terminate() }
        func post(_ message: (headers: [(String, String)], body: [UInt8])) throws -> LoopbackClient.Response {
            try LoopbackClient.request(port: port, "POST", "/mcp", headers: message.headers, body: message.body)
        }
        let watched = try post(
            Self.stateless(
                id: 1, "tools/call", tool: "watch", ["name": "n", "sql": "SELECT count(*) FROM t"], token: token))
        #expect(watched.status == 200, "\(watched.text)")
        let wait = try Self.stateless(
            id: 1, "tools/call", tool: "wait", ["name": "n", "afterVersion": 1, "timeoutMs": 90000], token: token)
        // Deadlines that only catch hangs: a loaded machine (the whole
        // suite beside it) met 15 s.
        let a = try LoopbackClient.startRequest(
            port: port, "POST", "/mcp", headers: wait.headers, body: wait.body, timeout: 100)
        // Its stream's head: the server has taken the request.
        #expect(try a.readResponseHead() == 200)
        let cancel = try post(
            Self.stateless(id: nil, "notifications/cancelled", ["requestId": 1, "reason": "B's own"], token: token))
        #expect(cancel.status == 202)
        // B's id 1, answered as B's; it came after B's cancellation, which
        // the session has read by then.
        let b = try Self.message(
            try post(Self.stateless(id: 1, "tools/call", tool: "query", ["sql": "SELECT 41 + 1"], token: token)))
        #expect(b["result"]?["structuredContent"]?["rows"]?[0]?[0] == .integer(42), "\(b)")
        let wrote = try await Launcher.run("/usr/bin/sqlite3", [path, "INSERT INTO t(name) VALUES ('d')"])
        #expect(wrote.status == 0, "\(wrote.stderr)")
        let answered = try Self.message(try a.readResponse())
        #expect(answered["id"] == .integer(1), "\(answered)")
        #expect(answered["result"]?["structuredContent"]?["rows"]?[0]?[0] == .integer(4), "\(answered)")
        server.child.terminate()
        #expect(await server.child.exit() == 0)
    }

    /// In a session of the handshake era, a cancelled request's POST is
    /// answered at once with -32800 (an HTTP request always gets an
    /// answer), and its place is given back.
    @Test func aCancelledPostIsAnswered() async throws {
        let (directory, path) = try await Self.database()
        defer { withExtendedLifetime(directory) {} }
        let (server, port, token) = try Self.mcpHTTP(path)
        defer { server.child.terminate() }
        let common = [
            ("Authorization", "Bearer \(token)"), ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ]
        let initialize: JSONValue = [
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": [
                "protocolVersion": "2025-11-25", "capabilities": [:], "clientInfo": ["name": "tests", "version": "1"],
            ],
        ]
        let opened = try LoopbackClient.request(
            port: port, "POST", "/mcp", headers: common, body: try JSONCoding.encode(initialize))
        let session = try #require(opened.header("Mcp-Session-Id"), "\(opened.text)")
        let headers = common + [("Mcp-Session-Id", session), ("MCP-Protocol-Version", "2025-11-25")]
        func post(_ message: JSONValue) throws -> LoopbackClient.Response {
            try LoopbackClient.request(
                port: port, "POST", "/mcp", headers: headers, body: try JSONCoding.encode(message))
        }
        #expect(try post(["jsonrpc": "2.0", "method": "notifications/initialized"]).status == 202)
        let watch: JSONValue = [
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": ["name": "watch", "arguments": ["name": "n", "sql": "SELECT count(*) FROM t"]],
        ]
        #expect(try post(watch).status == 200)
        let wait: JSONValue = [
            "jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": ["name": "wait", "arguments": ["name": "n", "afterVersion": 1, "timeoutMs": 600000]],
        ]
        let waiting = try LoopbackClient.startRequest(
            port: port, "POST", "/mcp", headers: headers, body: try JSONCoding.encode(wait), timeout: 10)
        // Its stream's head: the server has taken the request.
        #expect(try waiting.readResponseHead() == 200)
        let cancel: JSONValue = ["jsonrpc": "2.0", "method": "notifications/cancelled", "params": ["requestId": 7]]
        #expect(try post(cancel).status == 202)
        let answered = try Self.message(try waiting.readResponse())
        #expect(answered["id"] == .integer(7), "\(answered)")
        #expect(answered["error"]?["code"] == .integer(-32800), "\(answered)")
        // The session goes on, and the wait's place was given back.
        let quick: JSONValue = [
            "jsonrpc": "2.0", "id": 8, "method": "tools/call",
            "params": ["name": "wait", "arguments": ["name": "n", "timeoutMs": 10]],
        ]
        let again = try Self.message(try post(quick))
        #expect(again["result"]?["isError"] == .bool(false), "\(again)")
        server.child.terminate()
        #expect(await server.child.exit() == 0)
    }

    /// A session of the handshake era (2025-11-25), initialized: its POST.
    static func handshakeSession(port: Int, token: String) throws -> (JSONValue) throws -> LoopbackClient.Response {
        let common = [
            ("Authorization", "Bearer \(token)"), ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ]
        let initialize: JSONValue = [
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": [
                "protocolVersion": "2025-11-25", "capabilities": [:], "clientInfo": ["name": "tests", "version": "1"],
            ],
        ]
        let opened = try LoopbackClient.request(
            port: port, "POST", "/mcp", headers: common, body: try JSONCoding.encode(initialize))
        let session = try #require(opened.header("Mcp-Session-Id"), "\(opened.text)")
        let headers = common + [("Mcp-Session-Id", session), ("MCP-Protocol-Version", "2025-11-25")]
        let post = { (message: JSONValue) throws -> LoopbackClient.Response in
            try LoopbackClient.request(
                port: port, "POST", "/mcp", headers: headers, body: try JSONCoding.encode(message))
        }
        #expect(try post(["jsonrpc": "2.0", "method": "notifications/initialized"]).status == 202)
        return post
    }

    /// With `--allow-writes`, two agents' sessions over HTTP: A's `TEMP`
    /// table `t` is on A's own connection, so B's INSERT INTO t reaches the
    /// real table (it went into A's temporary one when the sessions shared
    /// a connection), and A's goes into A's own.
    @Test func agentsWriteOnTheirOwnConnections() async throws {
        let (directory, path) = try await Self.database()
        defer { withExtendedLifetime(directory) {} }
        let server = try PipedChild(SQLiveBinary.path, ["--mcp", "--http", "0", "--allow-writes", path])
        defer { server.child.terminate() }
        let announced = try ReadOnlyServerTests.lines(from: server, count: 2)
        let port = try #require(URLComponents(string: announced[0])?.port)
        let token = String(announced[1].dropFirst("Authorization: Bearer ".count))
        let a = try Self.handshakeSession(port: port, token: token)
        let b = try Self.handshakeSession(port: port, token: token)
        func query(_ post: (JSONValue) throws -> LoopbackClient.Response, _ sql: String) throws {
            let call: JSONValue = [
                "jsonrpc": "2.0", "id": 5, "method": "tools/call",
                "params": ["name": "query", "arguments": ["sql": .string(sql)]],
            ]
            let answer = try Self.message(try post(call))
            #expect(answer["result"]?["isError"] == .bool(false), "\(sql): \(answer)")
        }
        try query(a, "CREATE TEMP TABLE t(name TEXT)")
        try query(b, "INSERT INTO t(name) VALUES ('from-b')")
        try query(a, "INSERT INTO t(name) VALUES ('from-a')")
        #expect(try await Self.names(path) == "a,b,c,from-b")
        server.child.terminate()
        #expect(await server.child.exit() == 0)
    }
}
