/// The database file was deleted or replaced by another process.
///
/// The live queries go on reading the database that is open; the client may
/// want to open the file again.
///
/// ```json
/// <-- {"jsonrpc": "2.0", "method": "database/fileChanged", "params": {"path": "games.sqlite"}}
/// ```
public enum DatabaseFileChangedNotification: NotificationType {
    public static let method = "database/fileChanged"

    public struct Params: Codable, Sendable {
        public var path: String
    }
}
