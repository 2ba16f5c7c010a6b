import FlyingFox
import Foundation
import SQLiveLocks
import SQLiveProtocol

/// FlyingFox has a JSON of its own.
private typealias JSON = SQLiveProtocol.JSONValue

/// The `/mcp` endpoint: checks each HTTP request (token, `Host`, `Origin`,
/// content types, the stateless era's headers), finds its session, and
/// answers with the session's JSON-RPC response, or with a stream of
/// Server-Sent Events for a listen, a `wait` and the handshake era's GET.
final class Endpoint: Sendable {
    let hub: MCPHub
    let token: String
    let options: MCPServer.Options

    // Mutable State: guarded by the mutex; any handler's task reaches it.
    private struct State {
        /// The handshake era's sessions, by `Mcp-Session-Id`.
        var sessions: [String: MCPHTTPSession] = [:]
        /// The stateless era's one session, made at its first request.
        var stateless: MCPHTTPSession?
        /// Origins a browser may send: the server's own address.
        var origins: Set<String> = []
        var ended = false
    }
    private let state = Locked(State())

    /// A handshake session idle this long, with no stream open and no
    /// request waiting, is ended.
    static let idleLimit = Duration.seconds(30 * 60)

    init(hub: MCPHub, token: String, options: MCPServer.Options) {
        self.hub = hub
        self.token = token
        self.options = options
    }

    /// The server's own origin (`http://127.0.0.1:PORT`), and its
    /// `localhost` spelling.
    func setOrigin(_ url: String) {
        guard let components = URLComponents(string: url), let port = components.port else { return }
        let host = components.host ?? "127.0.0.1"
        let shown = host.contains(":") ? "[\(host)]" : host
        state.withLock {
            $0.origins = ["http://\(shown):\(port)", "http://localhost:\(port)", "http://127.0.0.1:\(port)"]
        }
    }

    func handle(_ request: HTTPRequest) async -> HTTPResponse {
        if let refusal = check(request) { return refusal }
        switch request.method {
        case .POST: return await post(request)
        case .GET: return get(request)
        case .DELETE: return delete(request)
        default:
            return HTTPResponse(statusCode: .methodNotAllowed, headers: HTTPHeaders([HTTPHeader("Allow"): "GET, POST, DELETE"]))
        }
    }

    // MARK: - Checks

    /// The token, `Host` and `Origin`: nil when the request may go on.
    private func check(_ request: HTTPRequest) -> HTTPResponse? {
        // DNS rebinding: a name other than localhost is refused; an IP
        // address or localhost is what a client of this machine uses.
        guard let host = request.headers[.host], Self.isAcceptedHost(host) else {
            return Self.refusal(.misdirectedRequest, "the Host header must name this machine by address or localhost")
        }
        if let origin = request.headers[HTTPHeader("Origin")] {
            let allowed = state.withLock { $0.origins.contains(origin.lowercased()) }
            if !allowed { return Self.refusal(.forbidden, "requests from the origin \(origin) are refused") }
        }
        let given = request.headers[.authorization] ?? ""
        let expected = "Bearer \(token)"
        guard Self.constantTimeEqual(given, expected) else {
            return Self.refusal(
                .unauthorized, "a bearer token is required (the one sqlive printed at start-up)",
                headers: [HTTPHeader("WWW-Authenticate"): "Bearer"])
        }
        return nil
    }

    static func isAcceptedHost(_ header: String) -> Bool {
        var host = header.lowercased()
        if host.hasPrefix("[") {
            guard let end = host.firstIndex(of: "]") else { return false }
            host = String(host[host.index(after: host.startIndex)..<end])
            return host.contains(":")
        }
        if let colon = host.lastIndex(of: ":") {
            guard UInt16(host[host.index(after: colon)...]) != nil else { return false }
            host = String(host[..<colon])
        }
        if host == "localhost" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { UInt8($0) != nil }
    }

