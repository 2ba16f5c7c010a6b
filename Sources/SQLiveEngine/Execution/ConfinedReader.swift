import CSQLiveSupport
import Foundation
import GRDBSQLite
import SQLiveLocks

/// Runs statements sent by someone the database's owner does not fully
/// trust (an AI assistant over MCP), confined by SQLite itself, never by
/// reading the text.
///
/// The connection is the checker's kind: the file opened read-only,
/// through the observer VFS (no lock held in rollback-journal modes).
/// `sqlive_confine` then sets defensive mode, no extension loading, no
/// writable or trusted schema, no ATTACH, and an authorizer that refuses
/// ATTACH and DETACH, transactions, `load_extension` and every PRAGMA but
/// those that read. Each call is one statement: a second one in the text is refused
/// when SQLite prepares it. `sqlite3_stmt_readonly` is asked before the
/// statement runs; one that would write is never stepped here (with writes
/// allowed, the caller runs it on the session's connection).
///
/// Every call has a time limit (a progress handler interrupts the
/// statement), a row cap and a size cap (`SQLITE_LIMIT_LENGTH` refuses a
/// single value over it; rows stop being read when their total passes it).
///
/// ```swift
/// let reader = try await database.makeConfinedReader()
/// let outcome = try reader.run("SELECT * FROM players", limits: .init(rows: 100))
/// ```
public final class ConfinedReader: Sendable {
    /// What one call may cost.
    public struct Limits: Hashable, Sendable {
        /// How long the statement may run (default 10 s).
        public var time: Duration
        /// The most rows returned (default 1,000); more set `truncated`.
        public var rows: Int
        /// The most bytes of values returned (default 4 MiB); also the
        /// largest single value SQLite will make or read.
        public var bytes: Int

        public init(time: Duration = .seconds(10), rows: Int = 1000, bytes: Int = 4 << 20) {
            self.time = time
            self.rows = rows
            self.bytes = bytes
        }
    }

    /// The rows of one statement, cut at the caps.
    public struct Rows: Hashable, Sendable {
        public var columns: [String]
        public var rows: [[SQLValue]]
        /// Which cap cut the rows, if one did.
        public var truncated: Cap?
        public var elapsed: Duration
    }

    public enum Cap: String, Hashable, Sendable {
        case rows, bytes
    }

    /// What a call did.
    public enum Outcome: Hashable, Sendable {
        /// The statement only reads, and ran here.
        case rows(Rows)
        /// The statement would write: it was prepared, never run.
        case writes
    }

    // Mutable State: the connection is used by one caller at a time, under
    // the mutex. `interrupt()` reaches it without the mutex
    // (`sqlite3_interrupt` may be called from any thread while the
    // connection is open, and it is open as long as `self` is).
    private let connection: Locked<SQLChecker.Connection>
    nonisolated(unsafe) private let handle: OpaquePointer
    /// Set by `interrupt()`, read by the statement's progress handler
    /// (`sqlive_deadline_begin`) and before it starts, through C atomics:
    /// an interrupt that comes before the first step is not lost, as
    /// `sqlite3_interrupt`'s is. Cleared when a call ends, and when the
    /// pool hands the reader to a new call.
    nonisolated(unsafe) private let cancelled: UnsafeMutablePointer<Int32>
    public let allowsWrites: Bool
    /// The file the reader opened (device and inode): a pool drops a
    /// reader whose path now leads to another file.
    let fileIdentity: DataVersionProbe.FileIdentity?

    /// Opens the file read-only and confines the connection.
    ///
    /// - throws: `SQLiveError.cannotOpen`.
    public init(path: String, allowWrites: Bool = false) throws(SQLiveError) {
        let connection = try SQLChecker.Connection.openReadOnly(path, busyTimeout: .seconds(2))
        let code = sqlive_confine(connection.handle)
        guard code == SQLITE_OK else {
            throw .cannotOpen(path: path, reason: "cannot confine the connection: \(connection.lastError)")
        }
        self.connection = Locked(connection)
        self.handle = connection.handle
        self.allowsWrites = allowWrites
        cancelled = .allocate(capacity: 1)
        cancelled.initialize(to: 0)
        fileIdentity = DataVersionProbe.status(of: path)?.identity
    }

    deinit {
        cancelled.deinitialize(count: 1)
        cancelled.deallocate()
    }

