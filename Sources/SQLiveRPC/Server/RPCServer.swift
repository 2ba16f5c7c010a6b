import Foundation
import SQLiveEngine

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
    public static func run(database: String?, readonly: Bool) async -> Int32 {
        let output = StandardIO.takeOverStandardOutput()
        let writer = MessageWriter(fileDescriptor: output)
        let session = Session(writer: writer)
        await session.openAtStart(path: database ?? ":memory:", readonly: readonly)
        let connection = Connection(writer: writer, session: session, maximumMessageLength: maximumMessageLength)
        return await connection.run(input: StandardIO.chunks(of: STDIN_FILENO))
    }
}
