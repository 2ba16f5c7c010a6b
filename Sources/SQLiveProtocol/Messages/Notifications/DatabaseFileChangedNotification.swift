/// Something happened to the database file itself: deleted or replaced
/// by another process, damaged in place, or repaired.
///
/// After `deleted` or `replaced`, the live queries go on reading the
/// database that is open; the client may want to open the file again.
/// After `damaged`, every live query has failed with `liveQuery/error`;
/// after `repaired`, they run again.
///
/// ```json
/// <-- {"jsonrpc": "2.0", "method": "database/fileChanged",
///      "params": {"path": "games.sqlite", "reason": "replaced", "message": "games.sqlite was replaced by another file"}}
/// ```
public enum DatabaseFileChangedNotification: NotificationType {
    public static let method = "database/fileChanged"

    public struct Params: Codable, Sendable {
        public var path: String
        /// `deleted`, `replaced`, `damaged` or `repaired`.
        public var reason: String
        public var message: String

        public init(path: String, reason: String, message: String) {
            self.path = path
            self.reason = reason
            self.message = message
        }
    }
}
