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
    let releaseRequests: AsyncStream<Void>.Continuation
    /// Requests to run a slow query's own lane (`runOwnLane`).
    nonisolated let laneRuns: AsyncStream<LiveQueryDefinition>
    let laneRequests: AsyncStream<LiveQueryDefinition>.Continuation
    /// The registrations whose handles were released, not yet
    /// unregistered. A scheduler shut down meanwhile (its file was replaced)
    /// keeps them for its successor, and forwards later ones to it
    /// (`handReleases(to:)`).
    nonisolated let released = Locked<(ids: Set<LiveQueryID>, successor: RefreshScheduler?)>(([], nil))

    // (Members without `private` are the refresh's and the members' too:
    // RefreshScheduler+Refresh.swift, RefreshScheduler+Members.swift.)

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
    var registering = 0
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
    /// The evaluations of the refreshes asked for and not ended (each
    /// batch counted from the `.refresh` action that made it, which took
    /// them off `pending`, to the end of its refresh): a change marked
    /// them, and their result is not read yet.
    var refreshing: [LiveQueryDefinition: Int] = [:]
    /// The evaluations read on connections of their own, because a read of
    /// theirs held the shared one too long (RefreshScheduler+Lanes.swift).
    /// A key of `registry.evaluations`, or running (it retires then).
    var ownLanes: [LiveQueryDefinition: OwnLane] = [:]
    /// The evaluations kept from the change feed's rows, and where their
    /// rows and bases come from (RefreshScheduler+Maintained.swift); `nil`
    /// for a database with no watched file.
    var maintenance: [LiveQueryDefinition: Maintenance] = [:]
    /// The next refresh runs kept queries again too (the file was written
    /// outside a commit); their states go on.
    var rerunsKept = false
    let inbox: MaintenanceInbox?
    let baseReader: MaintainedBaseReader?
    /// `LiveQueryOptions.keptAuditEvery`.
    let keptAuditEvery: Int
    /// Requests to read a kept query's base (`readBase`).
    nonisolated let baseReads: AsyncStream<LiveQueryDefinition>
    let baseReadRequests: AsyncStream<LiveQueryDefinition>.Continuation

    init(
        reader: LiveQueryReader, tracer: StatementTracer, events: Broadcaster<LiveQueryNotice>, interest: Interest,
        prefetch: LocalPrefetch? = nil, options: LiveQueryOptions, clock: C,
        inbox: MaintenanceInbox? = nil, baseReader: MaintainedBaseReader? = nil
    ) {
        self.inbox = options.maintainsFromRows ? inbox : nil
        self.baseReader = options.maintainsFromRows ? baseReader : nil
        self.keptAuditEvery = options.keptAuditEvery
        (baseReads, baseReadRequests) = AsyncStream.makeStream()
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

    /// Tells the interest what an evaluation reads now, or that it is gone.
    func syncInterest(_ definition: LiveQueryDefinition) {
        if let evaluation = registry.evaluations[definition] {
            interest.set(definition, region: evaluation.region, tables: evaluation.tables)
            syncMaintenance(definition)
            syncPrefetch(definition)
        } else {
            interest.remove(definition)
            prefetch.set(definition, nil)
            retireLaneIfUnused(definition)
            syncMaintenance(definition)
        }
    }

    /// What sqlive's own commits may do for an evaluation, after each of its reads.
    func syncPrefetch(_ definition: LiveQueryDefinition) {
        // A query kept from rows is never read at the commit.
        guard let evaluation = registry.evaluations[definition],
            maintenance[definition].map({ $0.unsupported != nil }) ?? true
        else {
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

    /// Changes the time budget of the refreshes that start from now on
    /// (`nil`: none).
    func setBudget(_ budget: Duration?) {
        self.budget = budget
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
        baseReadRequests.finish()
        baseReader?.stop()
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
        let affected = registry.definitions(affectedBy: signal)
        // A query kept from rows is refreshed as any other (the refresh
        // applies its rows instead of running it); what it cannot follow
        // makes it read its base again.
        switch signal {
        case .damage, .schemaChanged:
            // A base being read may hold the state before this change (one a
            // resync asks for below is read after it).
            for definition in affected where maintenance[definition]?.reading == true {
                maintenance[definition]!.readAgain = true
            }
            for definition in affected where maintenance[definition]?.state != nil {
                resync(definition, "the schema changed or the file was damaged")
            }
        case .fileWritten:
            // Written outside a commit (a checkpoint, or damage SQLite's
            // header does not show): run again, as every query is.
            rerunsKept = true
        default: break
        }
        let active = registry.markPaused(affected, cause: cause)
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
            for definition in batch.keys { refreshing[definition, default: 0] += 1 }
            if takesRefresh { takenRefresh = batch } else { refreshRequests.yield(batch) }
        }
    }
}
