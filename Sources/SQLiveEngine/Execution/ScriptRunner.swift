import Foundation
import GRDB
import GRDBSQLite

/// Runs a script of SQL statements on one connection, in order.
///
/// Each statement is prepared when the one before it has run, so a script
/// may create a table and then use it. When a statement fails, the runner
/// reports which one, and where in the script SQLite located the error.
///
/// Two paths, the same results. While a live query exists, statements go
/// through GRDB, whose transaction observation reports their row events to
/// the `ChangeRecorder` (`run`). Otherwise they run on SQLite's C API
/// directly (`runDirectly`), as the sqlite3 shell runs them, parameters
/// bound as GRDB binds them: a statement then costs what SQLite costs, and
/// GRDB's per-statement work (its observation broker, its cursor) is not
/// paid for nothing. (GRDB's authorizer, set once on the connection, still
/// runs while SQLite prepares: see docs/benchmarks.md.) The direct path keeps what GRDB's did for sqlive: the commit
/// ledger (every statement that may commit is counted), and GRDB's schema
/// cache (cleared after a statement that may change the schema).
struct ScriptRunner {
    var script: String
    var parameters: QueryParameters
    /// The most rows read per statement; `nil` reads them all.
    var maxRows: Int?
    var tracer: StatementTracer?
    var origin: TraceEvent.Origin = .user
    /// The dqlite database whose leader runs the statements (the local
    /// connection is its mirror, where they are only prepared).
    private(set) var remote: DqliteRemote?
    /// Whether the session may not write the remote database.
    private(set) var remoteIsReadonly = false

    /// Runs the statements on a dqlite leader (`nil`: here).
    mutating func remote(_ remote: DqliteRemote?, readonly: Bool) {
        self.remote = remote
        remoteIsReadonly = readonly
    }

    /// Runs the script, streaming results to the consumer.
    ///
    /// - throws: `ScriptRunner.Failure` with the number of statements that
    ///   completed, or the consumer's own error.
    func run(in db: Database, consumer: inout some ResultConsumer) throws {
        try refuseNUL()
        let arguments: StatementArguments? = parameters.isEmpty ? nil : parameters.statementArguments
        let statements =
            if let arguments {
                try db.allStatements(sql: script, arguments: arguments)
            } else {
                try db.allStatements(sql: script)
            }
        // Asked once per script: the tracer takes a lock.
        let tracer = tracer?.isEnabled == true ? tracer : nil
        var consumedBytes = 0
        var index = 0
        let clock = ContinuousClock()
        while true {
            let start = clock.now
            let statement: Statement
            do {
                guard let next = try statements.next() else { break }
                statement = next
            } catch let error as DatabaseError {
                let offset = errorOffset(in: db, from: consumedBytes)
                var failure = SQLiteFailure(error, offset: offset.map { consumedBytes + $0 }, statementIndex: index)
                failure.phase = .prepare
                failure.statementOffset = consumedBytes
                throw failure
            }
            let sqliteStatement = statement.sqliteStatement
            if case .shell = parameters, sqlite3_bind_parameter_count(sqliteStatement) > 0 {
                let values = ParameterBinder.bindAsShell(
                    sqliteStatement, count: Int(sqlite3_bind_parameter_count(sqliteStatement)))
                statement.setUncheckedArguments(StatementArguments(values.map(\.databaseValue)))
            }
            let statementStart = consumedBytes
            if let text = sqlite3_sql(sqliteStatement) {
                consumedBytes += strlen(text)
            }
            // The columns as the first step left them (`runDirectly` says why).
            var header: StatementHeader?
            func begin() throws -> StatementHeader {
                let columnCount = Int(sqlite3_column_count(sqliteStatement))
                let started = StatementHeader(
                    index: index, script: script, range: statementStart..<consumedBytes,
                    columns: Self.columnNames(sqliteStatement))
                header = started
                try consumer.statementDidStart(started)
                return started
            }

            if sqlite3_stmt_readonly(sqliteStatement) == 0 { WALClosing.sessionMayWrite(db.sqliteConnection) }
            let totalChangesBefore = db.totalChangesCount
            var rowCount = 0
            var truncated = false
            do {
                let rows = try Row.fetchCursor(statement)
                var row = try rows.next()
                let columnCount = try begin().columns.count
                while row != nil {
                    if let maxRows, rowCount >= maxRows {
                        truncated = true
                        break
                    }
                    // The cursor's row is a view on the stepped statement:
                    // read the columns straight from it.
                    try consumer.consume(row: StatementRow(sqliteStatement, columnCount: columnCount))
                    rowCount += 1
                    row = try rows.next()
                }
            } catch let error as DatabaseError {
                if header == nil {
                    // The statement's own error is the one told: the
                    // consumer's (an interrupt it saw too) does not replace it.
                    do { _ = try begin() } catch {}
                }
                if let connection = db.sqliteConnection {
                    try consumer.statementDidStep(RanStatement(statement: sqliteStatement, connection: connection))
                }
                var failure = SQLiteFailure(error, statementIndex: index)
                failure.phase = .step
                failure.statementOffset = statementStart
                throw failure
            }
            if let connection = db.sqliteConnection {
                try consumer.statementDidStep(RanStatement(statement: sqliteStatement, connection: connection))
            }
            let changes = db.totalChangesCount > totalChangesBefore ? db.changesCount : 0
            try finish(
                header ?? begin(), rowCount: rowCount, truncated: truncated, changes: changes,
                elapsed: clock.now - start, counters: StatementCounters(sqliteStatement), tracer: tracer,
                consumer: &consumer)
            index += 1
        }
    }
}

