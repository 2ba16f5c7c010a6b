import Foundation

/// The cycle's members: registrations joining, changing, pausing and
/// leaving the evaluations that Mark, Fetch and Reduce work on.
///
/// These are primitives keyed by `LiveQueryID`, on the actor because they
/// change the registry the cycle reads (one isolation domain keeps its
/// invariants). Who may reach a query, by what name, and what a front end
/// lists are not the scheduler's: a `LiveQueryHandle` owns one
/// registration, a `LiveQueryDirectory` maps names to handles.
extension RefreshScheduler {
    /// Reads a new registration's first result and makes it a member, at
    /// version 1.
    func register(
        _ id: LiveQueryID, name: String, definition: LiveQueryDefinition, delivery: LiveQueryDelivery = .rows
    ) async throws(SQLiveError) -> LiveQuerySnapshot {
        guard !isShutDown else { throw .closed }
        // Counted before the first read: a script that commits meanwhile
        // must be observed (or report that it was not).
        registering += 1
        publishQueryCount()
        defer {
            registering -= 1
            publishQueryCount()
        }
        let (result, tables) = try await firstResult(for: definition, wantsKey: delivery == .changesOnly)
        // Shut down (the file was replaced) while its first result was read.
        guard !isShutDown else {
            dropIfUnused(definition)
            throw .closed
        }
        registry.add(id, name: name, definition, delivery: delivery, delivered: result)
        syncInterest(definition)
        return LiveQuerySnapshot(name: name, version: 1, result: result, tables: tables)
    }

    /// Redefines a member in place: new SQL, parameters, row cap or
    /// delivery (`nil`: as it was); its version goes on.
    func update(
        _ id: LiveQueryID, sql: String?, parameters: QueryParameters?, maxRows: Int?? = nil,
        delivery: LiveQueryDelivery? = nil
    ) async throws(SQLiveError) -> LiveQuerySnapshot {
        guard let query = registry.queries[id] else { throw .closed }
        let definition = LiveQueryDefinition(
            sql: sql ?? query.definition.sql, parameters: parameters ?? query.definition.parameters,
            maxRows: maxRows ?? query.definition.maxRows)
        if definition != query.definition, registry.activeMembers(of: query.definition) == [id] {
            // Replaced: what it was reading stops now, not after the new
            // first read (if that fails, the old one reads again).
            for fetchGuard in inFlight[query.definition] ?? [] { fetchGuard.cancel() }
        }
        let (result, tables) = try await firstResult(
            for: definition, wantsKey: (delivery ?? query.delivery) == .changesOnly)
        let old = registry.queries[id]?.definition
        guard let version = registry.redefine(id, as: definition, delivery: delivery, delivered: result) else {
            dropIfUnused(definition)
            throw .unknownLiveQuery(query.name)
        }
        if let old {
            forgetIfInactive(old)
            syncInterest(old)
        }
        syncInterest(definition)
        return LiveQuerySnapshot(name: query.name, version: version, result: result, tables: tables)
    }

    /// Ends a membership (nothing, if it ended already).
    func unregister(_ id: LiveQueryID) {
        guard let definition = registry.remove(id) else { return }
        forgetIfInactive(definition)
        syncInterest(definition)
        publishQueryCount()
    }

    /// A registration let go (`LiveQueryHandle.cancel` or its `deinit`,
    /// which cannot wait for the actor): its run loop unregisters it. A
    /// scheduler shut down meanwhile (its file was replaced) keeps it for
    /// its successor, and forwards later ones to it.
    nonisolated func release(_ id: LiveQueryID) {
        let successor = released.withLock { released -> RefreshScheduler? in
            if let successor = released.successor { return successor }
            released.ids.insert(id)
            return nil
        }
        if let successor {
            successor.release(id)
        } else {
            releaseRequests.yield()
        }
    }

    /// Unregisters the registrations that were let go (none once shut
    /// down: they wait for the scheduler that takes over).
    func serveReleases() {
        guard !isShutDown else { return }
        let ids = released.withLock { released in
            defer { released.ids = [] }
            return released.ids
        }
        for id in ids.sorted() { unregister(id) }
    }

    /// Hands the releases this scheduler did not serve (it was shut down)
    /// to the scheduler that adopted its queries, and forwards it every
    /// later one (a handle may still reach this scheduler for a moment).
    nonisolated func handReleases(to successor: RefreshScheduler) {
        let ids = released.withLock { released in
            released.successor = successor
            defer { released.ids = [] }
            return released.ids
        }
        for id in ids { successor.release(id) }
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

    /// Tells the interest how many live queries exist or are being registered.
    func publishQueryCount() {
        interest.queryCount = registry.queries.count + registering
    }

    func pause(_ id: LiveQueryID) throws(SQLiveError) {
        guard let inactive = registry.pause(id) else { throw .closed }
        if inactive, let definition = registry.queries[id]?.definition {
            forgetIfInactive(definition)
        }
    }

    func resume(_ id: LiveQueryID) throws(SQLiveError) {
        guard let resumed = registry.resume(id) else { throw .closed }
        if let missed = resumed.missed, let definition = registry.queries[id]?.definition {
            perform(machine.keysDidChange([definition], cause: missed.cause, events: missed.events, at: clock.now))
        }
    }

    /// How many registrations are members now (for tests).
    var memberCount: Int { registry.queries.count }

    /// The members' infos, by registration (the ones still members).
    func infos(_ ids: [LiveQueryID]) -> [LiveQueryID: LiveQueryInfo] {
        var infos: [LiveQueryID: LiveQueryInfo] = [:]
        for id in ids {
            infos[id] = registry.info(id)
            if let definition = registry.queries[id]?.definition {
                if isMaintained(definition) { infos[id]?.precision = .rows }
                infos[id]?.defects = maintenance[definition]?.defects ?? 0
            }
        }
        return infos
    }

    /// A member's last delivery: its result, or the error that replaced
    /// it until a result comes.
    func current(_ id: LiveQueryID) throws(SQLiveError) -> (snapshot: LiveQuerySnapshot, error: SQLiveError?) {
        guard let query = registry.queries[id] else { throw .closed }
        let tables = registry.evaluations[query.definition]?.tables ?? []
        return (
            LiveQuerySnapshot(name: query.name, version: query.version, result: query.delivered, tables: tables),
            query.deliveredError
        )
    }

    /// Hands the members over to another scheduler: this one takes no
    /// more registrations or changes (they fail as closed, never lost) and
    /// delivers nothing more.
    func handOver() -> [LiveQueryRegistry.Moved] {
        // What was let go does not move.
        serveReleases()
        let moving = registry.moving
        shutdown()
        return moving
    }

    /// Takes in members from another scheduler (the file was replaced)
    /// and refreshes them all: each delivers, at its next version, what
    /// differs from its last delivery.
    func adopt(_ queries: [LiveQueryRegistry.Moved]) {
        guard !isShutDown, !queries.isEmpty else { return }
        for query in queries where registry.queries[query.id] == nil {
            registry.adopt(query)
            syncInterest(query.definition)
        }
        publishQueryCount()
        handle(.fileWritten)
    }

    /// When no active member is left (unregistered, paused, replaced):
    /// forgets its pending change, and stops its fetch under way at its
    /// next question to the guard. Members paused meanwhile count the
    /// change as missed (`settle`).
    func forgetIfInactive(_ definition: LiveQueryDefinition) {
        if registry.activeMembers(of: definition).isEmpty {
            machine.forget(definition)
            ownLanes[definition]?.pending = nil
            for fetchGuard in inFlight[definition] ?? [] { fetchGuard.cancel() }
        }
    }
}
