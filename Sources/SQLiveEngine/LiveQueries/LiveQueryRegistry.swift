import Foundation
import GRDB

/// The live queries: their definitions, shared evaluations, versions and
/// last deliveries — and the Reduce step of the cycle, which turns a fetched
/// result into the events to deliver.
///
/// A value owned by the `RefreshScheduler` actor. Live queries with equal
/// SQL and parameters share one `Evaluation`: one region, one fetch per
/// refresh.
struct LiveQueryRegistry {
    typealias Pending = PendingChange

    /// One distinct SQL statement and its parameters, shared by the live
    /// queries that ask it.
    struct Evaluation {
        var definition: LiveQueryDefinition
        var members: Set<LiveQueryID> = []
        /// Where it is read.
        var home: LiveQueryReader.Home
        /// What the statement reads; the full database until known (a
        /// failing query is refreshed by any change, so that it recovers).
        var region = DatabaseRegion.fullDatabase
        var tables: [String] = []
        var result: LiveQueryResult?
        var error: SQLiveError?
        /// How long the last fetch took; refreshes run the fastest first.
        var lastElapsed: Duration = .zero
        /// SQLite's counters for the last fetch.
        var lastCounters: StatementCounters?
        /// The pages its last fetch read, when known: another process's
        /// commit that changed none of them leaves its result as it was.
        var dependency: ObserverVFS.PageDependency?
        /// The result columns that identify a row, when a member asks for
        /// changes only (`LiveQueryFetcher.keyColumns`).
        var keyColumns: [Int]?
        /// When its last read had ended, at the latest (it was delivered
        /// then): a result read at a commit begun before it may be older
        /// than what was delivered, and is not used (`LocalPrefetch`).
        var lastReadAt: Int?
    }

    /// One registration of a live query (one `LiveQueryHandle`).
    struct Query {
        /// What its events and infos call it (`LiveQueryHandle.name`); a
        /// label, not a key: names are the `LiveQueryDirectory`'s.
        var name: String
        var definition: LiveQueryDefinition
        var delivery: LiveQueryDelivery = .rows
        var version: Int
        var refreshes = 0
        var lastRefresh: Date?
        var lastRefreshDuration: Duration?
        var paused = false
        /// Changes that arrived while paused.
        var missed: Pending?
        /// The last result delivered to subscribers.
        var delivered: LiveQueryResult
        /// The last error delivered, until a result replaces it.
        var deliveredError: SQLiveError?
    }

    // Invariants
    //
    // - `queries[id].definition` is always a key of `evaluations`, and
    //   that evaluation's `members` contains `id`; an evaluation without
    //   members is removed.
    // - Versions only grow: a query's version increases by one with each
    //   delivered result.
    // - `index` holds each evaluation's region and tables, and nothing else:
    //   every change of `evaluations` goes through `store` or `drop`.
    private(set) var evaluations: [LiveQueryDefinition: Evaluation] = [:]
    private(set) var queries: [LiveQueryID: Query] = [:]
    /// The evaluations by the tables they read, for Mark.
    private var index = RegionIndex<LiveQueryDefinition>()

    /// Saves an evaluation and indexes what it reads.
    private mutating func store(_ evaluation: Evaluation) {
        evaluations[evaluation.definition] = evaluation
        index.set(evaluation.definition, region: evaluation.region, tables: evaluation.tables)
    }

    private mutating func drop(_ definition: LiveQueryDefinition) {
        evaluations[definition] = nil
        index.remove(definition)
    }

    /// The evaluation's result, when it is shared and current.
    func currentResult(of definition: LiveQueryDefinition) -> (LiveQueryResult, [String])? {
        guard let evaluation = evaluations[definition], let result = evaluation.result, evaluation.error == nil
        else { return nil }
        return (result, evaluation.tables)
    }

