import Foundation
import SQLiveEngine
import SQLiveLocks
import SQLiveProtocol

extension MCPSession {
    /// The catalog `tools/list` answers.
    var toolList: JSONValue {
        MCPToolCatalog.tools(allowWrites: allowsWrites, limits: options.limits)
    }

    /// `tools/call`, on a thread of its own (`watch` and `unwatch` on the
    /// request lane): a tool's result, its failures
    /// as results with `isError: true`.
    ///
    /// - throws: -32602 for a tool that does not exist.
    func callTool(_ params: MCPToolsCallRequest.Params, work: ScheduledWork) throws(ResponseError) -> JSONValue {
        let name = params.name
        guard MCPToolCatalog.names.contains(name) else {
            throw .invalidParams("Unknown tool: \(name)", field: "name")
        }
        let arguments = params.arguments ?? .object([:])
        do throws(ToolFailure) {
            guard case .object = arguments else { throw ToolFailure("the arguments must be an object") }
            let structured: JSONValue
            switch name {
            case "query": structured = try query(arguments, work: work)
            case "explain": structured = try explain(arguments, work: work)
            case "schema": structured = try schema(work: work)
            case "watch": structured = try watch(arguments, work: work)
            case "changes": structured = try changes(arguments)
            case "wait": structured = try wait(arguments, work: work)
            default: structured = try unwatch(arguments, work: work)
            }
            return Self.toolResult(structured)
        } catch {
            if work.isCancelled { throw .requestCancelled }
            return Self.toolError(error)
        }
    }

    static func toolResult(_ structured: JSONValue) -> JSONValue {
        [
            "content": [["type": "text", "text": .string(text(of: structured))]],
            "structuredContent": structured,
            "isError": false,
        ]
    }

    static func toolError(_ failure: ToolFailure) -> JSONValue {
        var result: [String: JSONValue] = [
            "content": [["type": "text", "text": .string(failure.message)]],
            "isError": true,
        ]
        if let details = failure.details { result["structuredContent"] = ["error": details] }
        return .object(result)
    }