    private static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let (x, y) = (Array(a.utf8), Array(b.utf8))
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for index in 0..<min(x.count, y.count) { difference |= x[index] ^ y[index] }
        return difference == 0
    }

    // MARK: - POST

    private func post(_ request: HTTPRequest) async -> HTTPResponse {
        let contentType = request.headers[.contentType]?.lowercased() ?? ""
        guard contentType.hasPrefix("application/json") else {
            return Self.error(.badRequest, .invalidRequest("the body must be application/json"))
        }
        let accept = request.headers[HTTPHeader("Accept")]?.lowercased() ?? "*/*"
        guard accept.contains("application/json") || accept.contains("*/*") || accept.contains("text/event-stream")
        else {
            return Self.refusal(.notAcceptable, "the client must accept application/json and text/event-stream")
        }
        let body: Data
        do {
            body = try await request.bodyData
        } catch {
            return Self.error(.badRequest, .invalidRequest("the body could not be read"))
        }
        guard body.count <= options.maximumMessageLength else {
            return Self.error(
                .payloadTooLarge, .invalidRequest("the message is \(body.count) bytes long, more than allowed"))
        }
        let parsed: JSON
        do {
            parsed = try JSONCoding.decode(JSON.self, from: Array(body))
        } catch {
            return Self.error(.badRequest, .parseError("\(error)"))
        }
        guard case .object(let message) = parsed else {
            if case .array = parsed {
                return Self.error(.badRequest, .invalidRequest("batches are not served (MCP left them in 2025-06-18)"))
            }
            return Self.error(.badRequest, .invalidRequest("a message is a JSON object"))
        }
        guard let method = message["method"]?.stringValue else {
            // A response from the client: sqlive asks it nothing.
            return HTTPResponse(statusCode: .accepted)
        }
        let isRequest = message["id"] != nil
        let meta = message["params"]?["_meta"]
        let versionHeader = request.headers[HTTPHeader("MCP-Protocol-Version")]
        let stamped = meta?[MCPProtocol.Meta.protocolVersion] != nil
        let modern =
            method != MCPProtocol.Method.initialize
            && (stamped || versionHeader.map { MCPProtocol.modernVersions.contains($0) } == true)

        let session: MCPHTTPSession
        var headers: HTTPHeaders = [:]
        if modern {
            if let mismatch = Self.headerMismatch(request, method: method, message: message) {
                return Self.error(
                    .badRequest, ResponseError(ErrorCode(rawValue: -32020), "Header mismatch: \(mismatch)"),
                    id: message["id"])
            }
            guard let stateless = statelessSession() else {
                return Self.error(.serviceUnavailable, .internalError("the server is stopping"), id: message["id"])
            }
            session = stateless
        } else if let key = request.headers[HTTPHeader("Mcp-Session-Id")] {
            guard let found = state.withLock({ $0.sessions[key] }) else {
                return Self.error(.notFound, .invalidRequest("Session not found: \(key)"), id: message["id"])
            }
            session = found
        } else if method == MCPProtocol.Method.initialize {
            guard let made = newSession() else {
                return Self.error(.serviceUnavailable, .internalError("the server is stopping"), id: message["id"])
            }
            session = made
            headers[HTTPHeader("Mcp-Session-Id")] = made.key
        } else {
            return Self.error(
                .badRequest, .invalidRequest("Missing session ID: send initialize first, or the Mcp-Session-Id header"),
                id: message["id"])
        }

        guard isRequest else {
            session.notify(message)
            return HTTPResponse(statusCode: .accepted, headers: headers)
        }
        let streamed =
            method == MCPProtocol.Method.subscriptionsListen
            || (method == MCPProtocol.Method.toolsCall && message["params"]?["name"]?.stringValue == "wait")
        if streamed {
            headers[.contentType] = "text/event-stream"
            headers[.cacheControl] = "no-cache"
            headers[HTTPHeader("X-Accel-Buffering")] = "no"
            return HTTPResponse(
                statusCode: .ok, headers: headers, body: .streaming(session.streamedRequest(message)))
        }
        let answer = await session.request(message)
        headers[.contentType] = "application/json"
        return HTTPResponse(statusCode: .ok, headers: headers, body: Data(answer))
    }

    /// The stateless era's headers against the body (as the SDK's server
    /// checks them): nil when they agree.
    private static func headerMismatch(_ request: HTTPRequest, method: String, message: [String: JSON]) -> String? {
        func single(_ name: String) -> (String?, Bool) {
            let values = request.headers.values(for: HTTPHeader(name))
            return (values.first, values.count > 1)
        }
        let (version, versions) = single("MCP-Protocol-Version")
        let (methodHeader, methods) = single("Mcp-Method")
        if versions || methods { return "a header is repeated" }
        let bodyVersion = message["params"]?["_meta"]?[MCPProtocol.Meta.protocolVersion]?.stringValue
        if version == nil { return "MCP-Protocol-Version is missing" }
        if let bodyVersion, version != bodyVersion {
            return "MCP-Protocol-Version \(version!) is not the body's \(bodyVersion)"
        }
        guard let methodHeader else { return "Mcp-Method is missing" }
        if methodHeader != method { return "Mcp-Method \(methodHeader) is not the body's \(method)" }
        let named: String? =
            switch method {
            case MCPProtocol.Method.toolsCall, "prompts/get": message["params"]?["name"]?.stringValue
            case MCPProtocol.Method.resourcesRead: message["params"]?["uri"]?.stringValue
            default: nil
            }
        if let named {
            let (name, names) = single("Mcp-Name")
            if names { return "Mcp-Name is repeated" }
            guard let name else { return "Mcp-Name is missing" }
            if decodedHeader(name) != named { return "Mcp-Name is not the body's \(named)" }
        }
        return nil
    }

    /// A header value the client wrapped as `=?base64?…?=`, unwrapped.
    static func decodedHeader(_ value: String) -> String {
        guard value.hasPrefix("=?base64?"), value.hasSuffix("?="),
            let data = Data(base64Encoded: String(value.dropFirst(9).dropLast(2)))
        else { return value }
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: - GET and DELETE (the handshake era's)

    private func get(_ request: HTTPRequest) -> HTTPResponse {
        guard let session = handshakeSession(request) else {
            return Self.error(.methodNotAllowed, .invalidRequest("GET needs a session (Mcp-Session-Id)"))
        }
        guard case .success(let session) = session else {
            if case .failure(let refusal) = session { return refusal.response }
            return HTTPResponse(statusCode: .internalServerError)
        }
        let accept = request.headers[HTTPHeader("Accept")]?.lowercased() ?? ""
        guard accept.contains("text/event-stream") else {
            return Self.refusal(.notAcceptable, "GET opens a stream of events: accept text/event-stream")
        }
        guard let stream = session.eventStream() else {
            return Self.refusal(.conflict, "this session has a stream open already")
        }
        return HTTPResponse(
            statusCode: .ok,
            headers: HTTPHeaders([
                .contentType: "text/event-stream", .cacheControl: "no-cache", HTTPHeader("X-Accel-Buffering"): "no",
            ]),
            body: .streaming(stream))
    }

    private func delete(_ request: HTTPRequest) -> HTTPResponse {
        guard let session = handshakeSession(request) else {
            return Self.error(.methodNotAllowed, .invalidRequest("DELETE needs a session (Mcp-Session-Id)"))
        }
        guard case .success(let session) = session else {
            if case .failure(let refusal) = session { return refusal.response }
            return HTTPResponse(statusCode: .internalServerError)
        }
        state.withLock { _ = $0.sessions.removeValue(forKey: session.key) }
        session.end()
        return HTTPResponse(statusCode: .ok)
    }

    /// The session a GET or DELETE names; nil when it names none.
    private func handshakeSession(_ request: HTTPRequest) -> Result<MCPHTTPSession, ErrorResponse>? {
        guard let key = request.headers[HTTPHeader("Mcp-Session-Id")] else { return nil }
        guard let session = state.withLock({ $0.sessions[key] }) else {
            return .failure(ErrorResponse(Self.error(.notFound, .invalidRequest("Session not found: \(key)"))))
        }
        return .success(session)
    }

    struct ErrorResponse: Error {
        var response: HTTPResponse
        init(_ response: HTTPResponse) { self.response = response }
    }

    // MARK: - Sessions

    private func makeSession(key: String) -> MCPHTTPSession? {
        let hub = self.hub
        let options = self.options
        return try? MCPHTTPSession.start(key: key, maximumMessageLength: options.maximumMessageLength) { writer in
            await MCPSession.open(
                sharing: hub.database, unavailable: hub.unavailable, shownAs: hub.shownPath, options: options,
                writer: writer)
        }
    }

    private func newSession() -> MCPHTTPSession? {
        let key = MCPHTTPServer.randomToken()
        guard let session = makeSession(key: key) else { return nil }
        let kept = state.withLock { state -> Bool in
            guard !state.ended else { return false }
            state.sessions[key] = session
            return true
        }
        if !kept { session.end() }
        return kept ? session : nil
    }

    private func statelessSession() -> MCPHTTPSession? {
        if let session = state.withLock({ $0.stateless }) { return session }
        guard let made = makeSession(key: "stateless") else { return nil }
        let (session, extra) = state.withLock { state -> (MCPHTTPSession?, MCPHTTPSession?) in
            guard !state.ended else { return (nil, made) }
            if let existing = state.stateless { return (existing, made) }
            state.stateless = made
            return (made, nil)
        }
        extra?.end()
        return session
    }

    /// Ends the handshake sessions that idled out.
    func sweep() {
        let now = ContinuousClock.now
        let idle = state.withLock { state -> [MCPHTTPSession] in
            let idle = state.sessions.values.filter {
                !$0.hasEventStream && !$0.hasPending && now - $0.lastActive > Self.idleLimit
            }
            for session in idle { state.sessions.removeValue(forKey: session.key) }
            return idle
        }
        for session in idle { session.end() }
    }

    /// Ends every session (the server stops).
    func endAll() {
        let all = state.withLock { state -> [MCPHTTPSession] in
            state.ended = true
            defer {
                state.sessions = [:]
                state.stateless = nil
            }
            return Array(state.sessions.values) + (state.stateless.map { [$0] } ?? [])
        }
        for session in all { session.end() }
    }

    // MARK: - Responses

    private static func refusal(_ status: HTTPStatusCode, _ message: String, headers: HTTPHeaders = [:])
        -> HTTPResponse
    {
        var headers = headers
        headers[.contentType] = "text/plain; charset=utf-8"
        return HTTPResponse(statusCode: status, headers: headers, body: Data((message + "\n").utf8))
    }

    /// A JSON-RPC error in an `application/json` body, which the SDK's
    /// client reports as it is.
    private static func error(_ status: HTTPStatusCode, _ error: ResponseError, id: JSON? = nil) -> HTTPResponse {
        let message: JSON = ["jsonrpc": "2.0", "id": id ?? .null, "error": error.json]
        let body = (try? JSONCoding.encode(message)) ?? []
        return HTTPResponse(statusCode: status, headers: [.contentType: "application/json"], body: Data(body))
    }
}
