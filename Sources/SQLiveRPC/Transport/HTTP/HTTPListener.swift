import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import SQLiveLocks

/// What sqlive's network listeners share (`--mcp --http`, `--web`): where
/// they listen, their token, the checks every request passes, and a
/// Hummingbird application run until SIGINT or SIGTERM.
///
/// A listener binds 127.0.0.1 unless given a host; every request needs
/// the token; a `Host` that is not an IP address or `localhost` is refused
/// (421) and an `Origin` other than the listener's own (403), so that a
/// web page elsewhere cannot reach it through DNS rebinding.
public enum HTTPListener {
    /// Where to listen: `PORT`, `HOST:PORT` or `[IPv6]:PORT`; port 0 picks
    /// a free one.
    public struct Address: Hashable, Sendable {
        public var host: String
        public var port: Int

        public init(host: String = "127.0.0.1", port: Int = 0) {
            self.host = host
            self.port = port
        }

        public init?(_ text: String) {
            var host = "127.0.0.1"
            var portText = text
            if let colon = text.lastIndex(of: ":") {
                host = String(text[..<colon])
                portText = String(text[text.index(after: colon)...])
                if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
                if host.isEmpty { return nil }
            }
            guard let port = UInt16(portText) else { return nil }
            self.host = host == "localhost" ? "127.0.0.1" : host
            self.port = Int(port)
        }

        var isLoopback: Bool { host == "::1" || host.hasPrefix("127.") }

        /// How a URL names the host.
        var urlHost: String { host.contains(":") ? "[\(host)]" : host }
    }

    /// How long a connection may keep a request unfinished (docs/mcp.md,
    /// docs/web.md, "Bounds").
    public struct Timeouts: Hashable, Sendable {
        /// A request's line and headers must all arrive within this of the
        /// connection opening; a connection that sends nothing for this long
        /// in the middle of a request's body, or between two requests, is
        /// closed too (`--http-timeout`). A response being written, a stream
        /// of events or a WebSocket is never cut by it.
        public var request: Duration

        public static let defaultRequest = Duration.seconds(10)

        public init(request: Duration = Self.defaultRequest) {
            self.request = request
        }

        var timeAmount: TimeAmount {
            let (seconds, attoseconds) = request.components
            return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        }
    }

