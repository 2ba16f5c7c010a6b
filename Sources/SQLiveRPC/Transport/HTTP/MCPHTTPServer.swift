import FlyingFox
import FlyingSocks
import Foundation
import SQLiveEngine
import SQLiveLocks
import SQLiveProtocol


/// `sqlive --mcp --http [HOST:]PORT DATABASE`: the Model Context Protocol
/// over its streamable HTTP transport, so that several agents share one
/// process, one watcher and one evaluation of each live query
/// (docs/mcp.md, "Over HTTP").
///
/// One endpoint, `/mcp`, in both eras of the protocol:
/// - the handshake era (2025-11-25): `initialize` makes a session
///   (`Mcp-Session-Id`) with live queries of its own; `GET` opens its
///   notification stream, `DELETE` ends it;
/// - the stateless era (2026-07-28): nothing ties two requests together,
///   so the process's stateless requests share one session; a
///   `subscriptions/listen` is answered as a stream of events.
///
/// Each session is an `MCPHTTPSession` over the database opened once here;
/// live queries named `shared:…` are seen by every session.
///
/// It listens on 127.0.0.1 unless given a host, requires the bearer token
/// it prints once (or reads from `--token-file`), refuses a `Host` that is
/// not an address or `localhost` (421) and a foreign `Origin` (403): a web
/// page elsewhere cannot reach it through DNS rebinding.
public enum MCPHTTPServer {
    /// Where to listen: `PORT`, `HOST:PORT` or `[IPv6]:PORT`; port 0 picks
    /// a free one.
    public struct Address: Hashable, Sendable {
        public var host: String
        public var port: UInt16

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
            self.port = port
        }

        var isIPv6: Bool { host.contains(":") }

        var isLoopback: Bool { host == "127.0.0.1" || host == "::1" || host.hasPrefix("127.") }
    }

    /// Serves until SIGINT or SIGTERM.
    ///
    /// - returns: The exit code: 0, or 1 when it cannot listen or the token
    ///   file cannot be read.
    public static func run(
        database: String?, address: Address, tokenFile: String?, options: MCPServer.Options
    ) async -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        let termination = Termination()
        ProcessMemory.mapLargeBlocks()
        let token: String
        if let tokenFile {
            guard let text = try? String(contentsOfFile: tokenFile, encoding: .utf8) else {
                ServerLog.error("cannot read the token file \(tokenFile)")
                return 1
            }
            token = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard token.count >= 16, !token.contains(where: \.isWhitespace) else {
                ServerLog.error("the token in \(tokenFile) must be at least 16 characters, without spaces")
                return 1
            }
        } else {
            token = Self.randomToken()
        }
        let hub = await MCPHub.open(database: database, options: options)
        let socketAddress: any SocketAddress
        do {
            socketAddress =
                address.isIPv6
                ? try sockaddr_in6.inet6(ip6: address.host, port: address.port)
                : try sockaddr_in.inet(ip4: address.host, port: address.port)
        } catch {
            ServerLog.error("cannot listen on \(address.host): not an IP address")
            await hub.close()
            return 1
        }
        let timeout = max(60, options.limits.time / .seconds(1) + 60)
        let server = HTTPServer(
            config: HTTPServer.Configuration(address: socketAddress, timeout: timeout, logger: .disabled))
        let endpoint = Endpoint(hub: hub, token: token, options: options)
        await server.appendRoute("/mcp") { request in await endpoint.handle(request) }
        await server.appendRoute("*") { _ in HTTPResponse(statusCode: .notFound) }
        let running = Task { try await server.run() }
        do {
            try await server.waitUntilListening(timeout: 10)
        } catch {
            running.cancel()
            ServerLog.error("cannot listen on \(address.host):\(address.port): \(error.localizedDescription)")
            await hub.close()
            return 1
        }
        guard let listening = await server.listeningAddress else {
            ServerLog.error("cannot listen on \(address.host):\(address.port)")
            await hub.close()
            return 1
        }
        if !address.isLoopback {
            ServerLog.warning("listening beyond loopback, on \(address.host): anyone who can reach it needs the token")
        }
        let url: String
        switch listening {
        case .ip4(let host, let port): url = "http://\(host):\(port)/mcp"
        case .ip6(let host, let port): url = "http://[\(host)]:\(port)/mcp"
        default: url = "http://\(address.host):\(address.port)/mcp"
        }
        endpoint.setOrigin(url)
        // The first lines of the output: where, and the token (once).
        let announcement =
            tokenFile == nil ? "\(url)\nAuthorization: Bearer \(token)\n" : "\(url)\nAuthorization: Bearer (from \(tokenFile!))\n"
        FileHandle.standardOutput.write(Data(announcement.utf8))
        let sweeper = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(30))
                endpoint.sweep()
            }
        }
        await termination.wait()
        sweeper.cancel()
        endpoint.endAll()
        await server.stop(timeout: 2)
        running.cancel()
        await hub.close()
        return 0
    }

    /// SIGINT and SIGTERM, caught from before the server announces itself
    /// (a signal sent as soon as the URL is read stops it cleanly).
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

    /// 32 random bytes, in hexadecimal.
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}

/// The database the sessions of one HTTP server share, opened once.
final class MCPHub: Sendable {
    let database: LiveDatabase?
    let unavailable: String?
    let shownPath: String

    private init(database: LiveDatabase?, unavailable: String?, shownPath: String) {
        self.database = database
        self.unavailable = unavailable
        self.shownPath = shownPath
    }

    static func open(database path: String?, options: MCPServer.Options) async -> MCPHub {
        let shownPath = path ?? ":memory:"
        var databaseOptions = LiveDatabase.Options()
        databaseOptions.readonly = !options.allowWrites
        if let budget = options.refreshBudget { databaseOptions.liveQueries.refreshBudget = budget }
        let database: LiveDatabase
        do {
            database = try await LiveDatabase.open(
                DatabaseLocation(ServerSession.resolve(shownPath, in: nil)), options: databaseOptions)
        } catch {
            ServerLog.warning("cannot open \(shownPath): \(error.description)")
            return MCPHub(
                database: nil, unavailable: "cannot open \(shownPath): \(error.description)", shownPath: shownPath)
        }
        if options.allowWrites && !database.info.readonly {
            do {
                try await database.confineSession()
            } catch {
                await database.close()
                return MCPHub(
                    database: nil, unavailable: "cannot confine the session's connection: \(error.description)",
                    shownPath: shownPath)
            }
        }
        return MCPHub(database: database, unavailable: nil, shownPath: shownPath)
    }

    func close() async {
        await database?.directory.unregisterAll()
        await database?.close()
    }
}