    /// Records a first fetch for a definition (shared by later members).
    ///
    /// - parameter readAt: The read's place in `LocalPrefetch.reads`.
    mutating func record(
        _ fetched: LiveQueryFetcher.Fetched, home: LiveQueryReader.Home, for definition: LiveQueryDefinition,
        readAt: Int
    ) {
        var evaluation = evaluations[definition] ?? Evaluation(definition: definition, home: home)
        evaluation.home = home
        evaluation.region = fetched.region
        evaluation.tables = fetched.tables ?? evaluation.tables
        evaluation.result = fetched.result
        evaluation.lastElapsed = fetched.elapsed
        evaluation.lastCounters = fetched.counters
        evaluation.dependency = fetched.dependency
        evaluation.keyColumns = fetched.keyColumns ?? evaluation.keyColumns
        evaluation.lastReadAt = readAt
        store(evaluation)
    }

    /// Adds a live query, at version 1. The definition's first fetch was `record`ed.
    mutating func add(
        _ id: LiveQueryID, name: String, _ definition: LiveQueryDefinition, delivery: LiveQueryDelivery = .rows,
        delivered: LiveQueryResult
    ) {
        queries[id] = Query(name: name, definition: definition, delivery: delivery, version: 1, delivered: delivered)
        evaluations[definition]?.members.insert(id)
    }

    /// Whether a member of the evaluation asks for changes only (its fetch
    /// then finds the key columns).
    func wantsKey(_ definition: LiveQueryDefinition) -> Bool {
        evaluations[definition]?.members.contains { queries[$0]?.delivery == .changesOnly } ?? false
    }

    /// A live query as it leaves one registry for another (the database
    /// file was replaced: `LiveDatabase.follow`).
    struct Moved: Sendable {
        var id: LiveQueryID
        var name: String
        var definition: LiveQueryDefinition
        var home: LiveQueryReader.Home
        var version: Int
        var delivery: LiveQueryDelivery
        var paused: Bool
        var delivered: LiveQueryResult
        var deliveredError: SQLiveError?
    }

    /// The live queries, to move to another registry.
    var moving: [Moved] {
        queries.map { id, query in
            Moved(
                id: id, name: query.name, definition: query.definition,
                home: evaluations[query.definition]?.home ?? .committed, version: query.version,
                delivery: query.delivery, paused: query.paused, delivered: query.delivered,
                deliveredError: query.deliveredError)
        }
    }

    /// Whether every active member of an evaluation was delivered its
    /// current result (none is behind: paused while it moved on, say), so a
    /// refresh proven unchanged owes nobody anything.
    func membersAreCurrent(_ definition: LiveQueryDefinition) -> Bool {
        guard let evaluation = evaluations[definition], let result = evaluation.result, evaluation.error == nil
        else { return false }
        return evaluation.members.allSatisfy { id in
            guard let query = queries[id] else { return true }
            return query.paused || (query.delivered == result && query.deliveredError == nil)
        }
    }

    /// Takes in a live query from another registry, with its version and
    /// last delivery, not read yet (its region is the full database until
    /// its first refresh, which delivers what differs).
    mutating func adopt(_ moved: Moved) {
        var evaluation = evaluations[moved.definition] ?? Evaluation(definition: moved.definition, home: moved.home)
        evaluation.members.insert(moved.id)
        store(evaluation)
        var query = Query(
            name: moved.name, definition: moved.definition, delivery: moved.delivery, version: moved.version,
            delivered: moved.delivered)
        query.paused = moved.paused
        query.deliveredError = moved.deliveredError
        queries[moved.id] = query
    }

    /// Redefines a live query in place; returns its new version.
    mutating func redefine(
        _ id: LiveQueryID, as definition: LiveQueryDefinition, delivery: LiveQueryDelivery?, delivered: LiveQueryResult
    ) -> Int? {
        guard var query = queries[id] else { return nil }
        if query.definition != definition { leave(id, query.definition) }
        query.definition = definition
        query.delivery = delivery ?? query.delivery
        query.version += 1
        query.delivered = delivered
        query.deliveredError = nil
        query.missed = nil
        queries[id] = query
        evaluations[definition]?.members.insert(id)
        return query.version
    }

