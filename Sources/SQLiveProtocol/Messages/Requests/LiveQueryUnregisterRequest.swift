/// Drops a live query; it sends no more notifications.
///
/// ```json
/// --> {"jsonrpc": "2.0", "id": 7, "method": "liveQuery/unregister", "params": {"name": "leaders"}}
/// <-- {"jsonrpc": "2.0", "id": 7, "result": {}}
/// ```
public enum LiveQueryUnregisterRequest: RequestType {
    public static let method = "liveQuery/unregister"
    public typealias Params = LiveQueryNameParams
    public typealias Result = EmptyResult
}

/// The params of the methods that name one live query.
public struct LiveQueryNameParams: Codable, Sendable {
    public var name: String

    public init(name: String) {
        self.name = name
    }
}
