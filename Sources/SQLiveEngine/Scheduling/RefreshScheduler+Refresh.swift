import Foundation
import GRDB
import GRDBSQLite
import SQLiveLocks

// The scheduler's second half: Fetch, Reduce and Notify.
extension RefreshScheduler {
    // MARK: - Fetch, Reduce, Notify

    /// Fetches every pending evaluation; what one snapshot read is
    /// delivered together.
    ///
    /// Evaluations read on the committed connection are fetched from one
    /// snapshot; those read on the session's connection, after them. Each
    /// group runs fastest first (by each evaluation's last fetch time), and
    /// its results are delivered together when its read ends
    /// (`deliveringTogether`): the changes one commit caused reach every
    /// front end as one state, never one query at commit N+1 beside another
    /// at N. A slow query holds the others back 100 ms at most: past that
    /// its read on the shared connection is stopped and goes on on its own
    /// lane, delivered when it ends. Changes that arrive meanwhile wait for
    /// the next refresh, one refresh at most.
    ///
    /// It always ends, whatever the reads throw — before running their
    /// closure or inside it: an interrupted or locked read is retried after
    /// the window; any other failure is delivered as the queries' error,
    /// and the next change tries again.
    func refresh(_ incoming: Batch) async {
        defer {
            for definition in incoming.keys {
                if let count = refreshing[definition], count > 1 {
                    refreshing[definition] = count - 1
                } else {
                    refreshing[definition] = nil
                }
            }
        }
        // Those kept from rows apply the commits' rows instead.
        let batch = await applyMaintained(incoming)
        var retry: [LiveQueryDefinition] = []
        var read = Set<LiveQueryDefinition>()
        let prefetched = self.prefetched
        self.prefetched = [:]
        // Slow ones are read on their own lanes, beside this refresh.
        for (definition, pending) in batch where ownLanes[definition] != nil && damage == nil {
            handToOwnLane(definition, pending)
            read.insert(definition)
        }
        // Used only when they cover every query the batch reads on the
        // committed connection (a refresh reads them in one snapshot), and
        // each was begun after that query's last read had ended: a read
        // that started after the commit's may have seen a later commit,
        // and a delivery never goes back.
        let committed = batch.keys.filter { !read.contains($0) && registry.evaluations[$0]?.home == .committed }
        if damage == nil, !cachesToDrop.contains(.committed), !committed.isEmpty,
            committed.allSatisfy({ definition in
                guard let begunAt = prefetched[definition]?.begunAt else { return false }
                return registry.evaluations[definition]?.lastReadAt.map { begunAt > $0 } ?? true
            })
        {
            deliveringTogether {
                for definition in committed {
                    let fetched = prefetched[definition]!
                    deliver(.success(fetched), for: definition, pending: batch[definition]!)
                    read.insert(definition)
                }
            }
            prefetch.noteUsed()
        }
        for home in [LiveQueryReader.Home.committed, .session] {
            let definitions = batch.keys
                .filter { !read.contains($0) && registry.evaluations[$0]?.home == home }
                .sorted {
                    (registry.evaluations[$0]?.lastElapsed ?? .zero) < (registry.evaluations[$1]?.lastElapsed ?? .zero)
                }
            guard !definitions.isEmpty else { continue }
            let keptBefore = Set(definitions.filter(isMaintained))
            retry += await fetch(definitions, on: home, batch: batch)
            // One read whole while its kept state was installed kept its pages
            // on the shared connection after `readBase` let go of them.
            if home == .committed, definitions.contains(where: { isMaintained($0) && !keptBefore.contains($0) }) {
                _ = await reader.forgetCommittedPages(atLeast: Self.pagesWorthForgetting)
            }
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
            deliveringTogether {
                for definition in definitions {
                    deliver(.failure(.sqlite(damage)), for: definition, pending: batch[definition]!)
                }
            }
            return []
        }
        let dropCache = cachesToDrop.remove(home) != nil
        let movable = home == .committed && reader.canReadAlone
        // An evaluation may be skipped only when no member is behind it.
        let work = definitions.map {
            Work(
                definition: $0, evaluation: registry.evaluations[$0], current: registry.membersAreCurrent($0),
                wantsKey: registry.wantsKey($0), kept: isMaintained($0),
                fetchGuard: track(FetchGuard(limits(movable: movable)), for: $0))
        }
        defer {
            for item in work { untrack([item.fetchGuard], of: item.definition) }
        }
        if work.count == 1 {
            return await fetchOne(work[0], on: home, dropCache: dropCache, pending: batch[work[0].definition]!)
        }
        let (outcomes, continuation) = AsyncStream<(LiveQueryDefinition, FetchOutcome)>.makeStream()
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
                            let fetched = try item.fetchGuard.watching(db) {
                                try Self.fetch(
                                    item, db, recordsPages: recordsPages, dropCache: dropCache, rowCap: rowCap,
                                    byteCap: byteCap, tracer: tracer)
                            }
                            continuation.yield((item.definition, .fetched(.success(fetched))))
                        } catch let stopped as FetchGuard.Stopped {
                            continuation.yield((item.definition, .stopped(stopped.stop)))
                        } catch  where ObserverVFS.mayBeOvertaken(error) {
                            throw error
                        } catch {
                            continuation.yield((item.definition, .fetched(.failure(SQLiveError.wrap(error)))))
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
        // One snapshot, one delivery: the results wait for the read to end
        // (a query that holds the shared connection past 100 ms is stopped
        // and goes on on its own lane, so they wait that long at most). A
        // read that cannot move to a lane of its own (the session's
        // connection: temp tables, an in-memory database) delivers each
        // result as it is read, so that a slow one holds back no other.
        var outcomesRead: [(LiveQueryDefinition, FetchOutcome)] = []
        for await (definition, outcome) in outcomes {
            read.insert(definition)
            if movable {
                outcomesRead.append((definition, outcome))
            } else if settle(outcome, for: definition, pending: batch[definition]!) {
                retry.append(definition)
            }
        }
        let failure = await readFailure
        let unread = definitions.filter { !read.contains($0) }
        let failed = failure.map { !$0.isTransient && !isShutDown } ?? false
        deliveringTogether {
            for (definition, outcome) in outcomesRead
            where settle(outcome, for: definition, pending: batch[definition]!) {
                retry.append(definition)
            }
            if let failure, failed {
                for definition in unread {
                    deliver(.failure(failure), for: definition, pending: batch[definition]!)
                }
            }
        }
        guard let failure else { return retry }
        if failure.isTransient || isShutDown {
            // A writer holding a lock beyond the busy timeout, an
            // interrupt: try again after the window.
            Log.scheduler.debug("refresh failed, will retry: \(failure)")
            return retry + unread
        }
        Log.scheduler.warning("refresh failed: \(failure)")
        return retry
    }

