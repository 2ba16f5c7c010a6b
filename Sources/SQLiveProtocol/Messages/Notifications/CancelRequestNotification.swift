/// Cancels a request: its running statement is interrupted, and it answers
/// -32800. A request that already answered is not affected.
///
/// ```json
/// --> {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 4}}
/// <-- {"jsonrpc": "2.0", "id": 4, "error": {"code": -32800, "message": "Request cancelled"}}
/// ```
public enum CancelRequestNotification: NotificationType {
    public static let method = "$/cancelRequest"

    public struct Params: Codable, Sendable {
        public var id: RequestID

        public init(id: RequestID) {
            self.id = id
        }
    }
}
