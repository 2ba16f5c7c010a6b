/// Facts about an open database, as `database/open` reports them.
public struct DatabaseInfo: Hashable, Sendable {
    /// The database as it was named when opened: a path, a URI or `:memory:`.
    public var path: String
    /// Whether the database was opened read-only.
    public var readonly: Bool
    /// The version of the SQLite library, such as `3.40.1`.
    public var sqliteVersion: String
    /// The journal mode: `wal`, `delete`, `truncate`, `persist`, `memory` or `off`.
    public var journalMode: String
}
