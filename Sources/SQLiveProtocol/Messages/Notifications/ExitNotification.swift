/// Ends the server: with exit code 0 after `shutdown`, 1 without.
///
/// ```json
/// --> {"jsonrpc": "2.0", "method": "exit"}
/// ```
public enum ExitNotification: NotificationType {
    public static let method = "exit"
    public typealias Params = EmptyParams
}