extension ScriptRunner {
    /// Runs the script on SQLite's C API, statement by statement.
    ///
    /// - returns: Whether a statement may have written (the caller tells
    ///   live queries registered meanwhile).
    func runDirectly(
        in db: Database, consumer: inout some ResultConsumer, ledger: LocalCommitLedger?
    ) throws -> Bool {
        try refuseNUL()
        guard let connection = db.sqliteConnection else { throw SQLiveError.closed }
        let tracer = tracer?.isEnabled == true ? tracer : nil
        // The script's own UTF-8 bytes, without a copy (SQLite is told
        // their length, so no terminating NUL is needed).
        var text = script
        var wrote = false
        var schemaMayChange = false
        defer {
            if schemaMayChange { db.clearSchemaCache() }
        }
        return try text.withUTF8 { utf8 in
            let buffer = UnsafeRawBufferPointer(utf8).assumingMemoryBound(to: CChar.self)
            let end = buffer.count
            let clock = ContinuousClock()
            var offset = 0
            var index = 0
            var binder = ParameterBinder(parameters)
            while offset < end, let base = buffer.baseAddress {
                let start = clock.now
                let first = RawStatement.first(
                    of: UnsafeBufferPointer(start: base + offset, count: end - offset), on: connection)
                let prepared: RawStatement?
                let next: Int
                switch first {
                case .success(let success):
                    prepared = success.statement
                    next = offset + success.end
                case .failure(let error):
                    var failure = Self.failure(
                        connection, code: error.code, offset: error.offset.map { offset + $0 }, statementIndex: index)
                    failure.phase = .prepare
                    failure.statementOffset = offset
                    throw failure
                }
                guard let prepared else {
                    // Only blanks and comments were left.
                    offset = next
                    continue
                }
                let statement = prepared.handle
                defer { withExtendedLifetime(prepared) {} }
                let bound: [SQLValue]
                do throws(ParameterBinder.Failure) {
                    bound = try binder.bind(statement)
                } catch {
                    throw SQLiteFailure(
                        code: 25, extendedCode: 25, message: error.message, offset: nil, statementIndex: index)
                }
                if let remote {
                    // Prepared here to split the script and to know what the
                    // statement is; run on the cluster's leader.
                    let header = StatementHeader(index: index, script: script, range: offset..<next, columns: [])
                    let ran = try runRemotely(
                        statement, on: remote, values: bound, header: header, consumer: &consumer)
                    if ran.mayHaveWritten { wrote = true }
                    try finish(
                        ran.header, rowCount: ran.rowCount, truncated: ran.truncated, changes: ran.changes,
                        elapsed: clock.now - start, counters: StatementCounters(), tracer: tracer, consumer: &consumer)
                    index += 1
                    offset = next
                    continue
                }
                // A statement that writes, or ends a transaction, may commit:
                // the ledger counts it, so the probe cannot mistake the
                // commit for another writer's (counting more is safe).
                let readonly = sqlite3_stmt_readonly(statement) != 0
                let mayCommit = !readonly || sqlite3_get_autocommit(connection) == 0
                if !readonly { WALClosing.sessionMayWrite(connection) }
                if mayCommit {
                    wrote = true
                    if Self.mayChangeSchema(buffer, from: offset, to: next) { schemaMayChange = true }
                    ledger?.commitWillStart()
                }
                defer { if mayCommit { ledger?.commitDidSettle() } }

                let totalChangesBefore = sqlite3_total_changes64(connection)
                var rowCount = 0
                var truncated = false
                // The columns are read after the first step, as the sqlite3
                // shell reads them: a statement prepared with a schema
                // another connection has changed since (a column added) is
                // prepared again by its first step, and `*` then names the
                // columns the table has now.
                var step = sqlite3_step(statement)
                let columns = Self.columnNames(statement)
                let columnCount = columns.count
                let header = StatementHeader(index: index, script: script, range: offset..<next, columns: columns)
                // A first step that failed: its error read before the consumer may call SQLite.
                let firstFailure =
                    step == SQLITE_ROW || step == SQLITE_DONE
                    ? nil : Self.failure(connection, code: step, offset: nil, statementIndex: index, sql: header.sql)
                if firstFailure == nil {
                    try consumer.statementDidStart(header)
                } else {
                    // The statement's own error is the one told (`run(in:)`).
                    do { try consumer.statementDidStart(header) } catch {}
                }
                var stepped = false
                stepping: while true {
                    if stepped { step = sqlite3_step(statement) }
                    stepped = true
                    switch step {
                    case SQLITE_ROW:
                        if let maxRows, rowCount >= maxRows {
                            truncated = true
                            break stepping
                        }
                        try consumer.consume(row: StatementRow(statement, columnCount: columnCount))
                        rowCount += 1
                    case SQLITE_DONE:
                        break stepping
                    default:
                        // The error is read first: the consumer may call SQLite.
                        var failure =
                            rowCount == 0 && firstFailure != nil
                            ? firstFailure!
                            : Self.failure(connection, code: step, offset: nil, statementIndex: index, sql: header.sql)
                        try consumer.statementDidStep(RanStatement(statement: statement, connection: connection))
                        failure.phase = .step
                        failure.statementOffset = offset
                        throw failure
                    }
                }
                try consumer.statementDidStep(RanStatement(statement: statement, connection: connection))
                let changes =
                    sqlite3_total_changes64(connection) > totalChangesBefore ? Int(sqlite3_changes64(connection)) : 0
                try finish(
                    header, rowCount: rowCount, truncated: truncated, changes: changes, elapsed: clock.now - start,
                    counters: StatementCounters(statement), tracer: tracer, consumer: &consumer)
                index += 1
                offset = next
            }
            do throws(ParameterBinder.Failure) {
                try binder.checkAllBound()
            } catch {
                throw SQLiteFailure(
                    code: 25, extendedCode: 25, message: error.message, offset: nil, statementIndex: index)
            }
            return wrote
        }
    }

