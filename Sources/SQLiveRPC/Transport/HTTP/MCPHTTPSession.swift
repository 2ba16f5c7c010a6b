import Foundation
import SQLiveLocks
import SQLiveProtocol

/// One MCP session served over HTTP: the same `Connection`, dispatcher and
/// `MCPSession` as over stdio, fed in-process: each message is handed to
/// the connection (`Connection.receive`) and each message it writes comes
/// back through its writer's sink, with no pipe, no descriptor and no
/// thread of the session's own. An idle session costs memory only: its
/// connection's lane and writer threads end when idle (`RequestQueue`,
/// `MessageWriter`), and start again at its next request.
///
/// Each request's id is replaced by one of the session's own on the way
/// in (`h1`, `h2`…) and given back on the way out: several clients share
/// the stateless era's session, and may each send id 1. The writer's sink
/// (`deliver`) hands each response to the HTTP request that waits for it,
/// a listen's frames to its event stream, and the handshake era's
/// notifications to the session's GET stream.
///
/// Owner: `MCPHTTPServer`, which ends it (`end`) when the client deletes
/// it, it idles out, or the server stops; the connection's task ends with
/// it.
final class MCPHTTPSession: Sendable {
    /// `Mcp-Session-Id` (the handshake era's), or "stateless".
    let key: String

    // Mutable State of the input: guarded by the mutex, which also makes
    // messages reach the connection one at a time, in the order they take
    // it. Until the connection is made (`MCPSession.open` is async), the
    // messages wait in `queued`, in order; `closed` is set once by `end`,
    // after which nothing more is handed over and the connection's input
    // ends (after the queued messages).
    private struct Input {
        var connection: Connection<MCPSession>?
        var queued: [[UInt8]] = []
        var closed = false
    }
    private let input = Locked(Input())

    /// What a request waits for.
    private enum Pending {
        /// One JSON response (a plain HTTP response).
        case reply(original: JSONValue, CheckedContinuation<[UInt8], Never>)
        /// Server-Sent Events: a listen's frames, or a long call's answer
        /// after keep-alive comments.
        case stream(original: JSONValue, AsyncStream<[UInt8]>.Continuation)

        var original: JSONValue {
            switch self {
            case .reply(let original, _), .stream(let original, _): original
            }
        }

        /// Answers the request with one message, and ends it.
        func answer(_ encoded: [UInt8]) {
            switch self {
            case .reply(_, let continuation):
                continuation.resume(returning: encoded)
            case .stream(_, let continuation):
                continuation.yield(ServerSentEvent.message(encoded))
                continuation.finish()
            }
        }
    }

    // Mutable State: guarded by the mutex; changed by the HTTP handlers'
    // tasks and the reader thread.
    private struct State {
        var pending: [String: Pending] = [:]
        var next = 0
        /// The handshake era's GET stream, if one is open.
        var events: AsyncStream<[UInt8]>.Continuation?
        var ended = false
        var lastActive = ContinuousClock.now
    }
    private let state = Locked(State())

    private init(key: String) {
        self.key = key
    }

    /// Starts a session over a session of MCP's (`makeSession` makes it,
    /// writing to the writer it is given).
    static func start(
        key: String, maximumMessageLength: Int, threads: ThreadBudget? = nil,
        makeSession: @escaping @Sendable (MessageWriter) async -> MCPSession
    ) -> MCPHTTPSession {
        let session = MCPHTTPSession(key: key)
        let writer = MessageWriter(
            output: .sink { [weak session] bytes in session?.deliver(bytes) }, framing: .newline,
            maximumLength: maximumMessageLength)
        Task {
            let mcp = await makeSession(writer)
            let connection = Connection(
                writer: writer, session: mcp, served: .mcp, maximumMessageLength: maximumMessageLength,
                threads: threads)
            session.attach(connection)
            _ = await connection.runPushed()
            _ = writer.flush()
            writer.stop()
            session.connectionEnded()
        }
        return session
    }

    /// Hands the connection the messages that waited for it.
    private func attach(_ connection: Connection<MCPSession>) {
        input.withLock { input in
            for message in input.queued { connection.receive(message) }
            input.queued = []
            input.connection = connection
            if input.closed { connection.endInput() }
        }
    }

    /// Its last activity, and whether it is busy (a stream open or a
    /// request waiting), for `MCPSessionPolicy`.
    var activity: MCPSessionPolicy.Activity<ContinuousClock.Instant> {
        state.withLock { .init(lastActive: $0.lastActive, busy: $0.events != nil || !$0.pending.isEmpty) }
    }

    /// Ends the session: its input ends, so its listens end, its requests
    /// are answered, and its live queries are dropped.
    func end() {
        let first = state.withLock { state -> Bool in
            defer { state.ended = true }
            return !state.ended
        }
        guard first else { return }
        input.withLock { input in
            input.closed = true
            input.connection?.endInput()
        }
    }