    /// Removes a live query; returns the definition it had.
    mutating func remove(_ id: LiveQueryID) -> LiveQueryDefinition? {
        guard let query = queries.removeValue(forKey: id) else { return nil }
        leave(id, query.definition)
        return query.definition
    }

    mutating func removeAll() {
        queries.removeAll()
        evaluations.removeAll()
        index.removeAll()
    }

    /// Drops a definition that has no member any more (after a failed
    /// registration, say).
    mutating func dropIfUnused(_ definition: LiveQueryDefinition) {
        if evaluations[definition]?.members.isEmpty ?? false { drop(definition) }
    }

    private mutating func leave(_ id: LiveQueryID, _ definition: LiveQueryDefinition) {
        evaluations[definition]?.members.remove(id)
        dropIfUnused(definition)
    }

    /// Pauses a query; whether its evaluation has no active member left.
    mutating func pause(_ id: LiveQueryID) -> Bool? {
        guard queries[id] != nil else { return nil }
        queries[id]!.paused = true
        return activeMembers(of: queries[id]!.definition).isEmpty
    }

    /// Resumes a query; what it missed while paused.
    mutating func resume(_ id: LiveQueryID) -> (wasPaused: Bool, missed: Pending?)? {
        guard var query = queries[id] else { return nil }
        guard query.paused else { return (false, nil) }
        query.paused = false
        let missed = query.missed
        query.missed = nil
        queries[id] = query
        return (true, missed)
    }

    func activeMembers(of definition: LiveQueryDefinition) -> [LiveQueryID] {
        (evaluations[definition]?.members ?? []).filter { queries[$0].map { !$0.paused } ?? false }
    }

    // MARK: - Mark

    /// The evaluations a change signal concerns.
    func definitions(affectedBy signal: ChangeSignal) -> [LiveQueryDefinition] {
        switch signal {
        case .local(let kinds):
            Array(Set(kinds.flatMap { index.keys(modifiedBy: $0) }))
        case .rolledBack:
            evaluations.values.filter { $0.home == .session }.map(\.definition)
        case .external(let tables?), .presumedExternal(let tables?):
            // A region reads a table when an insert into it could change it.
            Array(index.keys(readingAnyOf: tables))
        case .localUnobserved, .external(nil), .presumedExternal(nil), .schemaChanged, .damage, .fileWritten:
            Array(evaluations.keys)
        case .fileChanged:
            []
        }
    }

    /// Notes a change for paused members, and returns the definitions that
    /// have an active member (those to refresh).
    mutating func markPaused(_ definitions: [LiveQueryDefinition], cause: ChangeCause) -> [LiveQueryDefinition] {
        var active: [LiveQueryDefinition] = []
        for definition in definitions {
            guard let evaluation = evaluations[definition] else { continue }
            var hasActive = false
            for id in evaluation.members {
                guard var query = queries[id] else { continue }
                if query.paused {
                    query.missed = Pending(events: (query.missed?.events ?? 0) + 1, cause: cause)
                    queries[id] = query
                } else {
                    hasActive = true
                }
            }
            if hasActive { active.append(definition) }
        }
        return active
    }

    // MARK: - Reduce

    /// What delivering one fetch did.
    struct Reduced {
        /// Each with the registration it is about.
        var events: [(id: LiveQueryID, event: LiveQueryEvent)] = []
        /// The evaluation's new region, when it changed: the interest must follow.
        var newRegion: DatabaseRegion?
    }