    /// The JSON text of a value, for the text content that goes with
    /// structured content.
    static func text(of value: JSONValue) -> String {
        (try? JSONCoding.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "\(value)"
    }

    // MARK: - Tools

    private func query(_ arguments: JSONValue, work: ScheduledWork) throws(ToolFailure) -> JSONValue {
        let database = try openDatabase()
        let sql = try Self.string(arguments, "sql")
        let parameters = try Self.parameters(arguments)
        var limits = options.limits
        if let maxRows = arguments["maxRows"] {
            guard let requested = maxRows.integerValue, requested >= 0 else {
                throw ToolFailure("maxRows must be an integer, 0 or more")
            }
            limits.rows = min(limits.rows, Int(clamping: requested))
        }
        if let readers {
            let outcome: ConfinedReader.Outcome
            do {
                outcome = try readers.withReader { reader throws(SQLiveError) in
                    try work.whileRunning(interrupt: reader.interrupt) { () throws(SQLiveError) in
                        try reader.run(sql, parameters: parameters, limits: limits)
                    }
                }
            } catch {
                throw Self.failure(error, sql: sql)
            }
            switch outcome {
            case .rows(let rows):
                var result = Self.rowsJSON(
                    columns: rows.columns, rows: rows.rows, truncatedBy: rows.truncated?.rawValue)
                result["elapsedMs"] = .double(rows.elapsed.protocolMilliseconds)
                return .object(result)
            case .writes:
                guard allowsWrites else {
                    throw ToolFailure(
                        "This statement writes, and sqlive --mcp opened \(shownPath) read-only: SQLite "
                            + "(sqlite3_stmt_readonly) reports that it would change the database. Start sqlive with "
                            + "--allow-writes to let an agent write.",
                        details: ["readonly": true])
                }
            }
        } else if SQLScript.statementCount(sql) > 1 {
            throw ToolFailure("The SQL holds more than one statement: send one per call")
        }
        return try runOnSession(sql, parameters: parameters, limits: limits, database: database, work: work)
    }

    /// Runs a statement that writes (writes allowed) on the session's
    /// connection, within the limits.
    private func runOnSession(
        _ sql: String, parameters: QueryParameters, limits: ConfinedReader.Limits, database: LiveDatabase,
        work: ScheduledWork
    ) throws(ToolFailure) -> JSONValue {
        var collector = CappedCollector(maxBytes: limits.bytes)
        let deadline = ContinuousClock.now.advanced(by: limits.time)
        let own = try ownConnection?.connection()
        do {
            if let own {
                // The session's own connection, one statement at a time, so
                // that cancelling one interrupts no other.
                try sessionStatement.withLock { _ in
                    try work.whileRunning(interrupt: own.interrupt) {
                        try own.run(
                            sql, parameters: parameters, maxRows: limits.rows,
                            isCancelled: { work.isCancelled || ContinuousClock.now >= deadline },
                            consumer: &collector)
                    }
                }
            } else {
                try sessionStatement.withLock { _ in
                    try work.whileRunning(interrupt: database.interrupt) {
                        try database.run(
                            sql, parameters: parameters, maxRows: limits.rows, forClient: true,
                            isCancelled: { work.isCancelled || ContinuousClock.now >= deadline },
                            consumer: &collector)
                    }
                }
            }
        } catch is CappedCollector.CapReached {
            // The rows so far are the answer.
        } catch let failure as SQLiteFailure {
            var failure = failure
            if failure.code == 9 {
                failure.message =
                    "interrupted: the statement ran past the time limit (\(limits.time)), or was cancelled"
            }
            throw Self.failure(.sqlite(failure), sql: sql)
        } catch {
            throw ToolFailure("\(error)")
        }
        var result = Self.rowsJSON(
            columns: collector.columns, rows: collector.rows,
            truncatedBy: collector.cappedBySize ? "bytes" : collector.truncated ? "rows" : nil)
        result["changes"] = .integer(Int64(collector.changes))
        result["elapsedMs"] = .double(collector.elapsed.protocolMilliseconds)
        return .object(result)
    }

    private func explain(_ arguments: JSONValue, work: ScheduledWork) throws(ToolFailure) -> JSONValue {
        let database = try openDatabase()
        let sql = try Self.string(arguments, "sql")
        let advise = arguments["advise"]?.boolValue ?? false
        if SQLScript.statementCount(sql) > 1 {
            throw ToolFailure("The SQL holds more than one statement: send one per call")
        }
        let explanation: Explanation
        do throws(SQLiveError) {
            // On the checker's connection, as the language server's hovers:
            // the session's would take a lock a writer may meet.
            if let checker {
                explanation = try checker.explain(sql, advise: advise)
            } else {
                // On the session's connection (an in-memory database): one
                // statement there at a time, so a cancelled query's
                // interrupt never reaches this one.
                explanation = try sessionStatement.withLock { _ throws(SQLiveError) in
                    try Lane.run { () async throws(SQLiveError) in
                        try await database.explain(sql, advise: advise)
                    }
                }
            }
        } catch {
            throw Self.failure(error, sql: sql)
        }
        func nodes(_ plan: QueryPlan) -> JSONValue {
            .array(
                plan.nodes.map {
                    ["id": .integer(Int64($0.id)), "parent": .integer(Int64($0.parent)), "detail": .string($0.detail)]
                })
        }
        var result: [String: JSONValue] = [
            "plan": nodes(explanation.plan),
            "hints": .array(explanation.hints.map { .string($0.explanation) }),
        ]
        if let advice = explanation.advice {
            result["advice"] = .array(
                advice.proposals.map { ["sql": .string($0.sql), "planAfter": nodes($0.planAfter)] })
        }
        return .object(result)
    }

    private func schema(work: ScheduledWork) throws(ToolFailure) -> JSONValue {
        let database = try openDatabase()
        do throws(SQLiveError) {
            return Self.schemaJSON(
                try Lane.run { () async throws(SQLiveError) in try await database.committedSchema() })
        } catch {
            throw Self.failure(error, sql: nil)
        }
    }

    static func schemaJSON(_ schema: SchemaInfo) -> JSONValue {
        func relation(_ relation: SchemaInfo.Relation) -> JSONValue {
            [
                "name": .string(relation.name),
                "sql": relation.sql.map(JSONValue.string) ?? .null,
                "columns": .array(
                    relation.columns.map { column in
                        [
                            "name": .string(column.name), "type": .string(column.type),
                            "notNull": .bool(column.notNull), "primaryKey": .integer(Int64(column.primaryKeyIndex)),
                        ]
                    }),
            ]
        }
        func object(_ object: SchemaInfo.Object) -> JSONValue {
            [
                "name": .string(object.name), "table": .string(object.table),
                "sql": object.sql.map(JSONValue.string) ?? .null,
            ]
        }
        return [
            "tables": .array(schema.tables.map(relation)),
            "views": .array(schema.views.map(relation)),
            "indexes": .array(schema.indexes.map(object)),
            "triggers": .array(schema.triggers.map(object)),
        ]
    }

    private func watch(_ arguments: JSONValue, work: ScheduledWork) throws(ToolFailure) -> JSONValue {
        _ = try openDatabase()
        let name = try Self.string(arguments, "name")
        let sql = try Self.string(arguments, "sql")
        let parameters = try Self.parameters(arguments)
        guard self.watch(named: name) == nil else {
            throw ToolFailure("A live query named \(name) exists already: unwatch it first, or choose another name")
        }
        // The statement is first run confined, within the limits: a live
        // query is one statement that only reads, and that ends in time.
        if let readers {
            do {
                let outcome = try readers.withReader { reader throws(SQLiveError) in
                    try work.whileRunning(interrupt: reader.interrupt) { () throws(SQLiveError) in
                        try reader.run(sql, parameters: parameters, limits: options.limits)
                    }
                }
                if outcome == .writes {
                    throw ToolFailure("A live query must only read: SQLite reports that this statement writes")
                }
            } catch let error as SQLiveError {
                throw Self.failure(error, sql: sql)
            } catch let failure as ToolFailure {
                throw failure
            } catch {
                throw ToolFailure("\(error)")
            }
        }
        let definition = LiveQueryDefinition(sql: sql, parameters: parameters)
        let first: LiveQuerySnapshot
        do throws(SQLiveError) {
            first = try Lane.run { () async throws(SQLiveError) in
                try await self.directory(for: name).register(name: name, definition)
            }
        } catch {
            throw Self.failure(error, sql: sql)
        }
        guard didWatch() else { throw ToolFailure("the server is closing") }
        seen.withLock { $0[name] = first }
        return .object(liveJSON(first, error: nil))
    }

    private func unwatch(_ arguments: JSONValue, work: ScheduledWork) throws(ToolFailure) -> JSONValue {
        let name = try Self.string(arguments, "name")
        guard database != nil, watch(named: name) != nil else { throw ToolFailure("No live query named \(name)") }
        drop(name)
        // It fails only when an earlier call unwatched it meanwhile: it is gone either way.
        let directory = self.directory(for: name)
        Lane.await { try? await directory.unregister(name: name) }
        return ["name": .string(name)]
    }

    /// The most `wait` calls at once (each holds one of the tool threads),
    /// and the longest one.
    static let concurrentWaits = 4
    static let longestWait = Duration.seconds(600)

    /// `wait`: returns once the live query has a version after
    /// `afterVersion` (the newest the agent saw when absent), with what
    /// changed since the result the agent last got; or at the time-out.
    private func wait(_ arguments: JSONValue, work: ScheduledWork) throws(ToolFailure) -> JSONValue {
        _ = try openDatabase()
        let name = try Self.string(arguments, "name")
        guard let handle = watch(named: name) else {
            throw ToolFailure("No live query named \(name): register it with `watch` first")
        }
        let object = arguments.objectValue ?? [:]
        let timeoutMs = object["timeoutMs"]?.integerValue ?? 30_000
        guard timeoutMs >= 0, Duration.milliseconds(timeoutMs) <= Self.longestWait else {
            throw ToolFailure("timeoutMs must be between 0 and \(Self.longestWait.protocolMilliseconds) ms")
        }
        let known = seen.withLock { $0[name] }
        let after = object["afterVersion"]?.integerValue.map(Int.init) ?? known?.version ?? handle.first.version
        let admitted = arrivals.withLock { arrivals -> Bool in
            guard arrivals.waiting < Self.concurrentWaits else { return false }
            arrivals.waiting += 1
            return true
        }
        guard admitted else {
            throw ToolFailure("\(Self.concurrentWaits) waits are under way already: wait for one of them to end")
        }
        defer { arrivals.withLock { $0.waiting -= 1 } }
        if let serverWaits {
            guard serverWaits.take() else {
                throw ToolFailure(
                    "\(serverWaits.maximum) waits are under way on this server already (every agent's together): "
                        + "call wait again later")
            }
        }
        defer { serverWaits?.give() }
        let deadline = ContinuousClock.now + .milliseconds(timeoutMs)
        var timedOut = false
        var current: (snapshot: LiveQuerySnapshot, error: SQLiveError?)
        while true {
            let eventsBefore = arrivals.withLock { $0.events[name] ?? 0 }
            // The version now (a change may have come before the forwarder told of it).
            current = try Self.current(handle)
            if current.snapshot.version > after || current.error != nil || timedOut { break }
            enum Outcome { case arrived, timedOut, cancelled, closed }
            let outcome = work.whileRunning(interrupt: { self.arrivals.broadcast() }) { () -> Outcome in
                arrivals.wait { arrivals -> Condition<Arrivals>.Step<Outcome> in
                    if arrivals.closed { return .done(.closed) }
                    if work.isCancelled { return .done(.cancelled) }
                    if (arrivals.events[name] ?? 0) > eventsBefore { return .done(.arrived) }
                    let left = deadline - .now
                    // Woken at a cancel, an event or the close; the cap is a safety net.
                    return left <= .zero ? .done(.timedOut) : .waitAtMost(min(left, .milliseconds(500)))
                }
            }
            switch outcome {
            case .cancelled: throw ToolFailure("cancelled")
            case .closed: throw ToolFailure("the server is closing")
            case .timedOut: timedOut = true
            case .arrived: continue
            }
        }
        var result = liveJSON(current.snapshot, error: current.error)
        result["timedOut"] = .bool(timedOut)
        result["afterVersion"] = .integer(Int64(after))
        if let known, known.version == after, known.result.columns == current.snapshot.result.columns,
            current.snapshot.version > after
        {
            let changes = RowChanges(from: known.result.rows, to: current.snapshot.result.rows)
            result["changes"] = [
                "removed": .array(
                    changes.removed.prefix(options.limits.rows).map {
                        ["from": .integer(Int64($0.from)), "row": .array($0.row.map { RPCValue($0).json })]
                    }),
                "added": .array(
                    changes.added.prefix(options.limits.rows).map {
                        ["at": .integer(Int64($0.at)), "row": .array($0.row.map { RPCValue($0).json })]
                    }),
                "changed": .array(
                    changes.changed.prefix(options.limits.rows).map {
                        [
                            "from": .integer(Int64($0.from)), "at": .integer(Int64($0.at)),
                            "row": .array($0.row.map { RPCValue($0).json }),
                        ]
                    }),
            ]
        }
        seen.withLock { $0[name] = current.snapshot }
        return .object(result)
    }

    /// A live query's last delivery, from the tool's thread.
    private static func current(_ handle: LiveQueryHandle) throws(ToolFailure)
        -> (snapshot: LiveQuerySnapshot, error: SQLiveError?)
    {
        do throws(SQLiveError) {
            return try Lane.run { () async throws(SQLiveError) in try await handle.current() }
        } catch {
            throw ToolFailure("the live query \(handle.name) ended: \(error.description)")
        }
    }

    /// `changes`: the rows each commit since `after` inserted, updated and
    /// deleted, by any writer; the first call starts the feed.
    private func changes(_ arguments: JSONValue) throws(ToolFailure) -> JSONValue {
        let database = try openDatabase()
        let object = arguments.objectValue ?? [:]
        let after = Int(object["after"]?.integerValue ?? 0)
        let limit = Int(object["limit"]?.integerValue ?? Int64(options.limits.rows))
        guard limit >= 1 else { throw ToolFailure("limit must be 1 or more") }
        var tables: Set<String>?
        if let names = object["tables"] {
            guard let array = names.arrayValue, array.allSatisfy({ $0.stringValue != nil }) else {
                throw ToolFailure("tables must be an array of table names")
            }
            tables = Set(array.compactMap { $0.stringValue?.lowercased() })
        }
        guard let (log, started) = changeLog(database) else { throw ToolFailure("the server is closing") }
        let (commits, dropped, more) = log.commits(after: after, tables: tables, limit: limit)
        var result: [String: JSONValue] = [
            "commits": .array(
                commits.map { commit in
                    [
                        "commit": .integer(Int64(commit.commit)), "cause": .string(commit.cause.rawValue),
                        "rows": .array(commit.changes.map(ChangeFeedJSON.row)),
                    ]
                }),
            "last": .integer(Int64(commits.last?.commit ?? after)),
            "more": .bool(more),
        ]
        if started {
            result["note"] =
                "The change feed starts now: call again, with `after` set to `last`, to see what was written since."
        }
        if dropped {
            result["dropped"] = .string("Older commits were dropped (the log keeps \(MCPChangeLog.capacity) rows).")
        }
        return .object(result)
    }

    // MARK: - Values

    /// A live query's rows as the `watch` tool and its resource give them,
    /// cut at the row cap and the size cap.
    func liveJSON(_ snapshot: LiveQuerySnapshot, error: SQLiveError?) -> [String: JSONValue] {
        let limits = options.limits
        var rows: [[SQLValue]] = []
        var bytes = 0
        var cut: String? = snapshot.result.truncated ? "rows" : nil
        for row in snapshot.result.rows {
            guard rows.count < limits.rows else {
                cut = "rows"
                break
            }
            bytes += row.reduce(0) { $0 + $1.byteCount }
            guard bytes <= limits.bytes else {
                cut = "bytes"
                break
            }
            rows.append(row)
        }
        var result = Self.rowsJSON(columns: snapshot.result.columns, rows: rows, truncatedBy: cut)
        result["name"] = .string(snapshot.name)
        result["uri"] = .string(MCPProtocol.liveURI(snapshot.name))
        result["version"] = .integer(Int64(snapshot.version))
        result["total"] = .integer(Int64(snapshot.result.total))
        if let error { result["error"] = .string(error.description) }
        return result
    }

    static func rowsJSON(columns: [String], rows: [[SQLValue]], truncatedBy: String?) -> [String: JSONValue] {
        var result: [String: JSONValue] = [
            "columns": .array(columns.map(JSONValue.string)),
            "rows": .array(rows.map { row in .array(row.map { RPCValue($0).json }) }),
            "truncated": .bool(truncatedBy != nil),
            "rowCount": .integer(Int64(rows.count)),
        ]
        if let truncatedBy { result["truncatedBy"] = .string(truncatedBy) }
        return result
    }

    private static func string(_ arguments: JSONValue, _ key: String) throws(ToolFailure) -> String {
        guard let value = arguments[key] else { throw ToolFailure("missing argument: \(key)") }
        guard let string = value.stringValue else { throw ToolFailure("\(key) must be a string") }
        return string
    }

    private static func parameters(_ arguments: JSONValue) throws(ToolFailure) -> QueryParameters {
        guard let params = arguments["params"], params != .null else { return .none }
        do {
            return try JSONCoding.decode(RPCParameters.self, from: params).queryParameters
        } catch {
            throw ToolFailure("params: \(ResponseError(decoding: error).message)")
        }
    }

    /// An engine error as a tool's failure: SQLite's message and where in
    /// the SQL it is, and its codes in the structured content.
    static func failure(_ error: SQLiveError, sql: String?) -> ToolFailure {
        guard let failure = error.sqliteFailure else {
            var details: [String: JSONValue] = ["message": .string(error.description)]
            if case .invalidSQL(_, let offset?) = error { details["offset"] = .integer(Int64(offset)) }
            return ToolFailure(error.description, details: .object(details))
        }
        var message = "SQLite error: \(failure.message)"
        if failure.code == 23 {
            // The authorizer's refusal (SQLITE_AUTH) says only "not authorized".
            message +=
                " (sqlive --mcp refuses ATTACH and DETACH, VACUUM, transactions, load_extension and PRAGMAs that "
                + "change settings: SQLite's authorizer on the agent's connection)"
        }
        var details: [String: JSONValue] = [
            "message": .string(failure.message), "sqliteCode": .integer(Int64(failure.code)),
            "extendedCode": .integer(Int64(failure.extendedCode)),
        ]
        if let offset = failure.offset, let sql {
            details["offset"] = .integer(Int64(offset))
            let bytes = Array(sql.utf8)
            if offset >= 0, offset < bytes.count {
                let near = String(decoding: bytes[offset..<min(bytes.count, offset + 30)], as: UTF8.self)
                message += " (at byte \(offset), near \"\(near)\")"
            }
        }
        return ToolFailure(message, details: .object(details))
    }
}

/// Collects one statement's rows, up to a size cap: past it, the
/// statement stops (`CapReached`), and the rows so far are the answer.
struct CappedCollector: ResultConsumer {
    struct CapReached: Error {}

