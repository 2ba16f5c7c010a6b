import Foundation
import GRDB
import GRDBSQLite
import SQLiveLocks

/// The one actor that decides what to refresh, and delivers the results.
///
/// Every change signal — sqlive's own commits and rollbacks, other
/// writers' commits, schema changes — comes here. The scheduler asks its
/// `CoalescingStateMachine` what to do, and runs the cycle
/// **Mark → Fetch → Reduce → Notify**: it marks the evaluations a signal
/// concerns (`LiveQueryRegistry`), fetches the pending ones
/// (`LiveQueryFetcher`, through the `LiveQueryReader`), reduces each
/// outcome to the events that changed, and yields them to subscribers.
///
/// The scheduler starts no task. Its decisions go out as requests on two
/// streams, served by the `LiveQueryCenter`'s run loop: `wakes` (sleep on
/// the injected clock until an instant, then call `timerDidFire`) and
/// `refreshes` (call `refresh` with a batch). `shutdown` finishes both.
actor RefreshScheduler<C: Clock> where C.Duration == Duration {
    typealias Batch = [LiveQueryDefinition: PendingChange]
    /// Results read at sqlive's own commit (`LocalPrefetch`).
    typealias Prefetched = [LiveQueryDefinition: LiveQueryFetcher.Fetched]

    private let reader: LiveQueryReader
    private let tracer: StatementTracer
    private let events: Broadcaster<LiveQueryEvent>
    private let interest: Interest
    private let prefetch: LocalPrefetch
    private let rowCap: Int
    private let byteCap: Int?
    let clock: C
    /// Requests to wake at an instant (the newest one counts).
    nonisolated let wakes: AsyncStream<C.Instant>
    private let wakeRequests: AsyncStream<C.Instant>.Continuation
    /// Requests to refresh a batch.
    nonisolated let refreshes: AsyncStream<Batch>
    private let refreshRequests: AsyncStream<Batch>.Continuation

    // Mutable State (actor-isolated)
    //
    // - `machine.pending` only holds definitions that have an evaluation
    //   with at least one member that is not paused.
    // - At most one refresh runs at a time: the machine asks for the next
    //   one only after `refreshDidFinish`.
    private var machine: CoalescingStateMachine<LiveQueryDefinition, C.Instant>
    private var registry = LiveQueryRegistry()
    private var isShutDown = false
    /// Registrations fetching their first result.
    private var registering = 0
    /// What is wrong with the main database file, while it is damaged:
    /// every live query fails with it, and none is read.
    private var damage: SQLiteFailure?
    /// The connections whose page cache must be dropped before their next
    /// read, because the file changed under it.
    private var cachesToDrop: Set<LiveQueryReader.Home> = []
    /// Set while `handleRefreshingAtOnce` decides: a refresh the machine asks for
    /// is kept in `takenRefresh` for the caller, not sent on `refreshes`.
    private var takesRefresh = false
    private var takenRefresh: Batch?
    /// Results read at the commit of the last signal handled, when it was
    /// one of sqlive's own (`LocalPrefetch`); the next refresh uses them.
    private var prefetched: Prefetched = [:]

    init(
        reader: LiveQueryReader, tracer: StatementTracer, events: Broadcaster<LiveQueryEvent>, interest: Interest,
        prefetch: LocalPrefetch? = nil, options: LiveQueryOptions, clock: C
    ) {
        self.prefetch = prefetch ?? LocalPrefetch(options: options, tracer: tracer)
        self.reader = reader
        self.tracer = tracer
        self.events = events
        self.interest = interest
        self.rowCap = options.rowCap
        self.byteCap = options.resultByteCap
        self.clock = clock
        self.machine = CoalescingStateMachine(window: options.coalescingWindow)
        (wakes, wakeRequests) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        (refreshes, refreshRequests) = AsyncStream.makeStream()
    }

    // MARK: - Registry

    func register(name: String, definition: LiveQueryDefinition, delivery: LiveQueryDelivery = .rows)
        async throws(SQLiveError) -> LiveQuerySnapshot
    {
        guard !isShutDown else { throw .closed }
        guard registry.queries[name] == nil else { throw .liveQueryNameTaken(name) }
        // Counted before the first read: a script that commits meanwhile
        // must be observed (or report that it was not).
        registering += 1
        publishQueryCount()
        defer {
            registering -= 1
            publishQueryCount()
        }
        let (result, tables) = try await firstResult(for: definition, wantsKey: delivery == .changesOnly)
        // Another registration of the same name may have won the race while
        // this one was fetching.
        guard registry.queries[name] == nil, !isShutDown else {
            registry.dropIfUnused(definition)
            throw isShutDown ? .closed : .liveQueryNameTaken(name)
        }
        registry.add(name, definition, delivery: delivery, delivered: result)
        syncInterest(definition)
        return LiveQuerySnapshot(name: name, version: 1, result: result, tables: tables)
    }

    func update(
        name: String, sql: String?, parameters: QueryParameters?, maxRows: Int?? = nil,
        delivery: LiveQueryDelivery? = nil
    ) async throws(SQLiveError) -> LiveQuerySnapshot {
        guard let query = registry.queries[name] else { throw .unknownLiveQuery(name) }
        let definition = LiveQueryDefinition(
            sql: sql ?? query.definition.sql, parameters: parameters ?? query.definition.parameters,
            maxRows: maxRows ?? query.definition.maxRows)
        let (result, tables) = try await firstResult(
            for: definition, wantsKey: (delivery ?? query.delivery) == .changesOnly)
        let old = registry.queries[name]?.definition
        guard let version = registry.redefine(name, as: definition, delivery: delivery, delivered: result) else {
            registry.dropIfUnused(definition)
            throw .unknownLiveQuery(name)
        }
        if let old {
            forgetIfInactive(old)
            syncInterest(old)
        }
        syncInterest(definition)
        return LiveQuerySnapshot(name: name, version: version, result: result, tables: tables)
    }

    func unregister(name: String) throws(SQLiveError) {
        guard let definition = registry.remove(name) else { throw .unknownLiveQuery(name) }
        forgetIfInactive(definition)
        syncInterest(definition)
        publishQueryCount()
    }

    func unregisterAll() {
        for definition in registry.evaluations.keys { machine.forget(definition) }
        registry.removeAll()
        interest.removeAll()
        prefetch.removeAll()
        publishQueryCount()
    }

    /// Tells the interest what an evaluation reads now, or that it is gone.
    private func syncInterest(_ definition: LiveQueryDefinition) {
        if let evaluation = registry.evaluations[definition] {
            interest.set(definition, region: evaluation.region, tables: evaluation.tables)
            syncPrefetch(definition)
        } else {
            interest.remove(definition)
            prefetch.set(definition, nil)
        }
    }

    /// Tells the interest how many live queries exist or are being registered.
    /// Whether an evaluation is read at sqlive's own commits, after each of its reads.
    private func syncPrefetch(_ definition: LiveQueryDefinition) {
        guard let evaluation = registry.evaluations[definition], evaluation.error == nil,
            let result = evaluation.result
        else {
            prefetch.set(definition, nil)
            return
        }
        prefetch.set(
            definition,
            prefetch.plan(
                home: evaluation.home, elapsed: evaluation.lastElapsed, rows: result.rows.count,
                region: evaluation.region, wantsKey: registry.wantsKey(definition)))
    }

    private func publishQueryCount() {
        interest.queryCount = registry.queries.count + registering
    }

    func pause(name: String) throws(SQLiveError) {
        guard let inactive = registry.pause(name) else { throw .unknownLiveQuery(name) }
        if inactive, let definition = registry.queries[name]?.definition {
            machine.forget(definition)
        }
    }

    func resume(name: String) throws(SQLiveError) {
        guard let resumed = registry.resume(name) else { throw .unknownLiveQuery(name) }
        if let missed = resumed.missed, let definition = registry.queries[name]?.definition {
            perform(machine.keysDidChange([definition], cause: missed.cause, events: missed.events, at: clock.now))
        }
    }

    func list() -> [LiveQueryInfo] {
        registry.list()
    }

    /// A live query's last delivery: its result, or the error that
    /// replaced it until a result comes.
    func current(name: String) throws(SQLiveError) -> (snapshot: LiveQuerySnapshot, error: SQLiveError?) {
        guard let query = registry.queries[name] else { throw .unknownLiveQuery(name) }
        let tables = registry.evaluations[query.definition]?.tables ?? []
        return (
            LiveQuerySnapshot(name: name, version: query.version, result: query.delivered, tables: tables),
            query.deliveredError
        )
    }

    /// Hands the live queries over to another scheduler: this one takes no
    /// more registrations or changes (they fail as closed, never lost) and
    /// delivers nothing more.
    func handOver() -> [LiveQueryRegistry.Moved] {
        let moving = registry.moving
        shutdown()
        return moving
    }

    /// Takes in live queries from another scheduler (the file was replaced)
    /// and refreshes them all: each delivers, at its next version, what
    /// differs from its last delivery.
    func adopt(_ queries: [LiveQueryRegistry.Moved]) {
        guard !isShutDown, !queries.isEmpty else { return }
        for query in queries where registry.queries[query.name] == nil {
            registry.adopt(query)
            syncInterest(query.definition)
        }
        publishQueryCount()
        handle(.fileWritten)
    }

    /// The change counts of the evaluations waiting for a refresh (for tests).
    var pendingEvents: [Int] {
        machine.pending.values.map(\.events)
    }

    /// Drops every live query and ends the request streams: the run loop's
    /// timer and refresh loops end with them.
    func shutdown() {
        isShutDown = true
        unregisterAll()
        wakeRequests.finish()
        refreshRequests.finish()
    }

    private func forgetIfInactive(_ definition: LiveQueryDefinition) {
        if registry.activeMembers(of: definition).isEmpty {
            machine.forget(definition)
        }
    }

    /// A definition's first result: the shared evaluation's when it is
    /// current, or a fetch on the connection the query needs.
    private func firstResult(for definition: LiveQueryDefinition, wantsKey: Bool) async throws(SQLiveError)
        -> (LiveQueryResult, [String])
    {
        if let damage { throw .sqlite(damage) }
        if machine.pending[definition] == nil, let current = registry.currentResult(of: definition),
            !wantsKey || registry.wantsKey(definition)
        {
            // Shared: the evaluation's result is current, since any change
            // after it would have marked it pending.
            return current
        }
        let rowCap = rowCap
        let byteCap = byteCap
        let tracer = tracer
        let hasCommitted = reader.committed != nil
        do {
            let home = try await reader.session.writeWithoutTransaction { db in
                try LiveQueryReader.home(of: definition, db, hasCommitted: hasCommitted)
            }
            let fetched = try await reader.read(home) { db in
                try LiveQueryFetcher.validate(definition, db)
                let recordsPages = try Self.prepareRead(db, home: home, dropCache: false)
                return try LiveQueryFetcher.fetch(
                    definition, db, rowCap: rowCap, tracer: tracer, knownRegion: nil, recordsPages: recordsPages,
                    wantsKey: wantsKey, byteCap: byteCap)
            }
            registry.record(fetched, home: home, for: definition)
            return (fetched.result, fetched.tables ?? [])
        } catch {
            throw SQLiveError.wrap(error)
        }
    }

    // MARK: - Mark

    func handle(_ signal: ChangeSignal) {
        guard !isShutDown else { return }
        let cause: ChangeCause
        switch signal {
        case .fileChanged(let change):
            events.yield(.databaseFileChanged(change))
            return
        case .damage(let failure, let change):
            events.yield(.databaseFileChanged(change))
            damage = failure
            if let failure {
                // Every live query fails at once; none is read until the file is repaired.
                let pending = PendingChange(events: 1, cause: .external)
                for definition in registry.evaluations.keys {
                    deliver(.failure(.sqlite(failure)), for: definition, pending: pending)
                }
                return
            }
            cachesToDrop = [.committed, .session]
            cause = .external
        case .fileWritten:
            cachesToDrop = [.committed, .session]
            cause = .external
        case .local, .localUnobserved, .rolledBack: cause = .local
        case .external, .presumedExternal: cause = .external
        case .schemaChanged(let schemaCause): cause = schemaCause
        }
        let presumed = if case .presumedExternal = signal { true } else { false }
        let active = registry.markPaused(registry.definitions(affectedBy: signal), cause: cause)
        perform(
            machine.keysDidChange(
                active, cause: cause, keepsPendingCause: presumed, tables: signal.tables, at: clock.now))
    }

    /// The run loop's way in for a signal: handles it and, when it is one
    /// of sqlive's own commits whose refresh may start at once (the leading
    /// edge of a window), runs that refresh itself, on the actor it is on —
    /// no hop between a commit and its update. Other refreshes go through
    /// `refreshes` as `handle`'s do. Either way the machine runs one
    /// refresh at a time.
    func handleRefreshingAtOnce(_ signal: ChangeSignal) async {
        // Taken with every signal, kept only until the next one
        // (LocalPrefetch's freshness rule).
        let taken = await prefetch.take()
        prefetched = if case .local = signal { taken } else { [:] }
        guard case .local = signal else {
            handle(signal)
            return
        }
        takesRefresh = true
        handle(signal)
        takesRefresh = false
        guard let batch = takenRefresh else { return }
        takenRefresh = nil
        await refresh(batch)
    }

    func timerDidFire() {
        guard !isShutDown else { return }
        perform(machine.timerDidFire(at: clock.now))
    }

    private func perform(_ action: CoalescingStateMachine<LiveQueryDefinition, C.Instant>.Action) {
        switch action {
        case .none: break
        case .wake(let deadline): wakeRequests.yield(deadline)
        case .refresh(let batch):
            if takesRefresh { takenRefresh = batch } else { refreshRequests.yield(batch) }
        }
    }

    // MARK: - Fetch, Reduce, Notify

    /// Fetches every pending evaluation, delivering each result as soon as it is read.
    ///
    /// Evaluations read on the committed connection are fetched from one
    /// snapshot; those read on the session's connection, after them. Each
    /// group runs fastest first (by each evaluation's last fetch time), and
    /// each result is delivered while the next ones are fetched, so a slow
    /// query delays only itself: changes that arrive meanwhile wait for the
    /// next refresh, one refresh at most.
    ///
    /// It always ends, whatever the reads throw — before running their
    /// closure or inside it: an interrupted or locked read is retried after
    /// the window; any other failure is delivered as the queries' error,
    /// and the next change tries again.
    func refresh(_ batch: Batch) async {
        var retry: [LiveQueryDefinition] = []
        var read = Set<LiveQueryDefinition>()
        let prefetched = self.prefetched
        self.prefetched = [:]
        if damage == nil, !cachesToDrop.contains(.committed) {
            for (definition, fetched) in prefetched
            where batch[definition] != nil && registry.evaluations[definition]?.home == .committed {
                deliver(.success(fetched), for: definition, pending: batch[definition]!)
                read.insert(definition)
                prefetch.noteUsed()
            }
        }
        for home in [LiveQueryReader.Home.committed, .session] {
            let definitions = batch.keys
                .filter { !read.contains($0) && registry.evaluations[$0]?.home == home }
                .sorted {
                    (registry.evaluations[$0]?.lastElapsed ?? .zero) < (registry.evaluations[$1]?.lastElapsed ?? .zero)
                }
            guard !definitions.isEmpty else { continue }
            retry += await fetch(definitions, on: home, batch: batch)
        }
        guard !isShutDown else { return }
        perform(machine.refreshDidFinish(at: clock.now))
        if !retry.isEmpty {
            let cause = retry.compactMap { batch[$0]?.cause }.last ?? .local
            perform(
                machine.keysDidChange(
                    retry.filter { !registry.activeMembers(of: $0).isEmpty }, cause: cause, at: clock.now))
        }
    }

    /// Fetches definitions on one connection; returns those to retry.
    private func fetch(
        _ definitions: [LiveQueryDefinition], on home: LiveQueryReader.Home, batch: Batch
    ) async -> [LiveQueryDefinition] {
        if let damage {
            for definition in definitions {
                deliver(.failure(.sqlite(damage)), for: definition, pending: batch[definition]!)
            }
            return []
        }
        let dropCache = cachesToDrop.remove(home) != nil
        // An evaluation may be skipped only when no member is behind it.
        let work = definitions.map {
            Work(
                definition: $0, evaluation: registry.evaluations[$0], current: registry.membersAreCurrent($0),
                wantsKey: registry.wantsKey($0))
        }
        if work.count == 1 {
            return await fetchOne(work[0], on: home, dropCache: dropCache, pending: batch[work[0].definition]!)
        }
        let (outcomes, continuation) = AsyncStream<(LiveQueryDefinition, Result<LiveQueryFetcher.Fetched, SQLiveError>)>
            .makeStream()
        let reader = reader
        let rowCap = rowCap
        let byteCap = byteCap
        let tracer = tracer
        // How many of `work` were handed over: a read a writer overtook is
        // read again (LiveQueryReader), from the first not handed over.
        let handedOver = Locked(0)
        // The stream ends however the read ends: the loop below cannot hang.
        async let readFailure: SQLiveError? = {
            defer { continuation.finish() }
            do {
                try await reader.read(home) { db in
                    let recordsPages = try Self.prepareRead(db, home: home, dropCache: dropCache)
                    for item in work[handedOver.withLock { $0 }...] {
                        do {
                            let fetched = try Self.fetch(
                                item, db, recordsPages: recordsPages, dropCache: dropCache, rowCap: rowCap,
                                byteCap: byteCap, tracer: tracer)
                            continuation.yield((item.definition, .success(fetched)))
                        } catch  where ObserverVFS.mayBeOvertaken(error) {
                            throw error
                        } catch {
                            continuation.yield((item.definition, .failure(SQLiveError.wrap(error))))
                        }
                        handedOver.withLock { $0 += 1 }
                    }
                }
                return nil
            } catch {
                return SQLiveError.wrap(error)
            }
        }()
        var retry: [LiveQueryDefinition] = []
        var read = Set<LiveQueryDefinition>()
        for await (definition, outcome) in outcomes {
            read.insert(definition)
            if let damage {
                // Reported while this read was under way: what it read (from
                // a cache, or a WAL that holds the damaged pages) is not the
                // file's truth. The failure was delivered already.
                deliver(.failure(.sqlite(damage)), for: definition, pending: batch[definition]!)
            } else if case .failure(let error) = outcome, error.isTransient {
                retry.append(definition)
            } else {
                deliver(outcome, for: definition, pending: batch[definition]!)
            }
        }
        guard let failure = await readFailure else { return retry }
        let unread = definitions.filter { !read.contains($0) }
        if failure.isTransient || isShutDown {
            // A writer holding a lock beyond the busy timeout, an
            // interrupt: try again after the window.
            Log.scheduler.debug("refresh failed, will retry: \(failure)")
            return retry + unread
        }
        Log.scheduler.warning("refresh failed: \(failure)")
        for definition in unread {
            deliver(.failure(failure), for: definition, pending: batch[definition]!)
        }
        return retry
    }

    /// One evaluation to fetch, with what the registry knew of it.
    struct Work: Sendable {
        var definition: LiveQueryDefinition
        var evaluation: LiveQueryRegistry.Evaluation?
        /// Every active member was delivered its current result.
        var current: Bool
        var wantsKey: Bool
    }

    /// Fetches one evaluation, without the stream of the batch path: a
    /// single read, delivered when it returns (one hop fewer for a commit
    /// that concerns one query, as most of sqlive's own do). Returns it to
    /// retry, or nothing.
    private func fetchOne(
        _ work: Work, on home: LiveQueryReader.Home, dropCache: Bool, pending: PendingChange
    ) async -> [LiveQueryDefinition] {
        let (rowCap, byteCap, tracer) = (rowCap, byteCap, tracer)
        let read: @Sendable (Database) throws -> LiveQueryFetcher.Fetched = { db in
            let recordsPages = try Self.prepareRead(db, home: home, dropCache: dropCache)
            return try Self.fetch(
                work, db, recordsPages: recordsPages, dropCache: dropCache, rowCap: rowCap, byteCap: byteCap,
                tracer: tracer)
        }
        let outcome: Result<LiveQueryFetcher.Fetched, SQLiveError>
        do {
            outcome = .success(try await reader.read(home, read))
        } catch {
            let failure = SQLiveError.wrap(error)
            if failure.isTransient || isShutDown {
                Log.scheduler.debug("refresh failed, will retry: \(failure)")
                return [work.definition]
            }
            outcome = .failure(failure)
        }
        if let damage {
            deliver(.failure(.sqlite(damage)), for: work.definition, pending: pending)
        } else {
            deliver(outcome, for: work.definition, pending: pending)
        }
        return []
    }

    /// Before a refresh's reads, on the connection: drops its cache when
    /// the file changed under it; whether it records the pages it reads
    /// (rollback-journal modes: a query none of whose pages another commit
    /// changed is not read again).
    private static func prepareRead(_ db: Database, home: LiveQueryReader.Home, dropCache: Bool) throws -> Bool {
        if dropCache { sqlite3_db_release_memory(db.sqliteConnection) }
        guard home == .committed, !ObserverVFS.lastReadWasWAL(db) else { return false }
        let recordsPages = try readsMainOnly(db)
        if recordsPages { try ObserverVFS.beginGeneration(db) }
        return recordsPages
    }

    /// Fetches one evaluation on the connection, or proves it unchanged by its pages.
    private static func fetch(
        _ work: Work, _ db: Database, recordsPages: Bool, dropCache: Bool, rowCap: Int, byteCap: Int?,
        tracer: StatementTracer
    ) throws -> LiveQueryFetcher.Fetched {
        if recordsPages, !dropCache, work.current, let evaluation = work.evaluation, let result = evaluation.result,
            evaluation.error == nil, let dependency = evaluation.dependency,
            let unchanged = ObserverVFS.unchanged(db, dependency)
        {
            return LiveQueryFetcher.Fetched(
                result: result, region: evaluation.region, tables: nil, elapsed: .zero,
                counters: evaluation.lastCounters ?? StatementCounters(), dependency: unchanged, skipped: true)
        }
        return try LiveQueryFetcher.fetch(
            work.definition, db, rowCap: rowCap, tracer: tracer, knownRegion: work.evaluation?.region,
            recordsPages: recordsPages, wantsKey: work.wantsKey, byteCap: byteCap)
    }

    /// Whether the connection reads only its main database (no attached
    /// file, whose pages a dependency on the main file's cannot cover).
    static func readsMainOnly(_ db: Database) throws -> Bool {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM pragma_database_list WHERE name NOT IN ('main', 'temp')") == 0
    }

    /// Reduces one outcome and notifies its members of what changed.
    private func deliver(
        _ outcome: Result<LiveQueryFetcher.Fetched, SQLiveError>, for definition: LiveQueryDefinition,
        pending: PendingChange
    ) {
        let reduced = registry.reduce(outcome, for: definition, pending: pending, now: Date())
        if reduced.newRegion != nil {
            syncInterest(definition)
        } else {
            syncPrefetch(definition)
        }
        for event in reduced.events { events.yield(event) }
    }
}

extension SQLiveError {
    /// Whether trying again later may succeed: an interrupt, a lock, a cancellation.
    var isTransient: Bool {
        guard let failure = sqliteFailure else { return false }
        return failure.isInterrupted || failure.code == 5 || failure.code == 6
    }
}