    /// A statement's result columns as SQLite names them now (read after
    /// its first step: `runDirectly` says why).
    static func columnNames(_ statement: OpaquePointer) -> [String] {
        (0..<sqlite3_column_count(statement)).map {
            sqlite3_column_name(statement, $0).map { String(cString: $0) } ?? ""
        }
    }

    /// Binds a script's values to its statements, one statement after the
    /// other, as GRDB's statements consume them: positional values in
    /// order (a statement takes as many as it has parameters), named ones
    /// by name, whatever their prefix (`:a`, `@a` and `$a` bind "a").
    struct ParameterBinder {
        struct Failure: Error {
            var message: String
        }

        let parameters: QueryParameters
        /// The next positional value to bind.
        private var next = 0

        init(_ parameters: QueryParameters) {
            self.parameters = parameters
        }

        /// Refuses positional values that no statement took.
        func checkAllBound() throws(Failure) {
            if case .positional(let values) = parameters, next < values.count {
                throw Failure(message: "wrong number of statement arguments: \(values.count)")
            }
        }

        /// Binds the statement's parameters; the values bound, by index
        /// (what a remote database is sent with the statement's text).
        @discardableResult
        mutating func bind(_ statement: OpaquePointer) throws(Failure) -> [SQLValue] {
            let count = Int(sqlite3_bind_parameter_count(statement))
            guard count > 0 else { return [] }
            var bound: [SQLValue] = []
            bound.reserveCapacity(count)
            switch parameters {
            case .positional(let values):
                guard next + count <= values.count else {
                    throw Failure(message: "wrong number of statement arguments: \(values.count)")
                }
                for index in 1...count {
                    values[next + index - 1].bind(to: statement, at: Int32(index))
                    bound.append(values[next + index - 1])
                }
                next += count
            case .named(let values):
                for index in 1...count {
                    guard let cName = sqlite3_bind_parameter_name(statement, Int32(index)) else {
                        throw Failure(message: "statement arguments given by name, but the SQL has ? parameters")
                    }
                    let name = String(String(cString: cName).dropFirst())
                    guard let value = values[name] else {
                        throw Failure(message: "missing statement argument: \(name)")
                    }
                    value.bind(to: statement, at: Int32(index))
                    bound.append(value)
                }
            case .shell:
                bound = Self.bindAsShell(statement, count: count)
            }
            return bound
        }

