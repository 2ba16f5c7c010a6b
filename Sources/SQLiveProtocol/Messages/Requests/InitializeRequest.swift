/// The first request of a session: the client introduces itself, the server
/// answers with what it serves.
///
/// Any other request before it is answered with -32002. The result is the
/// Language Server Protocol's: `serverInfo`, and standard `capabilities`
/// (document sync, completion, hover, code lenses, commands), with
/// sqlive's own methods under `capabilities.experimental.sqlive`.
///
/// ```json
/// --> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "vim"}}}
/// <-- {"jsonrpc": "2.0", "id": 1, "result": {"serverInfo": {"name": "sqlive", "version": "0.1.0"},
///      "capabilities": {"hoverProvider": true, ..., "experimental": {"sqlive": {"protocolVersion": "1.0",
///      "methods": ["database/open", ...], ...}}}}}
/// ```
public enum InitializeRequest: RequestType {
    public static let method = "initialize"

    public struct Params: Codable, Sendable {
        /// Who the client is, for the server's log.
        public var clientInfo: ClientInfo?
        /// The client's process id, as LSP clients send it; unused.
        public var processId: Int?
        /// The client's capabilities, as the LSP defines them; the server
        /// reads `general.positionEncodings`, `textDocument.hover.contentFormat`
        /// and `window.workDoneProgress`.
        public var capabilities: JSONValue?
        /// Options for sqlive: a database to open.
        public var initializationOptions: InitializationOptions?
        /// The workspace's root, where a relative database path is read.
        public var rootUri: String?
        public var rootPath: String?

        public init(
            clientInfo: ClientInfo? = nil, processId: Int? = nil, capabilities: JSONValue? = nil,
            initializationOptions: InitializationOptions? = nil, rootUri: String? = nil, rootPath: String? = nil
        ) {
            self.clientInfo = clientInfo
            self.processId = processId
            self.capabilities = capabilities
            self.initializationOptions = initializationOptions
            self.rootUri = rootUri
            self.rootPath = rootPath
        }

        /// The position encoding to use: UTF-8 when the client offers it,
        /// else the LSP's default, UTF-16.
        public var positionEncoding: PositionEncoding {
            let offered = capabilities?["general"]?["positionEncodings"]?.arrayValue ?? []
            return offered.contains(.string(PositionEncoding.utf8.rawValue)) ? .utf8 : .utf16
        }

        /// Whether the client would rather have hovers in plain text: its
        /// first choice in `textDocument.hover.contentFormat` (eglot without
        /// markdown-mode asks for `["plaintext"]`).
        public var prefersPlainTextHover: Bool {
            capabilities?["textDocument"]?["hover"]?["contentFormat"]?.arrayValue?.first == .string("plaintext")
        }

        /// Whether the client shows `$/progress`.
        public var supportsWorkDoneProgress: Bool {
            capabilities?["window"]?["workDoneProgress"]?.boolValue ?? false
        }

        /// Whether the client takes `workspace/inlayHint/refresh`.
        public var supportsInlayHintRefresh: Bool {
            capabilities?["workspace"]?["inlayHint"]?["refreshSupport"]?.boolValue ?? false
        }

        /// Whether the client takes `workspace/codeLens/refresh`.
        public var supportsCodeLensRefresh: Bool {
            capabilities?["workspace"]?["codeLens"]?["refreshSupport"]?.boolValue ?? false
        }
    }

    /// `initializationOptions`: what an editor's configuration passes.
    public struct InitializationOptions: Codable, Sendable {
        /// A database to open, as `database/open` would.
        public var database: String?
        public var readonly: Bool?
        /// How long a live query's refresh may run before it is stopped,
        /// "too slow to keep live" (-32014), in milliseconds; 0 for no
        /// limit. The server's own (30,000, or `--refresh-budget`) when absent.
        public var refreshBudgetMs: Double?

        public init(database: String? = nil, readonly: Bool? = nil, refreshBudgetMs: Double? = nil) {
            self.database = database
            self.readonly = readonly
            self.refreshBudgetMs = refreshBudgetMs
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

    /// The Language Server Protocol's `ServerCapabilities`, with sqlive's
    /// own under `experimental.sqlive`.
    public struct ServerCapabilities: Codable, Sendable {
        public struct TextDocumentSync: Codable, Sendable {
            public var openClose: Bool
            /// 1 whole documents, 2 incremental changes.
            public var change: Int
        }

        public struct CompletionOptions: Codable, Sendable {
            public var triggerCharacters: [String]
            public var resolveProvider: Bool
        }

        public struct CodeLensOptions: Codable, Sendable {
            public var resolveProvider: Bool
        }

        public struct ExecuteCommandOptions: Codable, Sendable {
            public var commands: [String]
            public var workDoneProgress: Bool
        }

        public struct Experimental: Codable, Sendable {
            public var sqlive: SQLiveCapabilities
        }

        public var positionEncoding: PositionEncoding
        public var textDocumentSync: TextDocumentSync
        public var completionProvider: CompletionOptions
        public var hoverProvider: Bool
        public var codeLensProvider: CodeLensOptions
        /// Each read-only statement's live result at its end.
        public var inlayHintProvider: Bool
        public var executeCommandProvider: ExecuteCommandOptions
        public var experimental: Experimental

        public init(positionEncoding: PositionEncoding, sqlive: SQLiveCapabilities) {
            self.positionEncoding = positionEncoding
            textDocumentSync = TextDocumentSync(openClose: true, change: 2)
            completionProvider = CompletionOptions(triggerCharacters: ["."], resolveProvider: false)
            hoverProvider = true
            codeLensProvider = CodeLensOptions(resolveProvider: false)
            inlayHintProvider = true
            executeCommandProvider = ExecuteCommandOptions(
                commands: ExecuteCommandRequest.commands, workDoneProgress: true)
            experimental = Experimental(sqlive: sqlive)
        }
    }

    /// What sqlive's own protocol offers, for clients that adapt to it
    /// (`capabilities.experimental.sqlive`; before the language server
    /// came, these sat directly under `capabilities`).
    public struct SQLiveCapabilities: Codable, Sendable {
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
        /// Whether they take `diff: "only"` (notifications with `changes`
        /// instead of rows) and `maxRows`.
        public var liveQueryChangesOnly: Bool?

        public init(
            protocolVersion: String, methods: [String], notifications: [String], clientNotifications: [String],
            defaultMaxRows: Int, maximumMessageLength: Int, liveQueryDiff: Bool, liveQueryChangesOnly: Bool? = nil
        ) {
            self.liveQueryChangesOnly = liveQueryChangesOnly
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
