import Foundation
import GRDB

// No query holds back another: guarded fetches, and slow queries read on
// connections of their own.
//
// Every fetch runs under a `FetchGuard`, tracked in `inFlight` while it
// runs: it is stopped when nobody wants it any more (`forgetIfInactive`),
// when it runs past `budget` (the query then fails with
// `tooSlowToKeepLive`, and waits for the next change), and — on the
// connection the live queries share — when it runs past `ownLaneAfter`.
// Then it is read again on a connection of its own, an *own lane*, and
// stays there: its refreshes are handed to its lane, which reads them one
// after the other while the shared connection goes on serving the others.
// A read on its lane that takes less than half of `ownLaneAfter` brings it
// back to the shared connection (one snapshot with the others again).
extension RefreshScheduler {
    /// A slow evaluation's own lane.
    struct OwnLane {
        /// The change it has not read yet.
        var pending: PendingChange?
        /// Whether `runOwnLane` is reading it (or was asked to).
        var running = false
        /// The file changed under its connection's cache (`fileWritten`).
        var dropCache = false
    }

    /// The limits of a fetch: the budget, and on the shared connection
    /// (`movable`) the time after which it moves to its own.
    func limits(movable: Bool) -> FetchGuard.Limits {
        FetchGuard.Limits(budget: budget, ownLaneAfter: movable ? ownLaneAfter : nil)
    }

    @discardableResult
    func track(_ fetchGuard: FetchGuard, for definition: LiveQueryDefinition) -> FetchGuard {
        inFlight[definition, default: []].append(fetchGuard)
        if isShutDown { fetchGuard.cancel() }
        return fetchGuard
    }

    func untrack(_ guards: [FetchGuard], of definition: LiveQueryDefinition) {
        guard !guards.isEmpty else { return }
        inFlight[definition]?.removeAll { tracked in guards.contains { $0 === tracked } }
        if inFlight[definition]?.isEmpty ?? false { inFlight[definition] = nil }
    }

    /// Fetches under way (for tests: a stopped query's work has ended).
    var fetchesInFlight: Int {
        inFlight.values.reduce(0) { $0 + $1.count }
    }

    /// Drops an evaluation that has no member, and its own connection.
    func dropIfUnused(_ definition: LiveQueryDefinition) {
        registry.dropIfUnused(definition)
        retireLaneIfUnused(definition)
    }

    /// Closes the own lane of an evaluation that is gone, or that is
    /// delivered from its rows with no change waiting on the lane (the
    /// connection, and the pages the observer VFS keeps for it, are not
    /// needed: read whole again, it moves again if it is slow), unless it
    /// is reading (it retires itself when that read ends).
    func retireLaneIfUnused(_ definition: LiveQueryDefinition) {
        guard let lane = ownLanes[definition], !lane.running,
            registry.evaluations[definition] == nil
                || (lane.pending == nil && maintenance[definition]?.deliveredAt != nil)
        else { return }
        ownLanes[definition] = nil
        reader.closeAlone(definition)
    }

    /// Hands a change to an evaluation's own lane, and starts reading it
    /// unless its lane is reading already (then it reads it next).
    func handToOwnLane(_ definition: LiveQueryDefinition, _ pending: PendingChange) {
        var lane = ownLanes[definition] ?? OwnLane()
        if var waiting = lane.pending {
            waiting.events += pending.events
            waiting.cause = pending.cause
            waiting.merge(tables: pending.tables)
            lane.pending = waiting
        } else {
            lane.pending = pending
        }
        let start = !lane.running
        lane.running = true
        ownLanes[definition] = lane
        if start { laneRequests.yield(definition) }
    }

    /// Reads an evaluation on its own connection until no change waits
    /// for it (run by the run loop, one task per lane at a time).
    func runOwnLane(_ definition: LiveQueryDefinition) async {
        while !isShutDown, let lane = ownLanes[definition], let pending = lane.pending,
            registry.evaluations[definition] != nil
        {
            ownLanes[definition]?.pending = nil
            ownLanes[definition]?.dropCache = false
            guard !registry.activeMembers(of: definition).isEmpty else { continue }
            let work = Work(
                definition: definition, evaluation: registry.evaluations[definition], current: false,
                wantsKey: registry.wantsKey(definition))
            let fetchGuard = track(FetchGuard(limits(movable: false)), for: definition)
            let (rowCap, byteCap, tracer, dropCache) = (rowCap, byteCap, tracer, lane.dropCache)
            let outcome: FetchOutcome
            do {
                outcome = .fetched(
                    .success(
                        try await reader.readAlone(definition) { db in
                            try fetchGuard.watching(db) {
                                try Self.fetch(
                                    work, db, recordsPages: false, dropCache: dropCache, rowCap: rowCap,
                                    byteCap: byteCap, tracer: tracer)
                            }
                        }))
            } catch let stopped as FetchGuard.Stopped {
                outcome = .stopped(stopped.stop)
            } catch {
                outcome = .fetched(.failure(SQLiveError.wrap(error)))
            }
            untrack([fetchGuard], of: definition)
            if case .fetched(.success(let fetched)) = outcome, let ownLaneAfter, fetched.elapsed < ownLaneAfter / 2,
                ownLanes[definition]?.pending == nil
            {
                // Quick again: back to the shared connection.
                deliver(.success(fetched), for: definition, pending: pending)
                ownLanes[definition]?.running = false
                ownLanes[definition] = nil
                reader.closeAlone(definition)
                return
            }
            if settle(outcome, for: definition, pending: pending) {
                // Locked or interrupted: after the window, as any refresh.
                perform(machine.keysDidChange([definition], cause: pending.cause, at: clock.now))
            }
        }
        ownLanes[definition]?.running = false
        retireLaneIfUnused(definition)
    }

    /// How one guarded fetch ended.
    enum FetchOutcome: Sendable {
        case fetched(Result<LiveQueryFetcher.Fetched, SQLiveError>)
        case stopped(FetchGuard.Stop)
    }

    /// Delivers what a fetch gave, or decides what follows its stop;
    /// returns whether to read it again after the window.
    func settle(_ outcome: FetchOutcome, for definition: LiveQueryDefinition, pending: PendingChange) -> Bool {
        switch outcome {
        case .stopped(.unwanted):
            // Its members paused meanwhile missed this change; one resumed
            // since reads it again.
            return !registry.markPaused([definition], cause: pending.cause).isEmpty && !isShutDown
        case .stopped(.ownLane):
            handToOwnLane(definition, pending)
            return false
        case .stopped(.tooSlow):
            deliver(.failure(.tooSlowToKeepLive(budget: budget ?? .zero)), for: definition, pending: pending)
            return false
        case .fetched(let result):
            if let damage {
                // Reported while this read was under way: what it read (from
                // a cache, or a WAL that holds the damaged pages) is not the
                // file's truth.
                deliver(.failure(.sqlite(damage)), for: definition, pending: pending)
            } else if case .failure(let error) = result, error.isTransient || isShutDown {
                return !isShutDown
            } else {
                deliver(result, for: definition, pending: pending)
            }
            return false
        }
    }
}
