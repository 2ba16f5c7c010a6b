/// Opens a database, replacing the one open, if any.
///
/// The live queries of the database that was open are dropped; the result
/// names them in `droppedLiveQueries`. `path` is a file path (relative to
/// the server's working directory), a `file:` URI, or `:memory:`. A missing
/// file is created, unless `readonly` is true.
///
/// ```json
/// --> {"jsonrpc": "2.0", "id": 2, "method": "database/open", "params": {"path": "games.sqlite"}}
/// <-- {"jsonrpc": "2.0", "id": 2, "result": {"path": "games.sqlite", "readonly": false,
///      "sqliteVersion": "3.46.1", "journalMode": "wal", "droppedLiveQueries": []}}
/// ```
public enum DatabaseOpenRequest: RequestType {
    public static let method = "database/open"

    public struct Params: Codable, Sendable {
        public var path: String
        public var readonly: Bool?

        public init(path: String, readonly: Bool? = nil) {
            self.path = path
            self.readonly = readonly
        }
    }

    public struct Result: Codable, Sendable {
        /// The database as it was named.
        public var path: String
        public var readonly: Bool
        /// The version of the SQLite library.
        public var sqliteVersion: String
        /// `wal`, `delete`, `truncate`, `persist`, `memory` or `off`.
        public var journalMode: String
        /// The live queries of the previous database, now dropped.
        public var droppedLiveQueries: [String]

        public init(
            path: String, readonly: Bool, sqliteVersion: String, journalMode: String, droppedLiveQueries: [String]
        ) {
            self.path = path
            self.readonly = readonly
            self.sqliteVersion = sqliteVersion
            self.journalMode = journalMode
            self.droppedLiveQueries = droppedLiveQueries
        }
    }
}
