import Foundation
import GRDB

/// The one actor that decides what to refresh, and delivers the results.
///
/// Every change signal — sqlive's own commits, other writers' commits,
/// schema changes — comes here. The scheduler keeps the live-query
/// registry, asks its `CoalescingStateMachine` what to do, refreshes the
/// pending evaluations from one snapshot, and delivers each live query's
/// new result when, and only when, it changed.
///
/// Live queries with equal SQL and parameters share one `Evaluation`: one
/// region, one fetch per refresh.
actor RefreshScheduler {
    /// One distinct SQL statement and its parameters, shared by the live
    /// queries that ask it.
    struct Evaluation {
        var definition: LiveQueryDefinition
        var members: Set<String> = []
        /// What the statement reads; the full database until known (a
        /// failing query is refreshed by any change, so that it recovers).
        var region = DatabaseRegion.fullDatabase
        var tables: [String] = []
        var result: LiveQueryResult?
        var error: SQLiveError?
        /// How long the last fetch took; refreshes run the fastest first.
        var lastElapsed: Duration = .zero
    }

    /// One named live query.
    struct Query {
        var definition: LiveQueryDefinition
        var version: Int
        var refreshes = 0
        var lastRefresh: Date?
        var lastRefreshDuration: Duration?
        var paused = false
        /// Changes that arrived while paused.
        var missed: CoalescingStateMachine<LiveQueryDefinition, ContinuousClock.Instant>.Pending?
        /// The last result delivered to subscribers.
        var delivered: LiveQueryResult
        /// The last error delivered, until a result replaces it.
        var deliveredError: SQLiveError?
    }

    /// A fetch's outcome, from the database thread.
    struct Fetched: Sendable {
        var result: LiveQueryResult
        var region: DatabaseRegion
        var elapsed: Duration
    }

    private let reader: any DatabaseReader
    private let tracer: StatementTracer
    private let events: Broadcaster<LiveQueryEvent>
    private let rowCap: Int
    private let interestDidChange: @Sendable (DatabaseRegion) -> Void
    private let clock = ContinuousClock()

    // Mutable State (actor-isolated)
    //
    // - `queries[name].definition` is always a key of `evaluations`, and
    //   that evaluation's `members` contains `name`.
    // - `machine.pending` only holds keys of `evaluations` with at least
    //   one member that is not paused.
    // - Versions only grow: a query's version increases by one with each
    //   delivered result.
    private var machine: CoalescingStateMachine<LiveQueryDefinition, ContinuousClock.Instant>
    private var evaluations: [LiveQueryDefinition: Evaluation] = [:]
    private var queries: [String: Query] = [:]
    private var wakeTask: Task<Void, Never>?
    private var isShutDown = false
    /// The union of the regions of evaluations with members, as last told
    /// to the change recorder. It may be larger than needed (after a query
    /// left, or a region shrank) but never smaller: growing is published at
    /// once, shrinking after the next refresh (`interestIsStale`).
    private var interest = DatabaseRegion()
    private var interestIsStale = false

    init(
        reader: any DatabaseReader, tracer: StatementTracer, events: Broadcaster<LiveQueryEvent>,
        options: LiveQueryOptions, interestDidChange: @escaping @Sendable (DatabaseRegion) -> Void
    ) {
        self.reader = reader
        self.tracer = tracer
        self.events = events
        self.rowCap = options.rowCap
        self.interestDidChange = interestDidChange
        self.machine = CoalescingStateMachine(window: options.coalescingWindow)
    }

    // MARK: - Registry

    func register(name: String, definition: LiveQueryDefinition) async throws(SQLiveError) -> LiveQuerySnapshot {
        guard !isShutDown else { throw .closed }
        guard queries[name] == nil else { throw .liveQueryNameTaken(name) }
        let (result, tables) = try await firstResult(for: definition)
        // Another registration of the same name may have won the race while
        // this one was fetching.
        guard queries[name] == nil else { throw .liveQueryNameTaken(name) }
        queries[name] = Query(definition: definition, version: 1, delivered: result)
        join(name, definition)
        return LiveQuerySnapshot(name: name, version: 1, result: result, tables: tables)
    }

    func update(name: String, sql: String?, parameters: QueryParameters?) async throws(SQLiveError)
        -> LiveQuerySnapshot
    {
        guard let query = queries[name] else { throw .unknownLiveQuery(name) }
        let definition = LiveQueryDefinition(
            sql: sql ?? query.definition.sql, parameters: parameters ?? query.definition.parameters)
        let (result, tables) = try await firstResult(for: definition)
        guard var query = queries[name] else { throw .unknownLiveQuery(name) }
        leave(name, query.definition)
        query.definition = definition
        query.version += 1
        query.delivered = result
        query.deliveredError = nil
        query.missed = nil
        queries[name] = query
        join(name, definition)
        return LiveQuerySnapshot(name: name, version: query.version, result: result, tables: tables)
    }

    func unregister(name: String) throws(SQLiveError) {
        guard let query = queries.removeValue(forKey: name) else { throw .unknownLiveQuery(name) }
        leave(name, query.definition)
    }

    func unregisterAll() {
        for (name, query) in queries {
            leave(name, query.definition)
        }
        queries.removeAll()
    }

    func pause(name: String) throws(SQLiveError) {
        guard queries[name] != nil else { throw .unknownLiveQuery(name) }
        queries[name]!.paused = true
        let definition = queries[name]!.definition
        if activeMembers(of: definition).isEmpty {
            machine.forget(definition)
        }
    }

    func resume(name: String) throws(SQLiveError) {
        guard var query = queries[name] else { throw .unknownLiveQuery(name) }
        guard query.paused else { return }
        query.paused = false
        let missed = query.missed
        query.missed = nil
        queries[name] = query
        if let missed {
            let action = machine.keysDidChange(
                [query.definition], cause: missed.cause, events: missed.events, at: clock.now)
            perform(action)
        }
    }

    func list() -> [LiveQueryInfo] {
        queries.keys.sorted().map { name in
            let query = queries[name]!
            let evaluation = evaluations[query.definition]
            return LiveQueryInfo(
                name: name, definition: query.definition, tables: evaluation?.tables ?? [],
                region: evaluation.map { $0.error == nil ? $0.region.description : "unknown" } ?? "",
                version: query.version, refreshes: query.refreshes, lastRefresh: query.lastRefresh,
                lastRefreshDuration: query.lastRefreshDuration, paused: query.paused,
                error: evaluation?.error)
        }
    }

    func shutdown() {
        isShutDown = true
        wakeTask?.cancel()
        wakeTask = nil
        unregisterAll()
    }

    /// Fetches a definition's first result, and checks it can be a live query.
    private func firstResult(for definition: LiveQueryDefinition) async throws(SQLiveError)
        -> (LiveQueryResult, [String])
    {
        if let evaluation = evaluations[definition], let result = evaluation.result, evaluation.error == nil,
            machine.pending[definition] == nil
        {
            // Shared: the evaluation's result is current, since any change
            // after it would have marked it pending.
            return (result, evaluation.tables)
        }
        let rowCap = rowCap
        let tracer = tracer
        do {
            let fetched = try await reader.read { db in
                try Self.validate(definition, db)
                return try Self.fetch(definition, db, rowCap: rowCap, tracer: tracer)
            }
            let tables = Self.tables(in: fetched.region)
            var evaluation = evaluations[definition] ?? Evaluation(definition: definition, result: fetched.result)
            evaluation.region = fetched.region
            evaluation.tables = tables
            evaluation.lastElapsed = fetched.elapsed
            evaluations[definition] = evaluation
            return (fetched.result, tables)
        } catch {
            throw SQLiveError.wrap(error)
        }
    }

    private func join(_ name: String, _ definition: LiveQueryDefinition) {
        evaluations[definition, default: Evaluation(definition: definition)].members.insert(name)
        widenInterest(with: evaluations[definition]!.region)
    }

    private func leave(_ name: String, _ definition: LiveQueryDefinition) {
        evaluations[definition]?.members.remove(name)
        if evaluations[definition]?.members.isEmpty ?? false {
            evaluations[definition] = nil
            machine.forget(definition)
        } else if activeMembers(of: definition).isEmpty {
            machine.forget(definition)
        }
        interestIsStale = true
    }

    private func activeMembers(of definition: LiveQueryDefinition) -> [String] {
        (evaluations[definition]?.members ?? []).filter { queries[$0].map { !$0.paused } ?? false }
    }

    /// Adds a region to the change recorder's interest, at once.
    private func widenInterest(with region: DatabaseRegion) {
        let widened = interest.union(region)
        guard widened != interest else { return }
        interest = widened
        interestDidChange(interest)
    }

    /// Recomputes the change recorder's interest from every evaluation, if
    /// it may be larger than needed. This costs one union per evaluation,
    /// so it only runs after a refresh, and only when something shrank.
    private func narrowInterestIfStale() {
        guard interestIsStale else { return }
        interestIsStale = false
        var union = DatabaseRegion()
        for evaluation in evaluations.values where !evaluation.members.isEmpty {
            union.formUnion(evaluation.region)
        }
        if union != interest {
            interest = union
            interestDidChange(interest)
        }
    }

    // MARK: - Changes

    func handle(_ signal: ChangeSignal) {
        guard !isShutDown else { return }
        switch signal {
        case .local(let kinds):
            let keys = evaluations.values.filter { evaluation in
                kinds.contains { evaluation.region.isModified(byEventsOfKind: $0) }
            }.map(\.definition)
            mark(keys, cause: .local)
        case .external:
            mark(Array(evaluations.keys), cause: .external)
        case .schemaChanged(let cause):
            mark(Array(evaluations.keys), cause: cause)
        case .fileChanged(let message):
            events.yield(.databaseFileChanged(message))
        }
    }

    private func mark(_ keys: [LiveQueryDefinition], cause: ChangeCause) {
        var active: [LiveQueryDefinition] = []
        for key in keys {
            guard let evaluation = evaluations[key] else { continue }
            var hasActive = false
            for name in evaluation.members {
                guard var query = queries[name] else { continue }
                if query.paused {
                    query.missed = .init(events: (query.missed?.events ?? 0) + 1, cause: cause)
                    queries[name] = query
                } else {
                    hasActive = true
                }
            }
            if hasActive { active.append(key) }
        }
        perform(machine.keysDidChange(active, cause: cause, at: clock.now))
    }

    private func perform(_ action: CoalescingStateMachine<LiveQueryDefinition, ContinuousClock.Instant>.Action) {
        switch action {
        case .none:
            break
        case .wake(let deadline):
            wakeTask?.cancel()
            wakeTask = Task { [clock] in
                do {
                    try await Task.sleep(until: deadline, clock: clock)
                } catch {
                    return
                }
                self.timerDidFire()
            }
        case .refresh(let batch):
            Task { await self.refresh(batch) }
        }
    }

    private func timerDidFire() {
        perform(machine.timerDidFire(at: clock.now))
    }

    // MARK: - Refresh

    /// Fetches every pending evaluation from one snapshot, delivering each
    /// result as soon as it is read.
    ///
    /// The batch runs fastest first (by each evaluation's last fetch time),
    /// and each result is delivered while the next ones are fetched, so a
    /// slow query delays only itself: changes that arrive meanwhile wait
    /// for the next refresh, one refresh at most.
    private func refresh(
        _ batch: [LiveQueryDefinition: CoalescingStateMachine<LiveQueryDefinition, ContinuousClock.Instant>.Pending]
    ) async {
        let definitions = batch.keys
            .filter { evaluations[$0] != nil }
            .sorted { (evaluations[$0]?.lastElapsed ?? .zero) < (evaluations[$1]?.lastElapsed ?? .zero) }
        var retry: [LiveQueryDefinition] = []
        if !definitions.isEmpty {
            let (outcomes, continuation) = AsyncStream<(LiveQueryDefinition, Result<Fetched, SQLiveError>)>
                .makeStream()
            let reader = reader
            let rowCap = rowCap
            let tracer = tracer
            // One read: one snapshot for all queries of the batch.
            async let snapshot: Void = reader.read { db in
                defer { continuation.finish() }
                for definition in definitions {
                    do {
                        continuation.yield(
                            (definition, .success(try Self.fetch(definition, db, rowCap: rowCap, tracer: tracer))))
                    } catch {
                        continuation.yield((definition, .failure(SQLiveError.wrap(error))))
                    }
                }
            }
            var delivered = Set<LiveQueryDefinition>()
            for await (definition, outcome) in outcomes {
                delivered.insert(definition)
                if !deliver(outcome, for: definition, pending: batch[definition]!) {
                    retry.append(definition)
                }
            }
            do {
                try await snapshot
            } catch {
                // The snapshot could not be read (a writer holding a lock
                // beyond the busy timeout, an interrupt): try again after
                // the window rather than report a transient error.
                Log.scheduler.debug("refresh failed, will retry: \(error)")
                continuation.finish()
                retry += definitions.filter { !delivered.contains($0) }
            }
        }
        narrowInterestIfStale()
        guard !isShutDown else { return }
        perform(machine.refreshDidFinish(at: clock.now))
        if !retry.isEmpty {
            let cause = retry.compactMap { batch[$0]?.cause }.last ?? .local
            perform(machine.keysDidChange(retry, cause: cause, at: clock.now))
        }
    }

    /// Delivers one evaluation's new result to its members.
    ///
    /// - returns: false when the fetch must be retried (it was interrupted).
    private func deliver(
        _ outcome: Result<Fetched, SQLiveError>, for definition: LiveQueryDefinition,
        pending: CoalescingStateMachine<LiveQueryDefinition, ContinuousClock.Instant>.Pending
    ) -> Bool {
        guard var evaluation = evaluations[definition] else { return true }
        let now = Date()
        switch outcome {
        case .success(let fetched):
            if evaluation.region != fetched.region {
                interestIsStale = true
                widenInterest(with: fetched.region)
            }
            evaluation.region = fetched.region
            evaluation.tables = Self.tables(in: fetched.region)
            evaluation.result = fetched.result
            evaluation.lastElapsed = fetched.elapsed
            evaluation.error = nil
            evaluations[definition] = evaluation
            for name in evaluation.members.sorted() {
                guard var query = queries[name], !query.paused else { continue }
                query.refreshes += 1
                query.lastRefresh = now
                query.lastRefreshDuration = fetched.elapsed
                if query.delivered != fetched.result || query.deliveredError != nil {
                    query.version += 1
                    let change = LiveQueryChange(
                        name: name, version: query.version, result: fetched.result, previous: query.delivered,
                        cause: pending.cause, coalesced: pending.events, elapsed: fetched.elapsed)
                    query.delivered = fetched.result
                    query.deliveredError = nil
                    events.yield(.changed(change))
                }
                queries[name] = query
            }
            return true
        case .failure(let error):
            if error.sqliteFailure?.isInterrupted ?? false {
                return false
            }
            evaluation.error = error
            if !evaluation.region.isFullDatabase {
                interestIsStale = true
                widenInterest(with: .fullDatabase)
            }
            evaluation.region = .fullDatabase
            evaluations[definition] = evaluation
            for name in evaluation.members.sorted() {
                guard var query = queries[name], !query.paused else { continue }
                query.refreshes += 1
                query.lastRefresh = now
                if query.deliveredError != error {
                    query.deliveredError = error
                    events.yield(.failed(name: name, error: error))
                }
                queries[name] = query
            }
            return true
        }
    }

    // MARK: - Database work (runs on GRDB's reader threads)

    /// Checks that a definition can be a live query: one read-only statement.
    private static func validate(_ definition: LiveQueryDefinition, _ db: Database) throws {
        let statement: Statement
        do {
            statement = try db.makeStatement(sql: definition.sql)
        } catch let error as DatabaseError where error.message?.contains("Multiple statements") ?? false {
            throw SQLiveError.invalidLiveQuery("a live query must be a single statement")
        }
        guard statement.isReadonly else {
            throw SQLiveError.invalidLiveQuery(
                "a live query must be a read-only statement (SELECT, WITH, VALUES or a read-only PRAGMA)")
        }
        guard !statement.columnNames.isEmpty else {
            throw SQLiveError.invalidLiveQuery("a live query must return rows")
        }
    }

    /// Runs a live query's statement, reading at most `rowCap` rows.
    static func fetch(_ definition: LiveQueryDefinition, _ db: Database, rowCap: Int, tracer: StatementTracer)
        throws -> Fetched
    {
        let clock = ContinuousClock()
        let start = clock.now
        let statement = try db.makeStatement(sql: definition.sql)
        if !definition.parameters.isEmpty {
            try statement.setArguments(definition.parameters.statementArguments)
        }
        let region = statement.databaseRegion
        let columns = statement.columnNames
        var rows: [[SQLValue]] = []
        var truncated = false
        let cursor = try Row.fetchCursor(statement)
        while try cursor.next() != nil {
            if rows.count >= rowCap {
                truncated = true
                break
            }
            rows.append(SQLValue.row(of: statement.sqliteStatement, columnCount: columns.count))
        }
        let elapsed = clock.now - start
        tracer.record(sql: statement.sql, elapsed: elapsed, rows: rows.count, origin: .liveQuery)
        return Fetched(
            result: LiveQueryResult(columns: columns, rows: rows, truncated: truncated), region: region,
            elapsed: elapsed)
    }

    /// The table names of a region, from its description
    /// (`games(id,title),players(*)`); `*` for the full database.
    static func tables(in region: DatabaseRegion) -> [String] {
        if region.isFullDatabase { return ["*"] }
        var tables: [String] = []
        var depth = 0
        var current = ""
        for character in region.description {
            switch character {
            case "(", "[":
                if depth == 0 { tables.append(current) }
                depth += 1
            case ")", "]":
                depth -= 1
            case "," where depth == 0:
                current = ""
            default:
                if depth == 0 { current.append(character) }
            }
        }
        return tables.filter { !$0.isEmpty && !$0.hasPrefix("sqlite_") }
    }
}
