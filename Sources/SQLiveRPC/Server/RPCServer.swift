import Foundation
import SQLiveEngine
import SQLiveProtocol

/// The JSON-RPC 2.0 server of `sqlive --rpc`.
///
/// It speaks the Language Server Protocol's base protocol on standard input
/// and output: `Content-Length` framed JSON messages, an `initialize`,
/// `shutdown`, `exit` lifecycle, `$/cancelRequest`. See docs/protocol.md.
///
/// ```swift
/// let status = await RPCServer.run(database: "games.sqlite", readonly: false)
/// ```
public enum RPCServer {
    /// The version of the protocol that `initialize` reports.
    public static let protocolVersion = "1.0"

    /// The largest message accepted, in bytes (64 MiB).
    public static let maximumMessageLength = 64 << 20

    /// Serves standard input and output until `exit` or the end of input.
    ///
    /// The database is opened at start, as `database/open` would; without
    /// one (nil), an in-memory database is, as for `:memory:`. A failure is
    /// logged, and requests that need a database answer -32010 with the
    /// reason, until `database/open` succeeds.
    ///
    /// - returns: The exit code: 0 after `shutdown` then `exit`, or at the
    ///   end of input; 1 after `exit` without `shutdown`.
    ///
    /// - parameter refreshBudget: The live queries' refresh budget
    ///   (`--refresh-budget`; `.some(nil)`: no limit), nil for the engine's.
    public static func run(database: String?, readonly: Bool, refreshBudget: Duration?? = nil) async -> Int32 {
        ProcessMemory.mapLargeBlocks()
        let output = StandardIO.takeOverStandardOutput()
        return await serve(
            input: STDIN_FILENO, output: output, database: database, readonly: readonly, refreshBudget: refreshBudget)
    }

    /// Serves one client over two file descriptors (pipes, or the two ends
    /// of a socket pair) until `exit` or the end of the input, in this
    /// process; neither descriptor is closed.
    ///
    /// This is how tests serve a client without a process, and how a host
    /// program can embed the server. Relative database paths, on the
    /// command line or in `database/open`, are read from `directory` when
    /// given, from the current directory otherwise.
    ///
    /// ```swift
    /// let status = await RPCServer.serve(input: fromClient, output: toClient, database: nil, readonly: false)
    /// ```
    ///
    /// - returns: The exit code, as `run` returns it.
    public static func serve(
        input: Int32, output: Int32, database: String?, readonly: Bool, directory: URL? = nil,
        refreshBudget: Duration?? = nil
    ) async -> Int32 {
        // Writing to a client that went away fails with EPIPE instead of
        // killing the process.
        signal(SIGPIPE, SIG_IGN)
        let writer = MessageWriter(fileDescriptor: output, maximumLength: Self.maximumMessageLength)
        // A live query's result must fit in one notification: its values
        // are weighed as they are read, with room left for the rest.
        var liveQueries = LiveQueryOptions(resultByteCap: Self.maximumMessageLength - (64 << 10))
        if let refreshBudget { liveQueries.refreshBudget = refreshBudget }
        let session = ServerSession(
            writer: writer, directory: directory, databaseOptions: LiveDatabase.Options(liveQueries: liveQueries))
        session.language.start()
        await session.openAtStart(path: database ?? ":memory:", readonly: readonly)
        let connection = Connection(
            writer: writer, session: session, served: .jsonRPC, maximumMessageLength: maximumMessageLength)
        let status = await connection.run(input: input)
        writer.stop()
        return status
    }
}
