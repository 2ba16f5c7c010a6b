/// Pauses a live query: it does no work, and sends no notification, until
/// resumed.
///
/// ```json
/// --> {"jsonrpc": "2.0", "id": 8, "method": "liveQuery/pause", "params": {"name": "leaders"}}
/// <-- {"jsonrpc": "2.0", "id": 8, "result": {}}
/// ```
public enum LiveQueryPauseRequest: RequestType {
    public static let method = "liveQuery/pause"
    public typealias Params = LiveQueryNameParams
    public typealias Result = EmptyResult
}