    /// Interrupts the statement running, or the call's statement about to
    /// run: it fails "interrupted".
    public func interrupt() {
        sqlive_flag_set(cancelled, 1)
        sqlite3_interrupt(handle)
    }

    /// Forgets an interrupt meant for an earlier call.
    func beginCall() {
        sqlive_flag_set(cancelled, 0)
    }

    /// Prepares one statement and, if it only reads, runs it within the
    /// limits, on the calling thread.
    ///
    /// - throws: `SQLiveError.sqlite` with SQLite's message and the offset
    ///   it blames (an authorizer's refusal is SQLite's "not authorized"),
    ///   `.invalidSQL` for a second statement or none, `.invalidParameters`.
    public func run(_ sql: String, parameters: QueryParameters = .none, limits: Limits = Limits())
        throws(SQLiveError) -> Outcome
    {
        try SQLScript.checkText(sql)
        return try connection.withLock { connection throws(SQLiveError) in
            sqlite3_limit(connection.handle, SQLITE_LIMIT_LENGTH, Int32(clamping: max(limits.bytes, 1)))
            let deadline = sqlive_deadline_begin(
                connection.handle, Int64(limits.time / .nanoseconds(1)), UnsafePointer(cancelled))
            defer {
                sqlive_deadline_end(connection.handle, deadline)
                sqlive_flag_set(cancelled, 0)
            }
            connection.refreshSchema()
            let prepared = try prepareOne(sql, on: connection)
            let statement = prepared.handle
            defer { withExtendedLifetime(prepared) {} }
            guard sqlite3_stmt_readonly(statement) != 0 else { return .writes }
            var binder = ScriptRunner.ParameterBinder(parameters)
            do throws(ScriptRunner.ParameterBinder.Failure) {
                try binder.bind(statement)
                try binder.checkAllBound()
            } catch {
                throw .invalidParameters(error.message)
            }
            return .rows(try step(statement, on: connection, limits: limits))
        }
    }

    /// The one statement of the text, prepared.
    private func prepareOne(_ sql: String, on connection: SQLChecker.Connection) throws(SQLiveError) -> RawStatement {
        let bytes = Array(sql.utf8)
        let statement: RawStatement
        let tail: Int
        switch connection.prepareFirst(bytes[...]) {
        case .success((let first?, let end)):
            (statement, tail) = (first, end)
        case .success:
            throw .sqlite(failure(SQLITE_MISUSE, on: connection.handle))
        case .failure(let error):
            throw .sqlite(failure(error.code, on: connection.handle))
        }
        // What follows must be blanks and comments: SQLite says whether the
        // rest holds a statement by preparing it.
        if tail < bytes.count {
            let another: Bool
            switch connection.prepareFirst(bytes[tail...]) {
            case .success((nil, _)): another = false
            default: another = true
            }
            if another {
                let offset = tail + (bytes[tail...].firstIndex { !Self.isBlank($0) }.map { $0 - tail } ?? 0)
                throw .invalidSQL("holds more than one statement: send one per call", offset: offset)
            }
        }
        return statement
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C || byte == 0x3B
    }

    /// Steps a read-only statement within the limits; read again from the
    /// start when a writer overtook it.
    private func step(_ statement: OpaquePointer, on connection: SQLChecker.Connection, limits: Limits)
        throws(SQLiveError) -> Rows
    {
        let start = ContinuousClock.now
        let count = Int(sqlite3_column_count(statement))
        let columns = (0..<count).map { String(cString: sqlite3_column_name(statement, Int32($0))) }
        var rows: [[SQLValue]] = []
        var truncated: Cap?
        for attempt in 1... {
            rows = []
            truncated = nil
            var bytes = 0
            var code = sqlite3_step(statement)
            while code == SQLITE_ROW {
                if rows.count >= limits.rows {
                    truncated = .rows
                    break
                }
                let row = StatementRow(statement, columnCount: count)
                let values = (0..<count).map { row.value(at: $0) }
                bytes += values.reduce(0) { $0 + $1.byteCount }
                if bytes > limits.bytes {
                    truncated = .bytes
                    break
                }
                rows.append(values)
                code = sqlite3_step(statement)
            }
            if truncated != nil || code == SQLITE_DONE { break }
            guard connection.wasOvertaken(attempt: attempt) else {
                var failure = failure(code, on: connection.handle)
                if code == SQLITE_INTERRUPT {
                    failure.message =
                        "interrupted: the statement ran past the time limit (\(limits.time)), or was cancelled"
                } else if code == SQLITE_TOOBIG {
                    failure.message += ": a value is larger than the size cap (\(limits.bytes) bytes)"
                }
                throw .sqlite(failure)
            }
            sqlite3_reset(statement)
        }
        return Rows(columns: columns, rows: rows, truncated: truncated, elapsed: ContinuousClock.now - start)
    }