    /// Applies a fetch's outcome to an evaluation and its active members:
    /// the events to deliver, only for results (or errors) that changed.
    mutating func reduce(
        _ outcome: Result<LiveQueryFetcher.Fetched, SQLiveError>, for definition: LiveQueryDefinition,
        pending: Pending, now: Date, readAt: Int
    ) -> Reduced {
        guard var evaluation = evaluations[definition] else { return Reduced() }
        var reduced = Reduced()
        switch outcome {
        case .success(let fetched) where fetched.skipped:
            // Proven unchanged without reading it again: not a refresh.
            evaluation.dependency = fetched.dependency
            store(evaluation)
        case .success(let fetched):
            evaluation.dependency = fetched.dependency
            if evaluation.region != fetched.region {
                reduced.newRegion = fetched.region
            }
            evaluation.region = fetched.region
            evaluation.tables = fetched.tables ?? evaluation.tables
            evaluation.result = fetched.result
            evaluation.lastElapsed = fetched.elapsed
            evaluation.lastCounters = fetched.counters
            evaluation.keyColumns = fetched.keyColumns ?? evaluation.keyColumns
            evaluation.error = nil
            evaluation.lastReadAt = readAt
            store(evaluation)
            for id in evaluation.members.sorted() {
                guard var query = queries[id], !query.paused else { continue }
                query.refreshes += 1
                query.lastRefresh = now
                query.lastRefreshDuration = fetched.elapsed
                if query.delivered != fetched.result || query.deliveredError != nil {
                    query.version += 1
                    var changes: RowChanges?
                    if query.delivery == .changesOnly, query.delivered.columns == fetched.result.columns {
                        changes = RowChanges(
                            from: query.delivered.rows, to: fetched.result.rows, keyColumns: evaluation.keyColumns)
                    }
                    reduced.events.append(
                        (
                            id,
                            .changed(
                                LiveQueryChange(
                                    name: query.name, version: query.version, result: fetched.result,
                                    previous: query.delivered, cause: pending.cause, coalesced: pending.events,
                                    elapsed: fetched.elapsed, tables: pending.tables?.sorted(),
                                    delivery: query.delivery,
                                    changes: changes))
                        ))
                    query.delivered = fetched.result
                    query.deliveredError = nil
                }
                queries[id] = query
            }
        case .failure(let error):
            evaluation.dependency = nil
            evaluation.error = error
            evaluation.lastReadAt = readAt
            // A query too slow to keep live reads what it read: it waits for
            // a change of that. Any other failure may come from what it
            // reads being gone: any change retries it.
            let region: DatabaseRegion =
                if case .tooSlowToKeepLive = error { evaluation.region } else { .fullDatabase }
            if evaluation.region != region {
                reduced.newRegion = region
            }
            evaluation.region = region
            store(evaluation)
            for id in evaluation.members.sorted() {
                guard var query = queries[id], !query.paused else { continue }
                query.refreshes += 1
                query.lastRefresh = now
                if query.deliveredError != error {
                    query.deliveredError = error
                    reduced.events.append((id, .failed(name: query.name, error: error)))
                }
                queries[id] = query
            }
        }
        return reduced
    }

    // MARK: - Describe

    /// A live query as `LiveQueryDirectory.list()` shows it.
    func info(_ id: LiveQueryID) -> LiveQueryInfo? {
        guard let query = queries[id] else { return nil }
        let evaluation = evaluations[query.definition]
        return LiveQueryInfo(
            name: query.name, definition: query.definition, tables: evaluation?.tables ?? [],
            region: evaluation.map { $0.error == nil ? $0.region.description : "unknown" } ?? "",
            version: query.version, refreshes: query.refreshes, lastRefresh: query.lastRefresh,
            lastRefreshDuration: query.lastRefreshDuration, paused: query.paused,
            error: evaluation?.error, readsSession: evaluation?.home == .session, delivery: query.delivery,
            lastRun: evaluation.flatMap { evaluation in
                evaluation.lastCounters.map { LiveQueryInfo.Run(elapsed: evaluation.lastElapsed, counters: $0) }
            })
    }
}