    /// A request: its answer, one JSON-RPC response.
    func request(_ message: [String: JSONValue]) async -> [UInt8] {
        let original = message["id"] ?? .null
        return await withCheckedContinuation { continuation in
            guard let line = admit(message, as: .reply(original: original, continuation)) else {
                continuation.resume(returning: Self.ended(original))
                return
            }
            send(line)
        }
    }

    /// A request answered as Server-Sent Events: a listen's frames, or a
    /// long call's answer after keep-alive comments. A client that goes
    /// away (`abandon`) cancels it.
    func streamedRequest(_ message: [String: JSONValue]) -> EventStream {
        let original = message["id"] ?? .null
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
        guard let line = admit(message, as: .stream(original: original, continuation)) else {
            continuation.yield(ServerSentEvent.message(Self.ended(original)))
            continuation.finish()
            return EventStream(events: stream, abandon: {})
        }
        let inner = line.inner
        let keepAlive = Self.keepAlive(continuation)
        continuation.onTermination = { _ in keepAlive.cancel() }
        send(line)
        return EventStream(events: stream) { [weak self] in
            continuation.finish()
            // Still waiting: the client left (or the server is stopping).
            guard let self, self.state.withLock({ $0.pending.removeValue(forKey: inner) }) != nil else { return }
            self.send(Self.cancel(inner))
        }
    }

    /// Server-Sent Events for one HTTP response, and what to do when its
    /// client goes away (the response's write failed).
    struct EventStream: Sendable {
        let events: AsyncStream<[UInt8]>
        let abandon: @Sendable () -> Void
    }

