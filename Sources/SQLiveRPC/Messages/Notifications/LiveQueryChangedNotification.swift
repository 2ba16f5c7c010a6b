/// A live query's result changed.
///
/// Sent once per refresh whose result differs from the previous one; a
/// burst of commits is coalesced (`coalesced` tells how many changes the
/// refresh covered). `version` strictly increases. `cause` is `"local"` for
/// a commit made through this server, `"external"` for one made by another
/// process or connection. `diff` is there when the live query was
/// registered with `diff: true`.
///
/// ```json
/// <-- {"jsonrpc": "2.0", "method": "liveQuery/changed", "params": {"name": "leaders", "version": 2,
///      "columns": ["name", "score"], "rows": [["Bob", 15], ["Ann", 12]], "truncated": false,
///      "cause": "external", "coalesced": 1, "elapsedMs": 0.21}}
/// ```
public enum LiveQueryChangedNotification: NotificationType {
    public static let method = "liveQuery/changed"

    public struct Params: Codable, Sendable {
        public var name: String
        public var version: Int
        public var columns: [String]
        public var rows: RPCRows
        public var truncated: Bool
        /// `"local"` or `"external"`.
        public var cause: String
        public var coalesced: Int
        public var elapsedMs: Double
        public var diff: Diff?
    }

    /// The rows added and removed since the previous notification, as multisets.
    public struct Diff: Codable, Sendable {
        public var added: RPCRows
        public var removed: RPCRows
    }
}
