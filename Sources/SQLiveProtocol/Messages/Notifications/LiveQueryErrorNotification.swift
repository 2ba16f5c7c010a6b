/// A live query failed to refresh (its table was dropped, say).
///
/// `error` is shaped like a response error: -32001 with SQLite's codes in
/// `data`. The live query stays registered and recovers by itself: its next
/// successful refresh sends `liveQuery/changed`.
///
/// ```json
/// <-- {"jsonrpc": "2.0", "method": "liveQuery/error", "params": {"name": "leaders",
///      "error": {"code": -32001, "message": "no such table: players", "data": {...}}}}
/// ```
public enum LiveQueryErrorNotification: NotificationType {
    public static let method = "liveQuery/error"

    public struct Params: Codable, Sendable {
        public var name: String
        public var error: ResponseError

        public init(name: String, error: ResponseError) {
            self.name = name
            self.error = error
        }
    }
}
