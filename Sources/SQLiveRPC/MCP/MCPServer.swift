import Foundation
import SQLiveEngine
import SQLiveProtocol

/// The Model Context Protocol server of `sqlive --mcp` (docs/mcp.md).
///
/// AI assistants in editors start it as a subprocess and speak JSON-RPC
/// over its standard input and output, one message per line. It serves the
/// tools `query`, `explain`, `schema`, `watch` and `unwatch`, and the
/// resources `sqlive://schema` and `sqlive://live/{name}`, which clients
/// subscribe to. The database opens read-only unless writes are allowed;
/// either way the agent's statements are confined by SQLite itself
/// (`ConfinedReader`), one statement per call, within a time limit, a row
/// cap and a size cap.
///
/// ```swift
/// let status = await MCPServer.run(database: "games.sqlite", options: .init())
/// ```
public enum MCPServer {
    /// What the server allows the agent.
    public struct Options: Sendable {
        /// Whether the agent's statements may write (`--allow-writes`).
        public var allowWrites: Bool
        /// The time limit, row cap and size cap of every call.
        public var limits: ConfinedReader.Limits
        /// The longest message accepted, in bytes (64 MiB).
        public var maximumMessageLength: Int
        /// The agent's live queries' refresh budget (`--refresh-budget`;
        /// `.some(nil)`: no limit), nil for the engine's.
        public var refreshBudget: Duration??

        public init(
            allowWrites: Bool = false, limits: ConfinedReader.Limits = ConfinedReader.Limits(),
            maximumMessageLength: Int = 64 << 20
        ) {
            self.allowWrites = allowWrites
            self.limits = limits
            self.maximumMessageLength = maximumMessageLength
        }
    }

    /// Serves standard input and output until the input ends.
    ///
    /// - returns: The exit code (0).
    public static func run(database: String?, options: Options) async -> Int32 {
        ProcessMemory.mapLargeBlocks()
        let output = StandardIO.takeOverStandardOutput()
        return await serve(input: STDIN_FILENO, output: output, database: database, options: options)
    }

    /// Serves one client over two file descriptors until the input ends;
    /// neither descriptor is closed.
    public static func serve(
        input: Int32, output: Int32, database: String?, options: Options, directory: URL? = nil
    ) async -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        let writer = MessageWriter(
            fileDescriptor: output, framing: .newline, maximumLength: options.maximumMessageLength)
        let path = ServerSession.resolve(database ?? ":memory:", in: directory)
        let session = await MCPSession.open(
            path: path, shownAs: database ?? ":memory:", options: options, writer: writer)
        let connection = Connection(
            writer: writer, session: session, served: .mcp, maximumMessageLength: options.maximumMessageLength)
        _ = await connection.run(input: input)
        if !writer.flush() {
            ServerLog.warning("the client did not read the last messages")
        }
        writer.stop()
        return 0
    }
}
