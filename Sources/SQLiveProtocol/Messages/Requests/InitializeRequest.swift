/// The first request of a session: the client introduces itself, the server
/// answers with what it serves.
///
/// Any other request before it is answered with -32002. The result is shaped
/// like the Language Server Protocol's, so that generic LSP clients can start
/// sqlive: `serverInfo` and `capabilities`, which list the methods served.
///
/// ```json
/// --> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "vim"}}}
/// <-- {"jsonrpc": "2.0", "id": 1, "result": {"serverInfo": {"name": "sqlive", "version": "0.1.0"},
///      "capabilities": {"protocolVersion": "1.0", "methods": ["database/open", ...], ...}}}
/// ```
public enum InitializeRequest: RequestType {
    public static let method = "initialize"

    public struct Params: Codable, Sendable {
        /// Who the client is, for the server's log.
        public var clientInfo: ClientInfo?
        /// The client's process id, as LSP clients send it; unused.
        public var processId: Int?

        public init(clientInfo: ClientInfo? = nil, processId: Int? = nil) {
            self.clientInfo = clientInfo
            self.processId = processId
        }
    }

    public struct ClientInfo: Codable, Sendable {
        public var name: String
        public var version: String?

        public init(name: String, version: String? = nil) {
            self.name = name
            self.version = version
        }
    }

    public struct Result: Codable, Sendable {
        public var serverInfo: ServerInfo
        public var capabilities: ServerCapabilities

        public init(serverInfo: ServerInfo, capabilities: ServerCapabilities) {
            self.serverInfo = serverInfo
            self.capabilities = capabilities
        }
    }

    public struct ServerInfo: Codable, Sendable {
        /// Always `"sqlive"`.
        public var name: String
        public var version: String

        public init(name: String, version: String) {
            self.name = name
            self.version = version
        }
    }

    /// What the server does, for clients that adapt to it.
    public struct ServerCapabilities: Codable, Sendable {
        /// The version of this protocol; it changes only incompatibly.
        public var protocolVersion: String
        /// The request methods served.
        public var methods: [String]
        /// The notifications the server sends.
        public var notifications: [String]
        /// The notifications the server understands.
        public var clientNotifications: [String]
        /// The most rows `query/execute` returns per statement without `maxRows`.
        public var defaultMaxRows: Int
        /// The largest message accepted, in bytes.
        public var maximumMessageLength: Int
        /// Whether `liveQuery/register` and `liveQuery/update` take `diff: true`.
        public var liveQueryDiff: Bool

        public init(
            protocolVersion: String, methods: [String], notifications: [String], clientNotifications: [String],
            defaultMaxRows: Int, maximumMessageLength: Int, liveQueryDiff: Bool
        ) {
            self.protocolVersion = protocolVersion
            self.methods = methods
            self.notifications = notifications
            self.clientNotifications = clientNotifications
            self.defaultMaxRows = defaultMaxRows
            self.maximumMessageLength = maximumMessageLength
            self.liveQueryDiff = liveQueryDiff
        }
    }
}