    /// A comment now and then, so that a client that left is noticed at
    /// the next write; cancelled when the stream ends.
    private static func keepAlive(_ continuation: AsyncStream<[UInt8]>.Continuation) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.keepAliveInterval)
                if case .terminated = continuation.yield(ServerSentEvent.keepAlive) { return }
            }
        }
    }

    /// How often an idle event stream gets a comment: the client's read
    /// time-out is far longer, and a client that left is noticed at the
    /// next write.
    static let keepAliveInterval = Duration.seconds(5)

    /// A notification from the client (a cancellation names the request
    /// by the id the client gave it).
    ///
    /// A cancellation matches a request of this session only: in the
    /// handshake era, the session is the client's, and the request it
    /// names is answered at once with the cancelled error (-32800: an HTTP
    /// request is always answered, though MCP sends no answer to a
    /// cancelled request) and no longer waits. In the stateless era every
    /// client shares this session and chooses its own ids (two may both be
    /// waiting on id 1), so a cancellation could name another client's
    /// request: there it matches none, and a client cancels its request by
    /// closing that request's connection (HTTP/1.1 carries one request at a
    /// time on a connection, so no other request can name it).
    func notify(_ message: [String: JSONValue]) {
        var message = message
        touch()
        if message["method"]?.stringValue == MCPProtocol.Notification.cancelled {
            guard key != Self.statelessKey, var params = message["params"]?.objectValue,
                let id = params["requestId"]
            else { return }
            let found = state.withLock { state -> (inner: String, waiting: Pending)? in
                guard let inner = state.pending.first(where: { $0.value.original == id })?.key,
                    let waiting = state.pending.removeValue(forKey: inner)
                else { return nil }
                return (inner, waiting)
            }
            guard let found else { return }
            params["requestId"] = .string(found.inner)
            message["params"] = .object(params)
            if let bytes = try? JSONCoding.encode(JSONValue.object(message)) { send(bytes) }
            Self.answerCancelled(found.waiting)
            return
        }
        if let bytes = try? JSONCoding.encode(JSONValue.object(message)) { send(bytes) }
    }

    /// The stateless era's session's key.
    static let statelessKey = "stateless"

    /// Answers a cancelled request with -32800.
    private static func answerCancelled(_ waiting: Pending) {
        let message: JSONValue = [
            "jsonrpc": "2.0", "id": waiting.original,
            "error": ResponseError(.requestCancelled, "cancelled by notifications/cancelled").json,
        ]
        waiting.answer((try? JSONCoding.encode(message)) ?? [])
    }

    /// The handshake era's GET stream: the session's notifications, until
    /// the client leaves; nil when one is open already.
    func eventStream() -> EventStream? {
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
        let opened = state.withLock { state -> Bool in
            guard state.events == nil, !state.ended else { return false }
            state.events = continuation
            return true
        }
        guard opened else { return nil }
        let keepAlive = Self.keepAlive(continuation)
        continuation.onTermination = { _ in keepAlive.cancel() }
        return EventStream(events: stream) { [weak self] in
            continuation.finish()
            self?.state.withLock { $0.events = nil }
            self?.touch()
        }
    }

    private func touch() {
        state.withLock { $0.lastActive = .now }
    }

    /// The request's line for the connection, under an id of the
    /// session's; nil once the session ended.
    private func admit(_ message: [String: JSONValue], as pending: Pending) -> (bytes: [UInt8], inner: String)? {
        var message = message
        let inner = state.withLock { state -> String? in
            guard !state.ended else { return nil }
            state.next += 1
            state.lastActive = .now
            let inner = "h\(state.next)"
            state.pending[inner] = pending
            return inner
        }
        guard let inner else { return nil }
        message["id"] = .string(inner)
        guard let bytes = try? JSONCoding.encode(JSONValue.object(message)) else { return nil }
        return (bytes, inner)
    }

    private func send(_ line: (bytes: [UInt8], inner: String)) {
        send(line.bytes)
    }

    private func send(_ bytes: [UInt8]) {
        let accepted = input.withLock { input -> Bool in
            guard !input.closed else { return false }
            guard let connection = input.connection else {
                input.queued.append(bytes)
                return true
            }
            return connection.receive(bytes)
        }
        if !accepted {
            // The session ended: `connectionEnded` answers what waits.
            ServerLog.debug("an HTTP session's input is closed")
        }
    }

    private static func cancel(_ inner: String) -> [UInt8] {
        let message: JSONValue = [
            "jsonrpc": "2.0", "method": .string(MCPProtocol.Notification.cancelled),
            "params": ["requestId": .string(inner), "reason": "the HTTP client went away"],
        ]
        return (try? JSONCoding.encode(message)) ?? []
    }

    /// The answer to a request the session can no longer serve.
    private static func ended(_ id: JSONValue) -> [UInt8] {
        let message: JSONValue = [
            "jsonrpc": "2.0", "id": id,
            "error": ResponseError.internalError("the session ended").json,
        ]
        return (try? JSONCoding.encode(message)) ?? []
    }

    // MARK: - The connection's output

    /// The connection ended: what still waits is told so.
    private func connectionEnded() {
        input.withLock { input in
            input.closed = true
            input.connection = nil
        }
        let (pending, events) = state.withLock { state in
            state.ended = true
            defer {
                state.pending = [:]
                state.events = nil
            }
            return (state.pending, state.events)
        }
        for (_, waiting) in pending {
            switch waiting {
            case .reply(let original, let continuation):
                continuation.resume(returning: Self.ended(original))
            case .stream(_, let continuation):
                continuation.finish()
            }
        }
        events?.finish()
    }

    /// One message the connection wrote (on its writer's thread).
    private func deliver(_ bytes: [UInt8]) {
        guard case .object(var message) = try? JSONCoding.decode(JSONValue.self, from: bytes) else {
            ServerLog.warning("an HTTP session wrote a line that is not a JSON object")
            return
        }
        if message["method"] == nil, let id = message["id"] {
            // A response: to the request that waits for it.
            guard let inner = id.stringValue,
                let waiting = state.withLock({ state -> Pending? in
                    state.lastActive = .now
                    return state.pending.removeValue(forKey: inner)
                })
            else {
                ServerLog.debug("dropped a response no HTTP request waits for (id \(id))")
                return
            }
            message["id"] = waiting.original
            Self.restoreStamp(&message, "result", waiting.original)
            waiting.answer((try? JSONCoding.encode(JSONValue.object(message))) ?? bytes)
            return
        }
        // A notification: a listen's (stamped with its id), or the session's.
        if let stamp = message["params"]?["_meta"]?[MCPProtocol.Meta.subscriptionID]?.stringValue {
            let listen = state.withLock { state -> Pending? in state.pending[stamp] }
            guard case .stream(let original, let continuation) = listen else { return }
            Self.restoreStamp(&message, "params", original)
            let encoded = (try? JSONCoding.encode(JSONValue.object(message))) ?? bytes
            continuation.yield(ServerSentEvent.message(encoded))
            return
        }
        let events = state.withLock { $0.events }
        events?.yield(ServerSentEvent.message(bytes))
    }

    /// Gives a listen's frames back the id the client chose.
    private static func restoreStamp(_ message: inout [String: JSONValue], _ member: String, _ original: JSONValue) {
        guard var body = message[member]?.objectValue, var meta = body["_meta"]?.objectValue,
            meta[MCPProtocol.Meta.subscriptionID] != nil
        else { return }
        meta[MCPProtocol.Meta.subscriptionID] = original
        body["_meta"] = .object(meta)
        message[member] = .object(body)
    }
}

/// One Server-Sent Event of type `message` carrying a JSON-RPC message
/// (no `id:` line: the SDK's client would try to resume a stream that had
/// one), or a comment that keeps an idle stream alive.
enum ServerSentEvent {
    static func message(_ json: [UInt8]) -> [UInt8] {
        Array("event: message\ndata: ".utf8) + json + Array("\n\n".utf8)
    }

    static let keepAlive = Array(": ping\n\n".utf8)
}
