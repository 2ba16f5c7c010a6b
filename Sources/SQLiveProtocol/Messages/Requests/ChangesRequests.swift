/// Subscribes to the change feed: every commit's changed rows, by any
/// process or connection, as `changes/rows` notifications.
///
/// ```json
/// --> {"jsonrpc": "2.0", "id": 4, "method": "changes/subscribe", "params": {"tables": ["players"]}}
/// <-- {"jsonrpc": "2.0", "id": 4, "result": {"subscription": 1}}
/// ```
public enum ChangesSubscribeRequest: RequestType {
    public static let method = "changes/subscribe"

    public struct Params: Codable, Sendable {
        /// The tables to report; absent or empty: every table but SQLite's own.
        public var tables: [String]?

        public init(tables: [String]? = nil) {
            self.tables = tables
        }
    }

    public struct Result: Codable, Sendable {
        public var subscription: Int

        public init(subscription: Int) {
            self.subscription = subscription
        }
    }
}

/// Ends a subscription to the change feed.
///
/// ```json
/// --> {"jsonrpc": "2.0", "id": 5, "method": "changes/unsubscribe", "params": {"subscription": 1}}
/// <-- {"jsonrpc": "2.0", "id": 5, "result": {}}
/// ```
public enum ChangesUnsubscribeRequest: RequestType {
    public static let method = "changes/unsubscribe"

    public struct Params: Codable, Sendable {
        public var subscription: Int

        public init(subscription: Int) {
            self.subscription = subscription
        }
    }

    public typealias Result = EmptyResult
}