    let maxBytes: Int
    private(set) var columns: [String] = []
    private(set) var rows: [[SQLValue]] = []
    private(set) var bytes = 0
    private(set) var truncated = false
    private(set) var cappedBySize = false
    private(set) var changes = 0
    private(set) var elapsed = Duration.zero

    init(maxBytes: Int) {
        self.maxBytes = maxBytes
    }

    mutating func statementDidStart(_ header: StatementHeader) {
        columns = header.columns
    }

    mutating func consume(row: StatementRow) throws {
        let values = row.values
        bytes += values.reduce(0) { $0 + $1.byteCount }
        guard bytes <= maxBytes else {
            cappedBySize = true
            throw CapReached()
        }
        rows.append(values)
    }

    mutating func statementDidFinish(_ summary: StatementSummary) {
        truncated = summary.truncated
        changes = summary.changes
        elapsed = summary.elapsed
    }
}

/// Awaits async work from the request lane's thread, which may block (it
/// is not one of Swift concurrency's threads).
enum Lane {
    static func await<T: Sendable>(_ operation: @escaping @Sendable () async -> T) -> T {
        let result = Locked<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let value = await operation()
            result.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }

    /// `await` for an operation that throws the engine's errors.
    static func run<T: Sendable>(_ operation: @escaping @Sendable () async throws(SQLiveError) -> T)
        throws(SQLiveError) -> T
    {
        try Lane.await { () async -> Result<T, SQLiveError> in
            do throws(SQLiveError) {
                return .success(try await operation())
            } catch {
                return .failure(error)
            }
        }.get()
    }
}
