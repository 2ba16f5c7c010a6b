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
    /// Why a database that was not asked to be read-only was opened
    /// read-only (its file or its directory cannot be written), as the
    /// sqlite3 shell opens such files; front ends say so in a line.
    public var readonlyReason: String?
}
