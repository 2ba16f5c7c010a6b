import Foundation

/// The parts of the Model Context Protocol that sqlive speaks
/// (docs/mcp.md): its versions, methods, notifications and error codes.
///
/// Messages are JSON-RPC 2.0, one per line on standard input and output
/// (MCP's stdio transport). Both eras of the protocol are served, chosen by
/// a connection's first request (`MCPEra`):
/// - the handshake era: `initialize` negotiates a version among
///   `supportedVersions`, `resources/subscribe` asks for updates;
/// - the stateless era (`modernVersions`, 2026-07-28): every request
///   carries its version and capabilities in `params._meta`,
///   `server/discover` tells what the server speaks, and
///   `subscriptions/listen` asks for updates.
public enum MCPProtocol {
    /// The versions `initialize` accepts, newest first; a client asking for
    /// another one is answered with the newest.
    public static let supportedVersions = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]

    /// The versions of the stateless era, newest first.
    public static let modernVersions = ["2026-07-28"]

    /// The keys of a request's (or result's, or notification's) `_meta`
    /// in the stateless era.
    public enum Meta {
        public static let protocolVersion = "io.modelcontextprotocol/protocolVersion"
        public static let clientInfo = "io.modelcontextprotocol/clientInfo"
        public static let clientCapabilities = "io.modelcontextprotocol/clientCapabilities"
        public static let logLevel = "io.modelcontextprotocol/logLevel"
        public static let serverInfo = "io.modelcontextprotocol/serverInfo"
        public static let subscriptionID = "io.modelcontextprotocol/subscriptionId"
    }

    /// The stateless era's error codes.
    public enum ModernError {
        /// The request's version is not one the server speaks; `data`:
        /// `{supported, requested}`.
        public static let unsupportedProtocolVersion = -32022
    }

    public static var latestVersion: String { supportedVersions[0] }

    /// The version to answer a client's `initialize` with.
    public static func negotiate(_ requested: String?) -> String {
        guard let requested, supportedVersions.contains(requested) else { return latestVersion }
        return requested
    }

    /// Request methods.
    public enum Method {
        public static let initialize = "initialize"
        public static let ping = "ping"
        public static let toolsList = "tools/list"
        public static let toolsCall = "tools/call"
        public static let resourcesList = "resources/list"
        public static let resourceTemplatesList = "resources/templates/list"
        public static let resourcesRead = "resources/read"
        public static let resourcesSubscribe = "resources/subscribe"
        public static let resourcesUnsubscribe = "resources/unsubscribe"
        public static let loggingSetLevel = "logging/setLevel"
        /// The stateless era's: what the server speaks.
        public static let serverDiscover = "server/discover"
        /// The stateless era's: a stream of change notifications, until
        /// either side ends it.
        public static let subscriptionsListen = "subscriptions/listen"

        /// The handshake era's methods that the stateless era removed.
        public static let removedInModernEra: Set<String> = [
            initialize, ping, loggingSetLevel, resourcesSubscribe, resourcesUnsubscribe,
        ]
    }

    /// Notifications, both ways.
    public enum Notification {
        public static let initialized = "notifications/initialized"
        public static let cancelled = "notifications/cancelled"
        public static let resourceUpdated = "notifications/resources/updated"
        public static let resourceListChanged = "notifications/resources/list_changed"
        /// The stateless era's first frame of a `subscriptions/listen`:
        /// what the server will send.
        public static let subscriptionsAcknowledged = "notifications/subscriptions/acknowledged"
    }

    /// MCP's own error code for a resource that does not exist.
    public static let resourceNotFound = -32002

    /// The URI of the schema resource.
    public static let schemaURI = "sqlive://schema"
    /// The prefix of a live query's resource URI: `sqlive://live/{name}`.
    public static let livePrefix = "sqlive://live/"

    /// A live query's resource URI (its name percent-encoded where a URI
    /// needs it).
    public static func liveURI(_ name: String) -> String {
        livePrefix + percentEncoded(name)
    }

    /// The live query a resource URI names, if it is one.
    public static func liveName(of uri: String) -> String? {
        guard uri.hasPrefix(livePrefix) else { return nil }
        let encoded = uri.dropFirst(livePrefix.count)
        guard !encoded.isEmpty else { return nil }
        return percentDecoded(String(encoded))
    }

    /// Letters and digits of ASCII and `-._~` are kept; every other byte
    /// is `%XX`.
    static func percentEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// The text a percent-encoded one stands for; nil when it is not valid
    /// percent-encoded UTF-8.
    static func percentDecoded(_ text: String) -> String? {
        text.removingPercentEncoding
    }
}
