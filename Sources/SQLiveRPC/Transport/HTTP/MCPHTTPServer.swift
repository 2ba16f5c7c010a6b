import Foundation
import Hummingbird
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
    /// Serves until SIGINT or SIGTERM; the first lines of the output are
    /// the endpoint's URL and the token (`Authorization: Bearer …`).
    ///
    /// - returns: The exit code: 0, or 1 when it cannot listen or the token
    ///   file cannot be read.
    public static func run(
        database: String?, address: HTTPListener.Address, tokenFile: String?, options: MCPServer.Options,
        policy: MCPSessionPolicy = MCPSessionPolicy(), timeouts: HTTPListener.Timeouts = HTTPListener.Timeouts()
    ) async -> Int32 {
        ProcessMemory.mapLargeBlocks()
        guard let token = HTTPListener.token(file: tokenFile) else { return 1 }
        let hub = await MCPHub.open(database: database, options: options)
        let endpoint = Endpoint(hub: hub, token: token, options: options, policy: policy)
        let router = Router(context: BasicRequestContext.self)
        for method: HTTPRequest.Method in [.post, .get, .delete, .put, .patch, .options, .head] {
            router.on("/mcp", method: method) { request, _ in await endpoint.handle(request) }
        }
        let status = await HTTPListener.serve(
            address: address, router: router, timeouts: timeouts,
            announce: { port in
                endpoint.setOrigins(HTTPListener.origins(host: address.urlHost, port: port))
                let url = "http://\(address.urlHost):\(port)/mcp"
                let shown = tokenFile.map { "(from \($0))" } ?? token
                // The first lines of the output: where, and the token (once).
                FileHandle.standardOutput.write(Data("\(url)\nAuthorization: Bearer \(shown)\n".utf8))
            },
            stopping: { endpoint.endAll() })
        await hub.close()
        return status
    }
}

/// The database the sessions of one HTTP server share, opened once, and
/// the confined readers and checker they share: a session opens no
/// connection of its own to read, so sessions cost no descriptor (a
/// session's own connection to write is opened at its first write).
final class MCPHub: Sendable {
    let database: LiveDatabase?
    let unavailable: String?
    let shownPath: String
    let readers: MCPSession.SharedReaders?

    /// How many agents' statements run at once, server-wide, each on a
    /// confined reader of its own; more wait for one.
    static let sharedReaders = 8
    /// How many threads run agents' calls at once, server-wide (each
    /// statement, explain, schema and `wait` holds one while it runs); more
    /// wait, in order, for one to be free.
    static let callThreads = 64
    /// How many `wait` calls may be under way at once, server-wide: half
    /// the call threads, so that waits never hold back every statement.
    static let serverWaits = 32

    /// The threads every session's calls share.
    let threads = ThreadBudget(maximum: MCPHub.callThreads)

    private init(
        database: LiveDatabase?, unavailable: String?, shownPath: String, readers: MCPSession.SharedReaders? = nil
    ) {
        self.database = database
        self.unavailable = unavailable
        self.shownPath = shownPath
        self.readers = readers
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
        let readers = await MCPSession.SharedReaders.open(
            database, options: options, capacity: Self.sharedReaders, waits: Self.serverWaits)
        return MCPHub(database: database, unavailable: nil, shownPath: shownPath, readers: readers)
    }

    func close() async {
        await database?.directory.unregisterAll()
        await database?.close()
    }
}
