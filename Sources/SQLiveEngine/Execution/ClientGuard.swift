import CSQLiveSupport
import GRDB
import GRDBSQLite

/// What a server's client may not reach through the session's connection,
/// refused by SQLite's authorizer while the client's statements are
/// prepared (`CSQLiveSupport`'s client guard), never by reading the text.
///
/// A server's client (the live page, an `--rpc` editor, an agent with
/// `--allow-writes`) never calls the sqlite3 shell's functions that reach
/// files or run programs (`readfile`, `writefile`, `edit`, `fsdir`,
/// `zipfile`) nor `load_extension`: they are the REPL's, registered on its
/// connection, which `.web` shares with the page. The client of a
/// read-only server writes no file anywhere either: no `ATTACH` (of any
/// file, `:memory:` included), no `VACUUM` or `VACUUM INTO` (SQLite runs
/// both as an ATTACH of their target, which is how the authorizer sees
/// them), and no `PRAGMA temp_store`, `temp_store_directory` or
/// `data_store_directory` with a value: a read-only database keeps its
/// temporary tables, indexes and sorts in memory (`LiveDatabase.open`).
///
/// The guard is on only while a client's statements run, so the REPL's
/// own statements on the same connection keep the sqlite3 shell's
/// behaviour.
public enum ClientGuard {
    /// The guard's level for a client of a database (read-only or not).
    static func level(readonly: Bool) -> Int32 {
        readonly ? Int32(SQLIVE_CLIENT_READONLY) : Int32(SQLIVE_CLIENT)
    }

    /// Runs `body` with the guard at `level` on the connection (nothing
    /// when `level` is nil); a statement it refused fails with SQLite's
    /// "not authorized" and the reason.
    static func serving<T>(_ db: Database, level: Int32?, _ body: () throws -> T) throws -> T {
        guard let level, let connection = db.sqliteConnection else { return try body() }
        let previous = sqlive_set_client_guard(connection, level)
        guard previous >= 0 else {
            throw SQLiteFailure(
                code: SQLITE_ERROR, extendedCode: SQLITE_ERROR,
                message: "cannot guard the connection for a server's client")
        }
        defer { _ = sqlive_set_client_guard(connection, previous) }
        do {
            return try body()
        } catch var failure as SQLiteFailure {
            // "not authorized" (SQLITE_AUTH), or for a function "not
            // authorized to use function: NAME" (SQLITE_ERROR).
            if isRefusal(failure), let reason = refusal(on: connection) {
                failure.message = "not authorized: " + reason
            }
            throw failure
        } catch let error as DatabaseError {
            var failure = SQLiteFailure(error)
            if isRefusal(failure), let reason = refusal(on: connection) {
                failure.message = "not authorized: " + reason
                throw failure
            }
            throw error
        }
    }

    /// Whether SQLite failed a statement for an authorizer's refusal: "not
    /// authorized" (`SQLITE_AUTH`), "not authorized to use function: NAME"
    /// (`SQLITE_ERROR`), or "authorization denied" (`SQLITE_AUTH`, from the
    /// ATTACH inside `VACUUM INTO`).
    static func isRefusal(_ failure: SQLiteFailure) -> Bool {
        failure.code == SQLITE_AUTH || failure.message.hasPrefix("not authorized")
    }

    /// Why the guard refused the last statement on `connection`, if it did.
    static func refusal(on connection: OpaquePointer) -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        let action = sqlive_take_client_refusal(connection, &buffer, Int32(buffer.count))
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        switch action {
        case SQLITE_ATTACH:
            let target = name.isEmpty ? "" : " ('\(name)')"
            return "the clients of a read-only server may not ATTACH a database, VACUUM or VACUUM INTO\(target): "
                + "each opens or writes a file"
        case SQLITE_FUNCTION where ["load_extension", "fts3_tokenizer"].contains(name.lowercased()):
            return "\(name)() would load code into the server: a server's clients may not call it"
        case SQLITE_FUNCTION:
            return "\(name)() reaches files or programs outside the database: it is the sqlite3 shell's, "
                + "not for a server's clients"
        case SQLITE_PRAGMA:
            return "a read-only server keeps temporary storage in memory: its clients may not set PRAGMA \(name)"
        default:
            return nil
        }
    }

    /// Whether a server's client's statement runs on the connection now:
    /// the shell's functions refuse to run for one, whoever prepared the
    /// statement.
    public static func isServingClient(_ connection: OpaquePointer?) -> Bool {
        guard let connection else { return false }
        return sqlive_client_guard_level(connection) != 0
    }
}