    /// One evaluation to fetch, with what the registry knew of it.
    struct Work: Sendable {
        var definition: LiveQueryDefinition
        var evaluation: LiveQueryRegistry.Evaluation?
        /// Every active member was delivered its current result.
        var current: Bool
        var wantsKey: Bool
        /// Kept from rows (read whole only for a batch run again): its
        /// pages are not kept on the shared connection (`ObserverVFS.passingBy`).
        var kept = false
        /// What stops it (`RefreshScheduler+Lanes.swift`).
        var fetchGuard = FetchGuard(FetchGuard.Limits())
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
            return try work.fetchGuard.watching(db) {
                try Self.fetch(
                    work, db, recordsPages: recordsPages, dropCache: dropCache, rowCap: rowCap, byteCap: byteCap,
                    tracer: tracer)
            }
        }
        let outcome: FetchOutcome
        do {
            outcome = .fetched(.success(try await reader.read(home, read)))
        } catch let stopped as FetchGuard.Stopped {
            outcome = .stopped(stopped.stop)
        } catch {
            let failure = SQLiveError.wrap(error)
            if failure.isTransient || isShutDown {
                Log.scheduler.debug("refresh failed, will retry: \(failure)")
            }
            outcome = .fetched(.failure(failure))
        }
        return settle(outcome, for: work.definition, pending: pending) ? [work.definition] : []
    }

    /// Before a refresh's reads, on the connection: drops its cache when
    /// the file changed under it; whether it records the pages it reads
    /// (rollback-journal modes: a query none of whose pages another commit
    /// changed is not read again).
    static func prepareRead(_ db: Database, home: LiveQueryReader.Home, dropCache: Bool) throws -> Bool {
        if dropCache { sqlite3_db_release_memory(db.sqliteConnection) }
        guard home == .committed, !ObserverVFS.lastReadWasWAL(db) else { return false }
        let recordsPages = try readsMainOnly(db)
        if recordsPages { try ObserverVFS.beginGeneration(db) }
        return recordsPages
    }

    /// A definition's first result: the shared evaluation's when it is
    /// current, or a fetch on the connection the query needs.
    ///
    /// Read under a guard (`FetchGuard`): within the time budget, and on
    /// the shared connection only until it holds it too long; then on a
    /// connection of its own.
    func firstResult(for definition: LiveQueryDefinition, wantsKey: Bool) async throws(SQLiveError)
        -> (LiveQueryResult, [String])
    {
        if let damage { throw .sqlite(damage) }
        if machine.pending[definition] == nil, refreshing[definition] == nil, inFlight[definition] == nil,
            ownLanes[definition].map({ !$0.running && $0.pending == nil }) ?? true,
            let current = registry.currentResult(of: definition), !wantsKey || registry.wantsKey(definition)
        {
            // Shared: the evaluation's result is current, since any change
            // after it would have marked it pending — and no refresh of it is
            // under way (a change marked it, and its refresh had taken it
            // off `pending` but not read it yet: that result is older than a
            // commit that ended before this registration began).
            return current
        }
        let (rowCap, byteCap, tracer) = (rowCap, byteCap, tracer)
        let hasCommitted = reader.committed != nil
        /// The first read: validated, then fetched under its guard.
        func read(_ fetchGuard: FetchGuard, home: LiveQueryReader.Home, alone: Bool)
            -> @Sendable (Database) throws -> LiveQueryFetcher.Fetched
        {
            { db in
                try LiveQueryFetcher.validate(definition, db)
                let recordsPages = alone ? false : try Self.prepareRead(db, home: home, dropCache: false)
                return try fetchGuard.watching(db) {
                    try LiveQueryFetcher.fetch(
                        definition, db, rowCap: rowCap, tracer: tracer, knownRegion: nil, recordsPages: recordsPages,
                        wantsKey: wantsKey, byteCap: byteCap)
                }
            }
        }
        var guards: [FetchGuard] = []
        defer { untrack(guards, of: definition) }
        // Another read of this definition (a refresh for a commit) may end
        // while this one is under way, and have read a later state: then
        // this read's result could be older than what the other members
        // were given, and nothing would read it again.
        let lastReadBefore = registry.evaluations[definition]?.lastReadAt
        do {
            let home = try await reader.session.writeWithoutTransaction { db in
                try LiveQueryReader.home(of: definition, db, hasCommitted: hasCommitted)
            }
            let movable = home == .committed && reader.canReadAlone
            var fetched: LiveQueryFetcher.Fetched?
            if ownLanes[definition] == nil {
                // On the shared connection, until it holds it too long.
                let sharedGuard = track(FetchGuard(limits(movable: movable)), for: definition)
                guards.append(sharedGuard)
                do {
                    fetched = try await reader.read(home, read(sharedGuard, home: home, alone: false))
                } catch let stopped as FetchGuard.Stopped where stopped.stop == .ownLane {
                    ownLanes[definition] = ownLanes[definition] ?? OwnLane()
                }
            }
            if fetched == nil {
                let aloneGuard = track(FetchGuard(limits(movable: false)), for: definition)
                guards.append(aloneGuard)
                fetched = try await reader.readAlone(definition, read(aloneGuard, home: home, alone: true))
            }
            let raced = registry.evaluations[definition]?.lastReadAt != lastReadBefore
            registry.record(fetched!, home: home, for: definition, readAt: prefetch.reads.next())
            if raced {
                // Read it again (after this registration joins): every
                // member, this one included, converges on the latest state.
                perform(machine.keysDidChange([definition], cause: .local, at: clock.now))
            }
            return (fetched!.result, fetched!.tables ?? [])
        } catch {
            retireLaneIfUnused(definition)
            if let stopped = error as? FetchGuard.Stopped {
                if stopped.stop == .tooSlow, let budget { throw .tooSlowToKeepLive(budget: budget) }
                throw isShutDown ? .closed : .sqlite(.interrupted)
            }
            throw SQLiveError.wrap(error)
        }
    }

    /// Fetches one evaluation on the connection, or proves it unchanged by its pages.
    static func fetch(
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
        let fetch = {
            try LiveQueryFetcher.fetch(
                work.definition, db, rowCap: rowCap, tracer: tracer, knownRegion: work.evaluation?.region,
                recordsPages: recordsPages, wantsKey: work.wantsKey, byteCap: byteCap)
        }
        return work.kept ? try ObserverVFS.passingBy(db, fetch) : try fetch()
    }

    /// Whether the connection reads only its main database (no attached
    /// file, whose pages a dependency on the main file's cannot cover).
    static func readsMainOnly(_ db: Database) throws -> Bool {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM pragma_database_list WHERE name NOT IN ('main', 'temp')") == 0
    }

    /// Reduces one outcome and notifies its members of what changed.
    func deliver(
        _ outcome: Result<LiveQueryFetcher.Fetched, SQLiveError>, for definition: LiveQueryDefinition,
        pending: PendingChange
    ) {
        let reduced = registry.reduce(
            outcome, for: definition, pending: pending, now: Date(), readAt: prefetch.reads.next())
        if case .success(let fetched) = outcome, !fetched.skipped {
            noteDelivered(definition, at: fetched.position)
        }
        if reduced.newRegion != nil {
            syncInterest(definition)
        } else {
            syncPrefetch(definition)
        }
        let items = reduced.events.map { LiveQueryNotice.Item(event: $0.event, id: $0.id) }
        if heldNotices != nil {
            heldNotices!.append(contentsOf: items)
        } else if !items.isEmpty {
            events.yield(LiveQueryNotice(batch: items))
        }
    }

    /// Runs `body`, which delivers what one snapshot read, and yields what
    /// it delivered as one notice: the changes of one commit reach every
    /// front end together. `body` must not suspend: nothing else is
    /// delivered meanwhile.
    func deliveringTogether(_ body: () -> Void) {
        precondition(heldNotices == nil, "deliveries held twice")
        heldNotices = []
        body()
        let items = heldNotices!
        heldNotices = nil
        if !items.isEmpty { events.yield(LiveQueryNotice(batch: items)) }
    }
}

extension SQLiveError {
    /// Whether trying again later may succeed: an interrupt, a lock, a cancellation.
    var isTransient: Bool {
        guard let failure = sqliteFailure else { return false }
        return failure.isInterrupted || failure.code == 5 || failure.code == 6
    }
}
