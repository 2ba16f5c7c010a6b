import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import NIOCore
import SQLiveEngine
import SQLiveLocks
import SQLiveProtocol
import SystemPackage

/// `sqlive --web [[HOST:]PORT] DATABASE`: the live page (docs/web.md).
///
/// Serves one page, `/`, and the JSON-RPC server over a WebSocket, `/rpc`:
/// the same methods and notifications as `--rpc`, the language server's
/// included, one JSON-RPC message per text frame. Each WebSocket is a
/// session of its own (`ServerSession`, fed in-process: no pipe, no
/// descriptor and no thread of its own while idle) over one database
/// opened here: its live queries are its own, and a
/// query several tabs watch is evaluated once.
///
/// The first line of the output is the page's URL with its token; every
/// request without the token is refused, `Host` and `Origin` are checked,
/// and the database is read-only unless `--allow-writes`.
public enum WebServer {
    public struct Options: Sendable {
        public var allowWrites: Bool
        /// The live queries' refresh budget (`.some(nil)`: no limit), nil
        /// for the engine's.
        public var refreshBudget: Duration??
        /// A file holding the token, instead of one made up.
        public var tokenFile: String?
        /// Live queries the page watches when it opens (`--web --demo`:
        /// the leaderboard), by name and SQL.
        public var watches: [(name: String, sql: String)] = []

        public init(allowWrites: Bool = false, refreshBudget: Duration?? = nil, tokenFile: String? = nil) {
            self.allowWrites = allowWrites
            self.refreshBudget = refreshBudget
            self.tokenFile = tokenFile
        }
    }

    /// Serves until SIGINT or SIGTERM.
    ///
    /// - returns: 0, or 1 when the database, the token file or the address
    ///   cannot be used.
    public static func run(
        database path: String?, address: HTTPListener.Address, options: Options,
        timeouts: HTTPListener.Timeouts = HTTPListener.Timeouts()
    ) async -> Int32 {
        ProcessMemory.mapLargeBlocks()
        guard let token = HTTPListener.token(file: options.tokenFile) else { return 1 }
        let shown = path ?? ":memory:"
        var liveQueries = LiveQueryOptions(resultByteCap: RPCServer.maximumMessageLength - (64 << 10))
        if let budget = options.refreshBudget { liveQueries.refreshBudget = budget }
        var databaseOptions = LiveDatabase.Options(liveQueries: liveQueries)
        databaseOptions.readonly = !options.allowWrites
        let database: LiveDatabase
        do {
            database = try await LiveDatabase.open(DatabaseLocation(shown), options: databaseOptions)
        } catch {
            ServerLog.error("cannot open \(shown): \(error.description)")
            return 1
        }
        let site = WebSite(
            database: database, shownPath: shown, token: token, databaseOptions: databaseOptions,
            watches: options.watches)
        let status = await HTTPListener.serve(
            address: address, router: site.router, webSocket: { head, _, _ in site.upgrade(head) }, timeouts: timeouts,
            announce: { port in
                site.setOrigins(HTTPListener.origins(host: address.urlHost, port: port))
                // The first line of the output: the page, with its token.
                FileHandle.standardOutput.write(Data("http://\(address.urlHost):\(port)/?token=\(token)\n".utf8))
            },
            stopping: { site.endAll() })
        await database.close()
        return status
    }

    /// A page serving a database someone else opened, and its live
    /// queries (the REPL's `.web`): the page shows them, and what it
    /// watches joins them. Its owner stops it.
    public final class Shared: Sendable {
        /// The page's address, with its token.
        public let url: String
        private let site: WebSite
        private let running: HTTPListener.Running

        fileprivate init(url: String, site: WebSite, running: HTTPListener.Running) {
            self.url = url
            self.site = site
            self.running = running
        }

        public func stop() async {
            site.endAll()
            await running.stop()
        }
    }

    /// Serves `database` and its live queries (its `directory`) as the
    /// page, until `stop`; nil when it cannot listen.
    public static func start(sharing database: LiveDatabase, shownAs shownPath: String, address: HTTPListener.Address)
        async -> Shared?
    {
        let token = HTTPListener.randomToken()
        let site = WebSite(
            database: database, shownPath: shownPath, token: token, databaseOptions: LiveDatabase.Options(),
            watches: [], liveQueries: database.directory)
        guard
            let running = await HTTPListener.start(
                address: address, router: site.router,
                webSocket: { head, _, _ in
                    site.upgrade(head)
                })
        else { return nil }
        site.setOrigins(HTTPListener.origins(host: address.urlHost, port: running.port))
        return Shared(
            url: "http://\(address.urlHost):\(running.port)/?token=\(token)", site: site, running: running)
    }
}

/// The page and its WebSockets, over one database.
final class WebSite: Sendable {
    let database: LiveDatabase
    let shownPath: String
    let token: String
    let databaseOptions: LiveDatabase.Options
    /// What the page watches when it opens, as JSON for its script.
    let watches: String

    // Mutable State: guarded by the mutex; the handlers' tasks reach it.
    private struct State {
        var origins: Set<String> = []
        /// What ends each open WebSocket's input, to call at the stop.
        var inputs: [Int: @Sendable () -> Void] = [:]
        var next = 0
        var ended = false
        /// The WebSockets being served (each with a connection of its own).
        var clients = 0
    }