    private func failure(_ code: Int32, on handle: OpaquePointer) -> SQLiteFailure {
        let offset = Int(sqlite3_error_offset(handle))
        let message = sqlite3_errmsg(handle).map { String(cString: $0) } ?? "unknown error"
        return SQLiteFailure(
            code: code & 0xFF, extendedCode: sqlite3_extended_errcode(handle), message: message,
            offset: offset >= 0 ? offset : nil)
    }
}

extension SQLValue {
    /// Roughly what the value weighs in a result: its bytes for text and
    /// blobs, 8 for numbers.
    public var byteCount: Int {
        switch self {
        case .null: 1
        case .integer, .real: 8
        case .text(let text): text.utf8.count
        case .blob(let data): data.count
        }
    }

    /// About what the value weighs printed as text, as results are sent: an
    /// integer's digits, a REAL's longest form, text quoted, a blob in
    /// base64 (`{"$blob": …}`), and a separator. Escapes are not counted.
    public var printedByteCount: Int {
        switch self {
        case .null: 5
        case .integer(let integer):
            if integer == .min {
                21
            } else {
                {
                    var digits = integer < 0 ? 3 : 2
                    var rest = integer.magnitude
                    while rest >= 10 {
                        rest /= 10
                        digits += 1
                    }
                    return digits
                }()
            }
        case .real: Self.printedRealBytes
        case .text(let text): Self.printedByteCount(textBytes: text.utf8.count)
        case .blob(let data): Self.printedByteCount(blobBytes: data.count)
        }
    }

    /// A REAL's longest printed form, with its separator.
    static let printedRealBytes = 25

    /// Text of `count` bytes, quoted, with its separator.
    static func printedByteCount(textBytes count: Int) -> Int { count + 3 }

    /// A blob of `count` bytes in base64 inside `{"$blob": …}`, with its separator.
    static func printedByteCount(blobBytes count: Int) -> Int { (count + 2) / 3 * 4 + 13 }
}

extension LiveDatabase {
    /// A confined reader of this database's file.
    ///
    /// - throws: `SQLiveError.cannotOpen`; for an in-memory database, which
    ///   no other connection can open.
    public func makeConfinedReader(allowWrites: Bool = false) throws(SQLiveError) -> ConfinedReader {
        try Self.confinedReader(of: location, allowWrites: allowWrites)
    }

    static func confinedReader(of location: DatabaseLocation, allowWrites: Bool) throws(SQLiveError)
        -> ConfinedReader
    {
        switch location {
        case .file(let path), .uri(let path):
            return try ConfinedReader(path: path, allowWrites: allowWrites)
        case .memory:
            throw .cannotOpen(path: ":memory:", reason: "an in-memory database has no file another connection can read")
        case .dqlite(_, let text):
            throw .cannotOpen(path: text, reason: "a dqlite database is read through its mirror")
        }
    }
}

extension LiveDatabase {
    /// Confines the session's connection as a `ConfinedReader` is confined,
    /// but for the authorizer, which is GRDB's: defensive mode, no
    /// extension loading, no writable or trusted schema, no ATTACH (nor
    /// VACUUM, which attaches). For agents allowed to write, whose
    /// statements that write run there.
    public func confineSession() async throws(SQLiveError) {
        do {
            let code = try await writer.writeWithoutTransaction { db in
                sqlive_confine_configuration(db.sqliteConnection)
            }
            guard code == SQLITE_OK else {
                throw SQLiveError.sqlite(
                    SQLiteFailure(code: code, extendedCode: code, message: "cannot confine the session's connection"))
            }
        } catch let error as SQLiveError {
            throw error
        } catch {
            throw .sqlite(SQLiteFailure(code: 1, extendedCode: 1, message: "\(error)"))
        }
    }
}
