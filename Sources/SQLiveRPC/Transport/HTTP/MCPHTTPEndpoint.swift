import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import SQLiveLocks
import SQLiveProtocol

/// The `/mcp` endpoint: checks each HTTP request (token, `Host`, `Origin`,
/// content types, the stateless era's headers), finds its session, and
/// answers with the session's JSON-RPC response, or with a stream of
/// Server-Sent Events for a listen, a `wait` and the handshake era's GET.
final class Endpoint: Sendable {
    let hub: MCPHub
    let token: String
    let options: MCPServer.Options
    /// How many sessions, for how long (`--max-sessions`, `--session-idle`).
    let policy: MCPSessionPolicy

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
    /// Ends idle sessions every `policy.sweepInterval`; owned by the
    /// endpoint, cancelled when the server stops.
    let sweeper: Task<Void, Never>

    init(hub: MCPHub, token: String, options: MCPServer.Options, policy: MCPSessionPolicy = MCPSessionPolicy()) {
        self.hub = hub
        self.token = token
        self.options = options
        self.policy = policy
        let sweep = Locked<Endpoint?>(nil)
        let interval = policy.sweepInterval
        sweeper = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                sweep.withLock { $0 }?.sweep()
            }
        }
        sweep.withLock { $0 = self }
    }

    func setOrigins(_ origins: Set<String>) {
        state.withLock { $0.origins = origins }
    }

    func handle(_ request: Request) async -> Response {
        if let refusal = check(request) { return refusal }
        switch request.method {
        case .post: return await post(request)
        case .get: return get(request)
        case .delete: return delete(request)
        default:
            return HTTPListener.refusal(
                .methodNotAllowed, "/mcp takes POST, GET and DELETE", headers: [.allow: "GET, POST, DELETE"])
        }
    }

    // MARK: - Checks

    /// The token, `Host` and `Origin`: nil when the request may go on.
    private func check(_ request: Request) -> Response? {
        guard HTTPListener.isAcceptedHost(request.head.authority) else {
            return HTTPListener.refusal(
                .misdirectedRequest, "the Host header must name this machine by address or localhost")
        }
        if let origin = request.headers[.origin] {
            let allowed = state.withLock { $0.origins.contains(origin.lowercased()) }
            if !allowed { return HTTPListener.refusal(.forbidden, "requests from the origin \(origin) are refused") }
        }
        guard HTTPListener.isBearer(request.headers[.authorization], token: token) else {
            return HTTPListener.refusal(
                .unauthorized, "a bearer token is required (the one sqlive printed at start-up)",
                headers: [.wwwAuthenticate: "Bearer"])
        }
        return nil
    }

    // MARK: - POST

    private func post(_ request: Request) async -> Response {
        let contentType = request.headers[.contentType]?.lowercased() ?? ""
        guard contentType.hasPrefix("application/json") else {
            return Self.error(.badRequest, .invalidRequest("the body must be application/json"))
        }
        let accept = request.headers[.accept]?.lowercased() ?? "*/*"
        guard accept.contains("application/json") || accept.contains("*/*") || accept.contains("text/event-stream")
        else {
            return HTTPListener.refusal(
                .notAcceptable, "the client must accept application/json and text/event-stream")
        }
        var request = request
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: options.maximumMessageLength)
        } catch {
            return Self.error(.contentTooLarge, .invalidRequest("the message is longer than allowed, or was cut"))
        }
        let parsed: JSONValue
        do {
            parsed = try JSONCoding.decode(JSONValue.self, from: Array(buffer: body))
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
            return Response(status: .accepted)
        }
        let isRequest = message["id"] != nil
        let stamped = message["params"]?["_meta"]?[MCPProtocol.Meta.protocolVersion] != nil
        let versionHeader = request.headers[.mcpProtocolVersion]
        let modern =
            method != MCPProtocol.Method.initialize
            && (stamped || versionHeader.map { MCPProtocol.modernVersions.contains($0) } == true)

        let session: MCPHTTPSession
        var headers: HTTPFields = [:]
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
        } else if let key = request.headers[.mcpSessionID] {
            guard let found = liveSession(key) else {
                return Self.error(.notFound, .invalidRequest("Session not found: \(key)"), id: message["id"])
            }
            session = found
        } else if method == MCPProtocol.Method.initialize {
            switch newSession() {
            case .made(let made):
                session = made
                headers[.mcpSessionID] = made.key
            case .stopping:
                return Self.error(.serviceUnavailable, .internalError("the server is stopping"), id: message["id"])
            case .full(let retryAfter):
                return Self.busy(retryAfter: retryAfter, id: message["id"])
            }
        } else {
            return Self.error(
                .badRequest, .invalidRequest("Missing session ID: send initialize first, or the Mcp-Session-Id header"),
                id: message["id"])
        }

        guard isRequest else {
            session.notify(message)
            return Response(status: .accepted, headers: headers)
        }
        let streamed =
            method == MCPProtocol.Method.subscriptionsListen
            || (method == MCPProtocol.Method.toolsCall && message["params"]?["name"]?.stringValue == "wait")
        if streamed {
            headers[.contentType] = "text/event-stream"
            headers[.cacheControl] = "no-cache"
            headers[.xAccelBuffering] = "no"
            return Response(status: .ok, headers: headers, body: .events(session.streamedRequest(message)))
        }
        let answer = await session.request(message)
        headers[.contentType] = "application/json"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer)))
    }

    /// The stateless era's headers against the body (as the SDK's server
    /// checks them): nil when they agree.
    private static func headerMismatch(_ request: Request, method: String, message: [String: JSONValue]) -> String? {
        let versions = request.headers[values: .mcpProtocolVersion]
        let methods = request.headers[values: .mcpMethod]
        if versions.count > 1 || methods.count > 1 { return "a header is repeated" }
        guard let version = versions.first else { return "MCP-Protocol-Version is missing" }
        let bodyVersion = message["params"]?["_meta"]?[MCPProtocol.Meta.protocolVersion]?.stringValue
        if let bodyVersion, version != bodyVersion {
            return "MCP-Protocol-Version \(version) is not the body's \(bodyVersion)"
        }
        guard let methodHeader = methods.first else { return "Mcp-Method is missing" }
        if methodHeader != method { return "Mcp-Method \(methodHeader) is not the body's \(method)" }
        let named: String? =
            switch method {
            case MCPProtocol.Method.toolsCall, "prompts/get": message["params"]?["name"]?.stringValue
            case MCPProtocol.Method.resourcesRead: message["params"]?["uri"]?.stringValue
            default: nil
            }
        if let named {
            let names = request.headers[values: .mcpName]
            if names.count > 1 { return "Mcp-Name is repeated" }
            guard let name = names.first else { return "Mcp-Name is missing" }
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

    private func get(_ request: Request) -> Response {
        let session: MCPHTTPSession
        switch handshakeSession(request) {
        case .success(let found): session = found
        case .failure(let refusal): return refusal.response
        }
        guard (request.headers[.accept] ?? "").lowercased().contains("text/event-stream") else {
            return HTTPListener.refusal(.notAcceptable, "GET opens a stream of events: accept text/event-stream")
        }
        guard let stream = session.eventStream() else {
            return HTTPListener.refusal(.conflict, "this session has a stream open already")
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache", .xAccelBuffering: "no"],
            body: .events(stream))
    }

    private func delete(_ request: Request) -> Response {
        let session: MCPHTTPSession
        switch handshakeSession(request) {
        case .success(let found): session = found
        case .failure(let refusal): return refusal.response
        }
        state.withLock { _ = $0.sessions.removeValue(forKey: session.key) }
        session.end()
        return Response(status: .ok)
    }

    /// The session a GET or DELETE names (405 without one: the stateless
    /// era has no stream and nothing to delete).
    private func handshakeSession(_ request: Request) -> Result<MCPHTTPSession, Refusal> {
        guard let key = request.headers[.mcpSessionID] else {
            return .failure(
                Refusal(
                    HTTPListener.refusal(
                        .methodNotAllowed, "GET and DELETE need a session (Mcp-Session-Id)", headers: [.allow: "POST"]))
            )
        }
        guard let session = liveSession(key) else {
            return .failure(Refusal(Self.error(.notFound, .invalidRequest("Session not found: \(key)"))))
        }
        return .success(session)
    }

    struct Refusal: Error {
        var response: Response
        init(_ response: Response) { self.response = response }
    }

    // MARK: - Sessions

    private func makeSession(key: String) -> MCPHTTPSession {
        let hub = self.hub
        let options = self.options
        // A session of the handshake era is one client's: its writes run on
        // a connection of its own. The stateless era's is every client's.
        let connections = key == MCPHTTPSession.statelessKey ? nil : clientConnections
        return MCPHTTPSession.start(
            key: key, maximumMessageLength: options.maximumMessageLength, threads: hub.threads
        ) { writer in
            await MCPSession.open(
                sharing: hub.database, unavailable: hub.unavailable, shownAs: hub.shownPath, options: options,
                writer: writer, connections: connections, readers: hub.readers)
        }
    }

    /// The handshake sessions' own connections, counted.
    private let clientConnections = MCPOwnConnection.Slots()

    /// What `initialize` gets.
    private enum NewSession {
        case made(MCPHTTPSession)
        case stopping
        /// As many sessions as `policy` allows exist: try again later.
        case full(retryAfter: Int)
    }

    /// A new session, unless the server is stopping or full. Sessions that
    /// idled out are ended first, so a full server has none.
    private func newSession() -> NewSession {
        let now = ContinuousClock.now
        let (verdict, expired) = state.withLock { state -> (NewSession?, [MCPHTTPSession]) in
            guard !state.ended else { return (.stopping, []) }
            let expired = Self.removeExpired(&state, policy: policy, at: now)
            let activity = state.sessions.values.map(\.activity)
            if case .refuse(let seconds) = policy.admission(activity, at: now) {
                return (.full(retryAfter: seconds), expired)
            }
            return (nil, expired)
        }
        for session in expired { session.end() }
        if let verdict {
            if case .full = verdict { logFull() }
            return verdict
        }
        let key = HTTPListener.randomToken()
        let session = makeSession(key: key)
        let kept = state.withLock { state -> NewSession in
            guard !state.ended else { return .stopping }
            // Another `initialize` may have taken the last place meanwhile.
            if case .refuse(let seconds) = policy.admission(state.sessions.values.map(\.activity), at: now) {
                return .full(retryAfter: seconds)
            }
            state.sessions[key] = session
            return .made(session)
        }
        if case .made = kept { return kept }
        session.end()
        return kept
    }

    /// The handshake session named `key`, unless it expired (then it is
    /// ended now, and nil: its requests get 404, as for any unknown one).
    private func liveSession(_ key: String) -> MCPHTTPSession? {
        let now = ContinuousClock.now
        let (found, expired) = state.withLock { state -> (MCPHTTPSession?, MCPHTTPSession?) in
            guard let session = state.sessions[key] else { return (nil, nil) }
            guard policy.isExpired(session.activity, at: now) else { return (session, nil) }
            state.sessions.removeValue(forKey: key)
            return (nil, session)
        }
        expired?.end()
        return found
    }

    /// Removes the sessions expired at `now`, and returns them (to end,
    /// outside the lock).
    private static func removeExpired(_ state: inout State, policy: MCPSessionPolicy, at now: ContinuousClock.Instant)
        -> [MCPHTTPSession]
    {
        let expired = state.sessions.values.filter { policy.isExpired($0.activity, at: now) }
        for session in expired { state.sessions.removeValue(forKey: session.key) }
        return expired
    }

    /// One log line per refusal burst: the first, then one a minute at most.
    private let lastFullLog = Locked<ContinuousClock.Instant?>(nil)

    private func logFull() {
        let now = ContinuousClock.now
        let log = lastFullLog.withLock { last -> Bool in
            if let last, last.duration(to: now) < .seconds(60) { return false }
            last = now
            return true
        }
        if log {
            let message =
                "refusing new MCP sessions: \(policy.maximumSessions) are open (--max-sessions); idle ones end after "
                + "\(policy.idleLimit) (--session-idle)"
            ServerLog.warning("\(message)")
        }
    }

    private func statelessSession() -> MCPHTTPSession? {
        if let session = state.withLock({ $0.stateless }) { return session }
        let made = makeSession(key: MCPHTTPSession.statelessKey)
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
        let idle = state.withLock { state in Self.removeExpired(&state, policy: policy, at: now) }
        for session in idle { session.end() }
    }

    /// Ends every session (the server stops).
    func endAll() {
        sweeper.cancel()
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

    /// The server is full: 503, `Retry-After`, and a JSON-RPC error
    /// (-32030) saying so.
    private static func busy(retryAfter: Int, id: JSONValue?) -> Response {
        var response = error(
            .serviceUnavailable,
            ResponseError(
                ErrorCode(rawValue: serverBusyCode),
                "Too many sessions: this server keeps at most its --max-sessions at once; retry after \(retryAfter) s, "
                    + "or end a session (DELETE)"),
            id: id)
        response.headers[.retryAfter] = String(retryAfter)
        return response
    }

    /// The JSON-RPC error code of a refusal for want of room (sessions,
    /// connections): -32030, with HTTP 503 and `Retry-After`.
    static let serverBusyCode = -32030

    /// A JSON-RPC error in an `application/json` body, which the SDK's
    /// client reports as it is.
    private static func error(_ status: HTTPResponse.Status, _ error: ResponseError, id: JSONValue? = nil) -> Response {
        let message: JSONValue = ["jsonrpc": "2.0", "id": id ?? .null, "error": error.json]
        let body = (try? JSONCoding.encode(message)) ?? []
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}