        /// Binds each parameter as the sqlite3 shell does
        /// (`bind_prepared_stmt`): the value of `temp.sqlite_parameters`
        /// whose key is the parameter's name (`?NNN` for a bare `?`), NULL
        /// when there is none or no such table.
        static func bindAsShell(_ statement: OpaquePointer, count: Int) -> [SQLValue] {
            var bound = [SQLValue](repeating: .null, count: count)
            guard let connection = sqlite3_db_handle(statement) else { return bound }
            var lookup: OpaquePointer?
            let sql = "SELECT value FROM temp.sqlite_parameters WHERE key = ?1"
            guard sqlite3_prepare_v2(connection, sql, -1, &lookup, nil) == SQLITE_OK, let lookup else {
                // No parameters set: every one is NULL (as unbound).
                for index in 1...count { sqlite3_bind_null(statement, Int32(index)) }
                return bound
            }
            defer { sqlite3_finalize(lookup) }
            for index in 1...count {
                let name =
                    sqlite3_bind_parameter_name(statement, Int32(index)).map { String(cString: $0) } ?? "?\(index)"
                sqlite3_reset(lookup)
                SQLValue.text(name).bind(to: lookup, at: 1)
                if sqlite3_step(lookup) == SQLITE_ROW, let value = sqlite3_column_value(lookup, 0) {
                    sqlite3_bind_value(statement, Int32(index), value)
                    bound[index - 1] = StatementRow(lookup, columnCount: 1).value(at: 0)
                } else {
                    sqlite3_bind_null(statement, Int32(index))
                }
            }
            return bound
        }
    }

    /// Reports a statement that ran: to the tracer, then to the consumer.
    private func finish(
        _ header: StatementHeader, rowCount: Int, truncated: Bool, changes: Int, elapsed: Duration,
        counters: StatementCounters, tracer: StatementTracer?, consumer: inout some ResultConsumer
    ) throws {
        tracer?.record(sql: header.sql, elapsed: elapsed, rows: rowCount, counters: counters, origin: origin)
        try consumer.statementDidFinish(
            StatementSummary(
                index: header.index, rowCount: rowCount, truncated: truncated, changes: changes, elapsed: elapsed,
                counters: counters))
    }

