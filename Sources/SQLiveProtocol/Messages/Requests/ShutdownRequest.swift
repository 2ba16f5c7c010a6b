/// Asks the server to get ready to exit: it closes the database and
/// answers `null`. Then the client sends the `exit` notification.
///
/// Requests after it are refused with -32600.
///
/// ```json
/// --> {"jsonrpc": "2.0", "id": 13, "method": "shutdown"}
/// <-- {"jsonrpc": "2.0", "id": 13, "result": null}
/// ```
public enum ShutdownRequest: RequestType {
    public static let method = "shutdown"
    public typealias Params = EmptyParams
    public typealias Result = NullResult
}
