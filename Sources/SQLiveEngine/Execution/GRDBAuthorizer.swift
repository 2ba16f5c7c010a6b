import CSQLiveSupport
import GRDB

/// GRDB's authorizer, taken off a connection while sqlive prepares
/// statements of its own on SQLite's C API.
///
/// GRDB registers an authorizer once per connection and reads what it
/// reports for the statements GRDB compiles (what they read and write).
/// SQLite calls it while preparing *every* statement of the connection:
/// for a `SELECT` sqlive prepares itself, it builds a region of Swift
/// strings per column read that nobody reads, about a fifth of a one-row
/// query's cost (docs/benchmarks.md). SQLite cannot hand an authorizer
/// back, so CSQLiveSupport's `sqlite3_set_authorizer`, linked into the
/// executable before the SQLite library, notes each connection's one; here
/// it is set aside and put back.
///
/// Only while no GRDB statement is compiled on the connection: the direct
/// path runs when no live query observes the connection (GRDB's
/// transaction observation needs its authorizer's reports, and its refusal
/// of the truncate optimization).
enum GRDBAuthorizer {
    /// Runs `body` without the connection's authorizer, when its
    /// authorizer is known; otherwise with it, as before.
    static func suspended<T>(on db: Database, _ body: () throws -> T) rethrows -> T {
        guard let connection = db.sqliteConnection, sqlive_suspend_authorizer(connection) != 0 else {
            return try body()
        }
        defer { sqlive_resume_authorizer(connection) }
        return try body()
    }

    /// Whether `suspended` can take the connection's authorizer off.
    static func isSuspendable(_ db: Database) -> Bool {
        guard let connection = db.sqliteConnection, sqlive_suspend_authorizer(connection) != 0 else { return false }
        sqlive_resume_authorizer(connection)
        return true
    }
}