    /// 32 random bytes, in hexadecimal.
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// The token in a file (16 characters or more, no spaces), or why not.
    static func token(fromFile path: String) -> Result<String, ListenerFailure> {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            return .failure(ListenerFailure("cannot read the token file \(path)"))
        }
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard token.count >= 16, !token.contains(where: \.isWhitespace) else {
            return .failure(ListenerFailure("the token in \(path) must be at least 16 characters, without spaces"))
        }
        return .success(token)
    }

    /// The token: read from `file` when one is given (nil, said on
    /// standard error, when it cannot be), else made up.
    static func token(file: String?) -> String? {
        guard let file else { return randomToken() }
        switch token(fromFile: file) {
        case .success(let token): return token
        case .failure(let failure):
            ServerLog.error("\(failure.message)")
            return nil
        }
    }

    struct ListenerFailure: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }

    /// Whether a `Host` header names this machine as a client of it does:
    /// by IP address or `localhost` (a DNS name is how rebinding comes in).
    static func isAcceptedHost(_ header: String?) -> Bool {
        guard var host = header?.lowercased(), !host.isEmpty else { return false }
        if host.hasPrefix("[") {
            guard let end = host.firstIndex(of: "]") else { return false }
            return host[host.index(after: host.startIndex)..<end].contains(":")
        }
        if let colon = host.lastIndex(of: ":") {
            guard UInt16(host[host.index(after: colon)...]) != nil else { return false }
            host = String(host[..<colon])
        }
        if host == "localhost" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { UInt8($0) != nil }
    }

    /// The origins a browser may send: the listener's own address, and its
    /// `localhost` spelling.
    static func origins(host: String, port: Int) -> Set<String> {
        ["http://\(host):\(port)", "http://localhost:\(port)", "http://127.0.0.1:\(port)"]
    }

    /// Whether an `Authorization` header carries `token` as a bearer
    /// token: the scheme compared without regard to case (RFC 7235:
    /// `bearer TOKEN` and `BEARER TOKEN` too), then one or more spaces,
    /// then the token, compared in constant time.
    static func isBearer(_ authorization: String?, token: String) -> Bool {
        guard let authorization, let given = bearerCredentials(authorization) else { return false }
        return constantTimeEqual(given, token)
    }

    /// The credentials of a `Bearer` authorization, or nil for another scheme.
    static func bearerCredentials(_ authorization: String) -> String? {
        let field = authorization.trimmingCharacters(in: .whitespaces)
        guard let space = field.firstIndex(of: " "),
            field[..<space].lowercased() == "bearer"
        else { return nil }
        return field[space...].trimmingCharacters(in: .whitespaces)
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let (x, y) = (Array(a.utf8), Array(b.utf8))
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for index in 0..<min(x.count, y.count) { difference |= x[index] ^ y[index] }
        return difference == 0
    }

    /// A plain-text refusal.
    static func refusal(_ status: HTTPResponse.Status, _ message: String, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(
            status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: message + "\n")))
    }

    /// Runs an application on `address` until SIGINT or SIGTERM: `announce`
    /// is given the port it listens on, once it does; `stopping` runs at
    /// the signal, before the server stops (it ends what streams).
    ///
    /// - returns: 0, or 1 when it cannot listen.
    static func serve(
        address: Address, router: Router<BasicRequestContext>, webSocket: WebSocketUpgrade? = nil,
        timeouts: Timeouts = Timeouts(), announce: @escaping @Sendable (Int) -> Void,
        stopping: @escaping @Sendable () async -> Void
    ) async -> Int32 {
        let termination = Termination()
        guard let running = await start(address: address, router: router, webSocket: webSocket, timeouts: timeouts)
        else { return 1 }
        announce(running.port)
        await termination.wait()
        await stopping()
        await running.stop()
        return 0
    }

    /// What decides whether a request becomes a WebSocket.
    typealias WebSocketUpgrade =
        @Sendable (HTTPRequest, any Channel, Logger) async throws -> ShouldUpgradeResult<
            WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>
        >

    /// A listener running; its owner stops it.
    final class Running: Sendable {
        let port: Int
        private let task: Task<Void, Never>

        init(port: Int, task: Task<Void, Never>) {
            self.port = port
            self.task = task
        }

        /// A graceful stop, two seconds at most: a browser may hold a
        /// connection open (the process's end closes it).
        func stop() async {
            task.cancel()
            let stopped = AsyncStream<Void>.makeStream()
            let waiting = Task { [task] in
                await task.value
                stopped.continuation.yield()
            }
            let timer = Task {
                try? await Task.sleep(for: .seconds(2))
                stopped.continuation.yield()
            }
            var first = stopped.stream.makeAsyncIterator()
            _ = await first.next()
            timer.cancel()
            waiting.cancel()
        }
    }

    /// Starts an application on `address`; nil when it cannot listen.
    static func start(
        address: Address, router: Router<BasicRequestContext>, webSocket: WebSocketUpgrade? = nil,
        timeouts: Timeouts = Timeouts()
    ) async -> Running? {
        signal(SIGPIPE, SIG_IGN)
        var logger = Logger(label: "sqlive.http")
        logger.logLevel = .critical
        let started = AsyncStream<Int?>.makeStream()
        // Every connection passes the gate first (a head in time, room for
        // it); then Hummingbird's idle time-out closes one silent in the
        // middle of a body or between requests.
        let gate = ConnectionGate(timeout: timeouts.request)
        let http1 = HTTP1Channel.Configuration(idleTimeout: timeouts.timeAmount)
        let server: HTTPServerBuilder =
            if let webSocket {
                // A frame may be as long as a message may be (64 MiB): the
                // default, 16 KiB, closed a page's WebSocket at the first
                // long statement typed. Over it, NIO closes the WebSocket
                // with 1009 (message too big) before reading the payload.
                HTTPServerBuilder { responder in
                    GatedChannel(
                        inner: HTTP1WebSocketUpgradeChannel(
                            responder: responder,
                            configuration: .init(
                                http1: http1,
                                ws: WebSocketServerConfiguration(maxFrameSize: RPCServer.maximumMessageLength)),
                            shouldUpgrade: webSocket),
                        gate: gate)
                }
            } else {
                HTTPServerBuilder { responder in
                    GatedChannel(inner: HTTP1Channel(responder: responder, configuration: http1), gate: gate)
                }
            }
        let app = Application(
            router: router, server: server,
            configuration: ApplicationConfiguration(
                address: .hostname(address.host, port: address.port), serverName: nil),
            onServerRunning: { channel in started.continuation.yield(channel.localAddress?.port) },
            logger: logger)
        let task = Task {
            do {
                try await app.runService(gracefulShutdownSignals: [])
            } catch {
                ServerLog.error("cannot listen on \(address.host):\(address.port): \(error)")
            }
            started.continuation.yield(nil)
        }
        var ports = started.stream.makeAsyncIterator()
        guard let port = await ports.next() ?? nil else {
            task.cancel()
            return nil
        }
        if !address.isLoopback {
            ServerLog.warning("listening beyond loopback, on \(address.host): anyone who can reach it needs the token")
        }
        return Running(port: port, task: task)
    }

    /// SIGINT and SIGTERM, caught from before the listener announces
    /// itself (a signal sent as soon as the URL is read stops it cleanly).
    final class Termination: Sendable {
        // Mutable State: guarded by the mutex; the signal queue and the
        // waiting task reach it.
        private struct State {
            var signalled = false
            var waiter: CheckedContinuation<Void, Never>?
            var sources: [any DispatchSourceSignal] = []
        }
        private let state = Locked(State())

        init() {
            var sources: [any DispatchSourceSignal] = []
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { [weak self] in self?.fire() }
                source.resume()
                sources.append(source)
            }
            state.withLock { $0.sources = sources }
        }

        private func fire() {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.signalled = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }

        /// Returns at the first signal (at once if one came already).
        func wait() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.signalled { return true }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
            let sources = state.withLock { state in
                defer { state.sources = [] }
                return state.sources
            }
            for source in sources { source.cancel() }
        }
    }
}

extension HTTPField.Name {
    static let mcpSessionID = HTTPField.Name("Mcp-Session-Id")!
    static let mcpProtocolVersion = HTTPField.Name("MCP-Protocol-Version")!
    static let mcpMethod = HTTPField.Name("Mcp-Method")!
    static let mcpName = HTTPField.Name("Mcp-Name")!
    static let xAccelBuffering = HTTPField.Name("X-Accel-Buffering")!
}

extension ResponseBody {
    /// A body written as a stream of events is made: each element at once.
    /// A write that fails (the client left) calls `abandon`.
    static func events(_ stream: MCPHTTPSession.EventStream) -> ResponseBody {
        ResponseBody { writer in
            do {
                for await chunk in stream.events {
                    try await writer.write(ByteBuffer(bytes: chunk))
                }
                try await writer.finish(nil)
            } catch {
                stream.abandon()
                throw error
            }
        }
    }
}
