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
/// The scheduler starts no task. Its decisions go out as requests on
/// streams served by the `LiveQueryCenter`'s run loop: `wakes` (sleep on
/// the injected clock until an instant, then call `timerDidFire`),
/// `refreshes` (call `refresh` with a batch), `releases` (unregister a
/// query whose handle was let go) and `laneRuns` (run `runOwnLane` for a
/// slow query read on a connection of its own). `shutdown` finishes them.
actor RefreshScheduler<C: Clock> where C.Duration == Duration {
    typealias Batch = [LiveQueryDefinition: PendingChange]
    /// Results read at sqlive's own commit (`LocalPrefetch`).
    typealias Prefetched = [LiveQueryDefinition: LiveQueryFetcher.Fetched]

    let reader: LiveQueryReader
    let tracer: StatementTracer
    let events: Broadcaster<LiveQueryNotice>
    let interest: Interest
    let prefetch: LocalPrefetch
    let rowCap: Int
    let byteCap: Int?
    /// `LiveQueryOptions.refreshBudget` and `.ownConnectionAfter`.
    private(set) var budget: Duration?
    let ownLaneAfter: Duration?
    let clock: C
    /// Requests to wake at an instant (the newest one counts).
    nonisolated let wakes: AsyncStream<C.Instant>
    private let wakeRequests: AsyncStream<C.Instant>.Continuation
    /// Requests to refresh a batch.
    nonisolated let refreshes: AsyncStream<Batch>
    private let refreshRequests: AsyncStream<Batch>.Continuation
    /// A wake-up each time a handle was released (`release`): the run
    /// loop then calls `serveReleases`.
    nonisolated let releases: AsyncStream<Void>
    private let releaseRequests: AsyncStream<Void>.Continuation
    /// Requests to run a slow query's own lane (`runOwnLane`).
    nonisolated let laneRuns: AsyncStream<LiveQueryDefinition>
    let laneRequests: AsyncStream<LiveQueryDefinition>.Continuation
    /// The names of live queries whose handles were released, not yet
    /// unregistered. A scheduler shut down meanwhile (its file was replaced)
    /// keeps them for its successor, and forwards later ones to it
    /// (`handReleases(to:)`).
    private nonisolated let released = Locked<(names: [Release], successor: RefreshScheduler?)>(([], nil))

    // (Members without `private` are the refresh's too:
    // RefreshScheduler+Refresh.swift.)

    // Mutable State (actor-isolated)
    //
    // - `machine.pending` only holds definitions that have an evaluation
    //   with at least one member that is not paused.
    // - At most one refresh runs at a time: the machine asks for the next
    //   one only after `refreshDidFinish`.
    var machine: CoalescingStateMachine<LiveQueryDefinition, C.Instant>
    var registry = LiveQueryRegistry()
    var isShutDown = false
    /// Registrations fetching their first result.
    private var registering = 0
    /// What is wrong with the main database file, while it is damaged:
    /// every live query fails with it, and none is read.
    var damage: SQLiteFailure?
    /// The connections whose page cache must be dropped before their next
    /// read, because the file changed under it.
    var cachesToDrop: Set<LiveQueryReader.Home> = []
    /// Set while `handleRefreshingAtOnce` decides: a refresh the machine asks for
    /// is kept in `takenRefresh` for the caller, not sent on `refreshes`.
    private var takesRefresh = false
    private var takenRefresh: Batch?
    /// Results read at the commit of the last signal handled, when it was
    /// one of sqlive's own (`LocalPrefetch`); the next refresh uses them.
    var prefetched: Prefetched = [:]
    /// While `deliveringTogether` runs: what was delivered, to be yielded
    /// as one notice.
    var heldNotices: [LiveQueryNotice.Item]?
    /// The guards of the fetches under way, by evaluation: an evaluation
    /// nobody wants any more (`stopUnwantedWork`) or a shutdown stops them.
    var inFlight: [LiveQueryDefinition: [FetchGuard]] = [:]
    /// The evaluations read on connections of their own, because a read of
    /// theirs held the shared one too long (RefreshScheduler+Lanes.swift).
    /// A key of `registry.evaluations`, or running (it retires then).
    var ownLanes: [LiveQueryDefinition: OwnLane] = [:]

    init(
        reader: LiveQueryReader, tracer: StatementTracer, events: Broadcaster<LiveQueryNotice>, interest: Interest,
        prefetch: LocalPrefetch? = nil, options: LiveQueryOptions, clock: C
    ) {
        self.prefetch = prefetch ?? LocalPrefetch(options: options, tracer: tracer)
        self.reader = reader
        self.tracer = tracer
        self.events = events
        self.interest = interest
        self.rowCap = options.rowCap
        self.byteCap = options.resultByteCap
        self.budget = options.refreshBudget
        self.ownLaneAfter = options.ownConnectionAfter
        self.clock = clock
        self.machine = CoalescingStateMachine(window: options.coalescingWindow)
        (wakes, wakeRequests) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        (refreshes, refreshRequests) = AsyncStream.makeStream()
        (releases, releaseRequests) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        (laneRuns, laneRequests) = AsyncStream.makeStream()
    }

    // MARK: - Registry

    func register(
        name: String, definition: LiveQueryDefinition, delivery: LiveQueryDelivery = .rows,
        visibility: LiveQueryVisibility = .listed, owner: UUID? = nil
    ) async throws(SQLiveError) -> LiveQuerySnapshot {
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
            dropIfUnused(definition)
            throw isShutDown ? .closed : .liveQueryNameTaken(name)
        }
        registry.add(name, definition, delivery: delivery, visibility: visibility, owner: owner, delivered: result)
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
        if definition != query.definition, registry.activeMembers(of: query.definition) == [name] {
            // Replaced: what it was reading stops now, not after the new
            // first read (if that fails, the old one reads again).
            for fetchGuard in inFlight[query.definition] ?? [] { fetchGuard.cancel() }
        }
        let (result, tables) = try await firstResult(
            for: definition, wantsKey: (delivery ?? query.delivery) == .changesOnly)
        let old = registry.queries[name]?.definition
        guard let version = registry.redefine(name, as: definition, delivery: delivery, delivered: result) else {
            dropIfUnused(definition)
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

    /// Asks the run loop to drop a live query: its handle was released,
    /// in a `deinit` that cannot wait for the actor.
    /// A handle let go: the live query it registered, by name and owner.
    struct Release: Sendable {
        var name: String
        var owner: UUID
    }

    nonisolated func release(name: String, owner: UUID) {
        let successor = released.withLock { released -> RefreshScheduler? in
            if let successor = released.successor { return successor }
            released.names.append(Release(name: name, owner: owner))
            return nil
        }
        if let successor {
            successor.release(name: name, owner: owner)
        } else {
            releaseRequests.yield()
        }
    }

    /// Unregisters the live queries whose handles were released (none
    /// once shut down: they wait for the scheduler that takes over).
    func serveReleases() {
        guard !isShutDown else { return }
        let names = released.withLock { released in
            defer { released.names = [] }
            return released.names
        }
        // Only the registration the handle made: the name may have been
        // dropped and registered again meanwhile.
        for release in names where registry.queries[release.name]?.owner == release.owner {
            do {
                try unregister(name: release.name)
            } catch {
                Log.scheduler.warning("releasing the live query \(release.name): \(error)")
            }
        }
    }

    /// Hands the releases this scheduler did not serve (it was shut down)
    /// to the scheduler that adopted its queries, and forwards it every
    /// later one (a handle may still reach this scheduler for a moment).
    nonisolated func handReleases(to successor: RefreshScheduler) {
        let names = released.withLock { released in
            released.successor = successor
            defer { released.names = [] }
            return released.names
        }
        for release in names { successor.release(name: release.name, owner: release.owner) }
    }

    /// Drops the listed live queries; the unlisted ones belong to their
    /// handles' owners.
    func unregisterListed() {
        for name in registry.queries.keys where registry.isListed(name) {
            do {
                try unregister(name: name)
            } catch {
                Log.scheduler.warning("dropping the live query \(name): \(error)")
            }
        }
    }

    /// Throws unless a live query of this name is listed: what a caller
    /// that knows only a name may reach.
    func requireListed(_ name: String) throws(SQLiveError) {
        guard registry.isListed(name) else { throw .unknownLiveQuery(name) }
    }

    func unregisterAll() {
        for definition in registry.evaluations.keys { machine.forget(definition) }
        for fetchGuard in inFlight.values.joined() { fetchGuard.cancel() }
        registry.removeAll()
        for definition in ownLanes.keys { retireLaneIfUnused(definition) }
        interest.removeAll()
        prefetch.removeAll()
        publishQueryCount()
    }

    /// Tells the interest what an evaluation reads now, or that it is gone.
    func syncInterest(_ definition: LiveQueryDefinition) {
        if let evaluation = registry.evaluations[definition] {
            interest.set(definition, region: evaluation.region, tables: evaluation.tables)
            syncPrefetch(definition)
        } else {
            interest.remove(definition)
            prefetch.set(definition, nil)
            retireLaneIfUnused(definition)
        }
    }

    /// What sqlive's own commits may do for an evaluation, after each of its reads.
    func syncPrefetch(_ definition: LiveQueryDefinition) {
        guard let evaluation = registry.evaluations[definition] else {
            prefetch.set(definition, nil)
            return
        }
        guard evaluation.error == nil, let result = evaluation.result else {
            prefetch.set(definition, evaluation.home == .session ? .session : .committedOnly)
            return
        }
        prefetch.set(
            definition,
            prefetch.entry(
                for: definition, home: evaluation.home, elapsed: evaluation.lastElapsed, rows: result.rows.count,
                region: evaluation.region, wantsKey: registry.wantsKey(definition)))
    }

    /// Tells the interest how many live queries exist or are being registered.
    private func publishQueryCount() {
        interest.queryCount = registry.queries.count + registering
    }

    func pause(name: String) throws(SQLiveError) {
        guard let inactive = registry.pause(name) else { throw .unknownLiveQuery(name) }
        if inactive, let definition = registry.queries[name]?.definition {
            forgetIfInactive(definition)
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
        // What was let go does not move.
        serveReleases()
        let moving = registry.moving
        shutdown()
        return moving
    }

    /// Changes the time budget of the refreshes that start from now on
    /// (`nil`: none).
    func setBudget(_ budget: Duration?) {
        self.budget = budget
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
        releaseRequests.finish()
        laneRequests.finish()
    }

    /// When no active member is left (unregistered, paused, replaced):
    /// forgets its pending change, and stops its fetch under way at its
    /// next question to the guard. Members paused meanwhile count the
    /// change as missed (`settle`).
    private func forgetIfInactive(_ definition: LiveQueryDefinition) {
        if registry.activeMembers(of: definition).isEmpty {
            machine.forget(definition)
            ownLanes[definition]?.pending = nil
            for fetchGuard in inFlight[definition] ?? [] { fetchGuard.cancel() }
        }
    }

    // MARK: - Mark

    func handle(_ signal: ChangeSignal) {
        guard !isShutDown else { return }
        let cause: ChangeCause
        switch signal {
        case .fileChanged(let change):
            events.yield(LiveQueryNotice(.databaseFileChanged(change)))
            return
        case .damage(let failure, let change):
            events.yield(LiveQueryNotice(.databaseFileChanged(change)))
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

    func perform(_ action: CoalescingStateMachine<LiveQueryDefinition, C.Instant>.Action) {
        switch action {
        case .none: break
        case .wake(let deadline): wakeRequests.yield(deadline)
        case .refresh(let batch):
            if takesRefresh { takenRefresh = batch } else { refreshRequests.yield(batch) }
        }
    }
}
