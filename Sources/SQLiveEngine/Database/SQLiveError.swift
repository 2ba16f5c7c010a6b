import Foundation

/// An error reported by SQLite, with everything a user needs to find it.
///
/// `code` is the primary result code (`SQLITE_ERROR` is 1), `extendedCode`
/// the extended one (`SQLITE_CONSTRAINT_UNIQUE` is 2067). When the error
/// happened while running a script, `statementIndex` tells which statement
/// (0-based) failed, and `offset` the byte in the script where SQLite
/// located the error, when it knows.
public struct SQLiteFailure: Error, Hashable, Sendable {
    public var code: Int32
    public var extendedCode: Int32
    public var message: String
    /// The byte offset of the error in the script, when SQLite knows it.
    public var offset: Int?
    /// The 0-based index of the failing statement in the script.
    public var statementIndex: Int?
    /// The SQL of the failing statement, when known.
    public var sql: String?
    /// When the statement failed: as SQLite prepared it, or as it ran.
    public var phase: Phase?
    /// The byte offset in the script where the failing statement's text
    /// begins (after the previous statement's `;`), when known.
    public var statementOffset: Int?

    /// When a statement fails.
    public enum Phase: Hashable, Sendable {
        /// `sqlite3_prepare`: a syntax error, an unknown table or column.
        case prepare
        /// `sqlite3_step`: a constraint, a runtime error.
        case step
    }

    public init(
        code: Int32, extendedCode: Int32, message: String,
        offset: Int? = nil, statementIndex: Int? = nil, sql: String? = nil
    ) {
        self.code = code
        self.extendedCode = extendedCode
        self.message = message
        self.offset = offset
        self.statementIndex = statementIndex
        self.sql = sql
    }

    /// Whether the statement was interrupted (`SQLITE_INTERRUPT`).
    public var isInterrupted: Bool { code == 9 }

    /// A statement interrupted (`SQLITE_INTERRUPT`).
    static let interrupted = SQLiteFailure(code: 9, extendedCode: 9, message: "interrupted")
}

extension SQLiteFailure: CustomStringConvertible {
    public var description: String { message }
}

/// The errors of the sqlive engine.
///
/// Every case reads well as a message for a user: `description` is what the
/// front ends print.
public enum SQLiveError: Error, Hashable, Sendable {
    /// SQLite refused a statement, or failed while running it.
    case sqlite(SQLiteFailure)
    /// The database could not be opened.
    case cannotOpen(path: String, reason: String)
    /// No live query has this name.
    case unknownLiveQuery(String)
    /// A live query with this name already exists.
    case liveQueryNameTaken(String)
    /// The SQL cannot be a live query (not a single read-only statement).
    case invalidLiveQuery(String)
    /// The SQL cannot run as given (a NUL byte, no statement): the reason
    /// completes "the SQL ...".
    case invalidSQL(String, offset: Int? = nil)
    /// The values given do not match the SQL's parameters.
    case invalidParameters(String)
    /// A live query name that cannot be used (empty).
    case invalidLiveQueryName(String)
    /// The database is closed.
    case closed
    /// A result holds more bytes than a front end can send in one message
    /// (`LiveQueryOptions.resultByteCap`); it was not read further.
    case resultTooLarge(limit: Int)
    /// A live query's refresh ran past its time budget
    /// (`LiveQueryOptions.refreshBudget`) and was stopped: the query waits
    /// for the next change that concerns it, and tries again then.
    case tooSlowToKeepLive(budget: Duration)

    /// The SQLite failure behind this error, if any.
    public var sqliteFailure: SQLiteFailure? {
        if case .sqlite(let failure) = self { return failure }
        return nil
    }
}

extension SQLiveError: CustomStringConvertible, LocalizedError {
    public var description: String {
        switch self {
        case .sqlite(let failure): failure.message
        case .cannotOpen(let path, let reason): "cannot open \(path): \(reason)"
        case .unknownLiveQuery(let name): "no live query named \(name)"
        case .liveQueryNameTaken(let name): "a live query named \(name) already exists"
        case .invalidLiveQuery(let reason): reason
        case .invalidSQL(let reason, _): "the SQL \(reason)"
        case .invalidParameters(let reason): reason
        case .invalidLiveQueryName(let reason): reason
        case .closed: "the database is closed"
        case .resultTooLarge(let limit):
            "the result is larger than \(limit % 1_048_576 == 0 ? "\(limit / 1_048_576) MiB" : "\(limit) bytes"), the most one message "
                + "carries; select fewer rows (maxRows, LIMIT) or smaller values (length(x), substr(x, 1, 1000))"
        case .tooSlowToKeepLive(let budget):
            "too slow to keep live: the query ran longer than \(budget.readableSeconds), its time budget, and was "
                + "stopped; it runs again at the next change of what it reads (make it cheaper, add an index, or "
                + "raise the budget)"
        }
    }

    public var errorDescription: String? { description }
}

extension Duration {
    /// `5 s`, `0.25 s`: a duration as a user reads it.
    var readableSeconds: String {
        let seconds = Double(components.seconds) + Double(components.attoseconds) / 1e18
        return seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    }
}

extension SQLiveError {
    /// A remote database (dqlite) could not be reached, or answered what
    /// cannot be read: an I/O error (`SQLITE_IOERR`), as SQLite reports a
    /// file it cannot read.
    static func remote(_ message: String) -> SQLiveError {
        .sqlite(SQLiteFailure(code: 10, extendedCode: 10, message: "dqlite: \(message)"))
    }
}
