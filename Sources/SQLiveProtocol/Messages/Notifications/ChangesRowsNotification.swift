/// One commit's changed rows, for a `changes/subscribe` subscription: one
/// notification per commit that changed a subscribed table, in commit order.
///
/// A row's `op` is `insert`, `update`, `delete`, or `unknown`: the feed
/// could not derive that table's rows for this commit (`reason` says why)
/// and does not guess. `key` is `{"rowid": R}`, or a `WITHOUT ROWID`
/// table's primary-key columns; `old` and `new` are the row's columns.
///
/// ```json
/// <-- {"jsonrpc": "2.0", "method": "changes/rows", "params": {"subscription": 1, "commit": 7,
///      "cause": "external", "rows": [{"table": "players", "op": "update", "key": {"rowid": 3},
///      "old": {"id": 3, "score": 60}, "new": {"id": 3, "score": 61}}]}}
/// ```
public enum ChangesRowsNotification: NotificationType {
    public static let method = "changes/rows"

    public struct Params: Codable, Sendable {
        public var subscription: Int
        public var commit: Int
        /// `local` (a commit of this session may explain it) or `external`.
        public var cause: String
        public var rows: [JSONValue]

        public init(subscription: Int, commit: Int, cause: String, rows: [JSONValue]) {
            self.subscription = subscription
            self.commit = commit
            self.cause = cause
            self.rows = rows
        }
    }
}
