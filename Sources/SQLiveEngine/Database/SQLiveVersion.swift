import GRDBSQLite

/// sqlive's version, as `--sqlive-version` and `initialize` report it, and
/// SQLite's, as the sqlite3 shell reports it.
public enum SQLiveVersion {
    public static let current = "0.1.0"

    /// What `sqlite3 -version` prints: the library's version and source id.
    public static var sqliteVersionLine: String {
        String(cString: sqlite3_libversion()) + " " + String(cString: sqlite3_sourceid())
    }

    /// The date and time of SQLite's source (`2022-12-28 14:03:47`), as the
    /// shell's banner shows it.
    public static var sqliteSourceDate: String {
        String(String(cString: sqlite3_sourceid()).prefix(19))
    }
}