    /// The most WebSockets served at once: each tab has a SQLite
    /// connection of its own. One more is closed as it opens, with 1013
    /// (try again later) and why.
    static let maximumClients = 64

    /// The most bytes waiting to be sent to one tab: two of the longest
    /// messages.
    static let outboxLimit = 2 * RPCServer.maximumMessageLength
    private let state = Locked(State())

    /// The live queries every page shares (the REPL's), or nil: each
    /// page has its own.
    let liveQueries: LiveQueryDirectory?

    init(
        database: LiveDatabase, shownPath: String, token: String, databaseOptions: LiveDatabase.Options,
        watches: [(name: String, sql: String)], liveQueries: LiveQueryDirectory? = nil
    ) {
        self.liveQueries = liveQueries
        self.database = database
        self.shownPath = shownPath
        self.token = token
        self.databaseOptions = databaseOptions
        let list = JSONValue.array(watches.map { ["name": .string($0.name), "sql": .string($0.sql)] })
        // Inside a <script>: no "</" can close it.
        self.watches = String(decoding: (try? JSONCoding.encode(list)) ?? Array("[]".utf8), as: UTF8.self)
            .replacingOccurrences(of: "</", with: "<\\/")
    }

    /// `/` and `/rpc` (when it is not a WebSocket: why).
    var router: Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.get("/") { request, _ in self.page(request) }
        router.get("/rpc") { request, _ in self.refusedUpgrade(request) }
        return router
    }

    func setOrigins(_ origins: Set<String>) {
        state.withLock { $0.origins = origins }
    }

    /// Why a request is refused (the token in the query or an
    /// `Authorization: Bearer` header, `Host`, and the `Origin` when a
    /// browser sends one, as it always does for a WebSocket); nil when it
    /// may go on.
    private func refusal(
        authority: String?, origin: String?, query: String?, authorization: String?, needsOrigin: Bool
    ) -> Response? {
        guard HTTPListener.isAcceptedHost(authority) else {
            return HTTPListener.refusal(
                .misdirectedRequest, "the Host header must name this machine by address or localhost")
        }
        if let origin {
            guard state.withLock({ $0.origins.contains(origin.lowercased()) }) else {
                return HTTPListener.refusal(.forbidden, "requests from the origin \(origin) are refused")
            }
        } else if needsOrigin {
            return HTTPListener.refusal(.forbidden, "a WebSocket needs the page's Origin")
        }
        let given = Self.token(in: query)
        let inQuery = HTTPListener.constantTimeEqual(given, token)
        let inHeader = HTTPListener.isBearer(authorization, token: token)
        guard inQuery || inHeader else {
            return HTTPListener.refusal(
                .unauthorized, "this page needs the address sqlive printed at start-up, with its ?token=")
        }
        return nil
    }

    static func token(in query: String?) -> String {
        guard let query else { return "" }
        for pair in query.split(separator: "&") where pair.hasPrefix("token=") {
            return String(pair.dropFirst(6)).removingPercentEncoding ?? ""
        }
        return ""
    }

    /// `/`: the page.
    func page(_ request: Request) -> Response {
        if let refused = refusal(
            authority: request.head.authority, origin: request.headers[.origin], query: request.uri.query,
            authorization: request.headers[.authorization], needsOrigin: false)
        {
            return refused
        }
        let mode = database.info.readonly ? "read-only" : "read-write"
        let html = WebPage.html
            .replacingOccurrences(of: "{{DATABASE}}", with: Self.escaped(shownPath))
            .replacingOccurrences(of: "{{MODE}}", with: mode)
            .replacingOccurrences(of: "{{WATCHES}}", with: watches)
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
                HTTPField.Name("X-Content-Type-Options")!: "nosniff", HTTPField.Name("Referrer-Policy")!: "no-referrer",
                HTTPField.Name("X-Frame-Options")!: "DENY", .contentSecurityPolicy: WebPage.contentSecurityPolicy,
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// `/rpc` when it was not upgraded: why.
    func refusedUpgrade(_ request: Request) -> Response {
        refusal(
            authority: request.head.authority, origin: request.headers[.origin], query: request.uri.query,
            authorization: request.headers[.authorization], needsOrigin: true)
            ?? HTTPListener.refusal(.upgradeRequired, "/rpc is a WebSocket")
    }

    /// Whether a request becomes a WebSocket: `/rpc`, with the token, from
    /// the page's origin.
    func upgrade(_ head: HTTPRequest) -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>>
    {
        let path = head.path ?? ""
        let (route, query) =
            path.firstIndex(of: "?").map { (String(path[..<$0]), String(path[path.index(after: $0)...])) }
            ?? (path, nil)
        guard route == "/rpc",
            refusal(
                authority: head.authority, origin: head.headerFields[.origin], query: query,
                authorization: head.headerFields[.authorization], needsOrigin: true) == nil
        else { return .dontUpgrade }
        return .upgrade([:]) { [self] inbound, outbound, _ in
            await self.serve(inbound: inbound, outbound: outbound)
        }
    }

    /// One WebSocket: a JSON-RPC session until either side closes it,
    /// with a connection of its own to the database (when the page serves
    /// a file of its own: `.web` shares the REPL's).
    private func serve(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async {
        let admitted = state.withLock { state -> Bool in
            guard state.clients < Self.maximumClients else { return false }
            state.clients += 1
            return true
        }
        guard admitted else {
            try? await outbound.close(
                .unknown(1013),
                reason: "this server already serves \(Self.maximumClients) tabs, each with a connection of its own: "
                    + "close one")
            return
        }
        defer { state.withLock { $0.clients -= 1 } }
        if liveQueries == nil && ConnectionGate.isNearDescriptorLimit {
            ServerLog.warning("a tab is closed as it opens: the process is near its limit of open files")
            try? await outbound.close(
                .unknown(1013), reason: "this server is near its limit of open files: close a tab, or try again later")
            return
        }
        var client: ClientConnection?
        if liveQueries == nil {
            do {
                client = try database.makeClientConnection()
            } catch {
                ServerLog.warning("cannot open a connection for a tab: \(error.description)")
                try? await outbound.close(
                    .unexpectedServerError, reason: "cannot open a connection: \(error.description)")
                return
            }
        }
        defer { client?.close() }
        await serve(inbound: inbound, outbound: outbound, client: client)
    }

    private func serve(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, client: ClientConnection?
    ) async {
        // The connection's output, message by message, handed by its
        // writer's sink to a bounded outbox (a tab that reads slowly gets
        // each live query's latest state; one too far behind is closed).
        // In-process: no pipe, no descriptor, no thread of the tab's own.
        let outbox = WebOutbox(limit: Self.outboxLimit)
        let writer = MessageWriter(
            output: .sink { bytes in
                if !outbox.push(bytes) {
                    ServerLog.warning("a tab fell too far behind reading its messages: its WebSocket is closed")
                }
            }, framing: .newline, maximumLength: RPCServer.maximumMessageLength)
        let session = ServerSession(
            writer: writer, databaseOptions: databaseOptions, sharing: database, liveQueries: liveQueries,
            client: client)
        session.language.start()
        await session.startShared()
        let connection = Connection(
            writer: writer, session: session, served: .webRPC, maximumMessageLength: RPCServer.maximumMessageLength)
        let key = state.withLock { state -> Int? in
            guard !state.ended else { return nil }
            state.next += 1
            state.inputs[state.next] = { connection.endInput() }
            return state.next
        }
        if key == nil { connection.endInput() }
        let running = Task {
            _ = await connection.runPushed()
            _ = writer.flush()
            writer.stop()
            outbox.finish()
        }
        // The session's messages to the page, one text frame each; when the
        // session ends (the server stops), the WebSocket is closed.
        let sending = Task {
            while let line = await outbox.next() {
                do {
                    try await outbound.write(.text(String(decoding: line, as: UTF8.self)))
                } catch {
                    return
                }
            }
            if outbox.overflowed {
                try? await outbound.close(
                    .policyViolation, reason: "this tab fell more than 128 MiB behind reading its messages")
            } else {
                try? await outbound.close(.goingAway, reason: "the session ended")
            }
        }
        // The page's messages to the session: one JSON-RPC message per
        // frame, handed over compact.
        do {
            for try await message in inbound.messages(maxSize: RPCServer.maximumMessageLength) {
                let bytes: [UInt8]
                switch message {
                case .text(let text): bytes = Array(text.utf8)
                case .binary(let buffer): bytes = Array(buffer: buffer)
                }
                let line: [UInt8]
                if let value = try? JSONCoding.decode(JSONValue.self, from: bytes),
                    let compact = try? JSONCoding.encode(value)
                {
                    line = compact
                } else {
                    // Not JSON: as it came, for the parse error.
                    line = bytes
                }
                if !connection.receive(line) { break }
            }
        } catch {
            ServerLog.debug("a WebSocket ended: \(error)")
        }
        // The page left: what its connection had open is rolled back at
        // once (a statement running is interrupted; the requests still
        // queued fail), off this task, since a statement waiting for a
        // lock ends at its busy timeout only. Then the session ends, its
        // live queries with it.
        if let client { Thread.detachNewThread { client.close() } }
        if let key { _ = state.withLock { $0.inputs.removeValue(forKey: key) } }
        connection.endInput()
        await running.value
        outbox.finish()
        sending.cancel()
        await sending.value
    }

    /// Ends every WebSocket's session (the server stops).
    func endAll() {
        let inputs = state.withLock { state -> [@Sendable () -> Void] in
            state.ended = true
            defer { state.inputs = [:] }
            return Array(state.inputs.values)
        }
        for end in inputs { end() }
    }
}

extension ServedProtocol where Session == ServerSession {
    /// JSON-RPC over the live page's WebSocket: the LSP's lifecycle and
    /// cancellation, one message per line on the session's pipe (the
    /// WebSocket frames them).
    static var webRPC: ServedProtocol {
        var served = ServedProtocol.jsonRPC
        served.framing = .newline
        return served
    }
}