    /// SQLite would read the text only up to a NUL byte, and run half of it.
    private func refuseNUL() throws {
        if let offset = Self.offsetOfNUL(in: script) {
            throw SQLiteFailure(
                code: 1, extendedCode: 1, message: "the SQL holds a NUL byte at offset \(offset)", offset: offset,
                statementIndex: 0)
        }
    }

    /// The offset of the first NUL byte in the text, if any.
    static func offsetOfNUL(in text: String) -> Int? {
        let contiguous: Int?? = text.utf8.withContiguousStorageIfAvailable { bytes -> Int? in
            guard let base = bytes.baseAddress, let nul = memchr(base, 0, bytes.count) else { return nil }
            return UnsafeRawPointer(nul) - UnsafeRawPointer(base)
        }
        if let contiguous { return contiguous }
        return text.utf8.firstIndex(of: 0).map { text.utf8.distance(from: text.utf8.startIndex, to: $0) }
    }

    /// The failure SQLite reports on the connection, as GRDB's path reports it.
    private static func failure(
        _ connection: OpaquePointer, code: Int32, offset: Int?, statementIndex: Int, sql: String? = nil
    ) -> SQLiteFailure {
        let extended = sqlite3_extended_errcode(connection)
        let primary = code & 0xFF
        let message =
            primary == SQLITE_INTERRUPT
            ? "interrupted" : sqlite3_errmsg(connection).map { String(cString: $0) } ?? "SQLite error \(code)"
        return SQLiteFailure(
            code: primary, extendedCode: extended, message: message, offset: offset, statementIndex: statementIndex,
            sql: sql)
    }

    /// Whether a statement that may write can change the schema, judged
    /// by its first word: anything but `INSERT`, `UPDATE`, `DELETE`,
    /// `REPLACE`, `SELECT`, `VALUES`, `WITH`, `BEGIN`, `COMMIT`, `END` and
    /// `SAVEPOINT` may (`ROLLBACK` may undo a `CREATE`).
    private static func mayChangeSchema(_ text: UnsafeBufferPointer<CChar>, from start: Int, to end: Int) -> Bool {
        let bytes = UnsafeRawBufferPointer(text)
        let statement = bytes[start..<end]
        var position = start + SQLScript.blankPrefixLength(statement)
        // The first word, its letters packed 5 bits each (no allocation:
        // this runs for every statement that writes).
        var word: UInt64 = 0
        var length = 0
        while position < end {
            let letter = bytes[position] & 0xDF
            guard letter >= UInt8(ascii: "A") && letter <= UInt8(ascii: "Z") else { break }
            guard length < 10 else { return true }
            word = word << 5 | UInt64(letter - UInt8(ascii: "A") + 1)
            length += 1
            position += 1
        }
        return !Self.dataWords.contains(word)
    }

    /// The first words of statements that write rows only, packed as
    /// `mayChangeSchema` packs them.
    private static let dataWords: Set<UInt64> = Set(
        ["INSERT", "UPDATE", "DELETE", "REPLACE", "SELECT", "VALUES", "WITH", "BEGIN", "COMMIT", "END", "SAVEPOINT"]
            .map { $0.utf8.reduce(0) { $0 << 5 | UInt64($1 - UInt8(ascii: "A") + 1) } })

    /// Where SQLite locates the error in the statement that starts at
    /// `start` (a byte offset in the script), relative to that start.
    ///
    /// GRDB does not expose `sqlite3_error_offset`, and may call SQLite
    /// again after a failed prepare; so the statement is prepared once more,
    /// raw, just to ask. This only happens on an error.
    private func errorOffset(in db: Database, from start: Int) -> Int? {
        let utf8 = script.utf8
        guard start < utf8.count, let connection = db.sqliteConnection else { return nil }
        let rest = String(decoding: utf8.dropFirst(start), as: UTF8.self)
        do {
            _ = try RawStatement(on: connection, rest)
            return nil
        } catch {
            return error.offset
        }
    }
}
