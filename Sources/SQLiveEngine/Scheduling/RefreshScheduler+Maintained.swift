import Foundation

// Live queries kept from the rows each commit changed (`MaintainedState`),
// beside the refreshes that run them again.
//
// An evaluation whose SQL has a shape `MaintainedPlan` allows, read on the
// committed connection of a watched file, asks the change feed for its
// table's rows (`MaintenanceInbox`) and has its base read at a known
// position (`MaintainedBaseReader`, on a thread of its own). Until the base
// is in, and whenever the state cannot go on exactly (`resync`), it is run
// again as any other; once it is in, a refresh applies the commits after
// the base instead, and delivers the state only once it is at least as far
// as the last result delivered (`deliveredUpTo`): a delivery never goes back.
extension RefreshScheduler {
    struct Maintenance {
        var plan: MaintainedPlan
        var state: MaintainedState?
        /// The inbox entries applied (or, while a base is read, known to be in it).
        var consumed: Int
        var reading = false
        /// Why it is not kept (it is then run again as any other).
        var unsupported: String?
        /// Where the last delivered result stood, at the latest (`nil`: unknown).
        var deliveredUpTo: FilePosition?
        var resyncs = 0
        var applied = 0
    }

    /// After an evaluation was added, changed or removed: starts or stops keeping it.
    func syncMaintenance(_ definition: LiveQueryDefinition) {
        guard let inbox else { return }
        guard let evaluation = registry.evaluations[definition] else {
            if let gone = maintenance.removeValue(forKey: definition) {
                inbox.unwant(gone.plan.table)
                trimInbox()
            }
            return
        }
        guard maintenance[definition] == nil, evaluation.home == .committed, definition.parameters.isEmpty,
            case .success(let plan) = MaintainedPlan.of(definition.sql)
        else { return }
        inbox.want(plan.table)
        maintenance[definition] = Maintenance(plan: plan, consumed: inbox.nextSequence - 1)
        prefetch.set(definition, nil)
        requestBase(definition)
    }

    /// Whether an evaluation is kept from rows now (`precision: "rows"`).
    func isMaintained(_ definition: LiveQueryDefinition) -> Bool {
        maintenance[definition]?.state != nil
    }

    private func requestBase(_ definition: LiveQueryDefinition) {
        guard let inbox, var kept = maintenance[definition], kept.unsupported == nil, !kept.reading else { return }
        kept.state = nil
        kept.reading = true
        // Every entry delivered before the base's read begins is in it.
        kept.consumed = inbox.nextSequence - 1
        maintenance[definition] = kept
        baseReadRequests.yield(definition)
    }

    /// Drops a kept state: the evaluation is run again until a new base is read.
    func resync(_ definition: LiveQueryDefinition, _ reason: String) {
        guard var kept = maintenance[definition] else { return }
        Log.scheduler.debug("live query kept from rows reads its base again: \(reason)")
        kept.state = nil
        kept.resyncs += 1
        // One that keeps failing is run again from now on.
        if kept.resyncs > 20, kept.resyncs * 2 > kept.applied {
            kept.unsupported = "it had to be read whole too often (\(reason))"
        }
        maintenance[definition] = kept
        requestBase(definition)
    }

    /// The run loop's: reads a kept query's base, off the actor, and keeps it.
    func readBase(_ definition: LiveQueryDefinition) async {
        guard let baseReader, let kept = maintenance[definition], kept.reading, !isShutDown else { return }
        let rowCap = definition.maxRows ?? self.rowCap
        let read = await baseReader.read(kept.plan, sql: definition.sql, rowCap: rowCap)
        guard var kept = maintenance[definition], kept.reading else { return }
        kept.reading = false
        switch read {
        case .success(let base):
            do {
                kept.state = try MaintainedState(plan: kept.plan, base: base, rowCap: rowCap)
            } catch {
                kept.unsupported = error.message
            }
        case .failure(.unsupported(let reason)):
            Log.scheduler.debug("live query not kept from rows: \(reason)")
            kept.unsupported = reason
        case .failure(.failed(let reason)):
            Log.scheduler.debug("reading a kept live query's base: \(reason)")
            kept.resyncs += 1
        }
        maintenance[definition] = kept
        if kept.unsupported != nil {
            inbox?.unwant(kept.plan.table)
            syncPrefetch(definition)
        }
        trimInbox()
    }

    /// Notes where a result delivered by running the query stood.
    func noteDelivered(_ definition: LiveQueryDefinition, at position: FilePosition?) {
        guard maintenance[definition] != nil else { return }
        maintenance[definition]!.deliveredUpTo = position
        if position == nil, maintenance[definition]!.state != nil {
            resync(definition, "a result was read at an unknown position")
        }
    }

    /// Applies the inbox to the batch's kept evaluations; returns the
    /// batch's rest, to run again (those not kept, or that could not go on).
    func applyMaintained(_ batch: Batch) -> Batch {
        guard let inbox, !maintenance.isEmpty, damage == nil else { return batch }
        var rest = batch
        var results: [(LiveQueryDefinition, LiveQueryFetcher.Fetched)] = []
        for (definition, _) in batch {
            guard var kept = maintenance[definition], let state = kept.state else { continue }
            let clock = ContinuousClock()
            let started = clock.now
            let (entries, lost) = inbox.entries(after: kept.consumed)
            var failure: String? = lost ? "the inbox dropped commits it had not applied" : nil
            var changed = false
            for entry in entries where failure == nil {
                kept.consumed = entry.sequence
                guard let to = entry.to else {
                    failure = "a commit's position is unknown"
                    break
                }
                guard let after = to.isAfter(state.position) else {
                    failure = "the journal mode changed"
                    break
                }
                if !after { continue }
                guard entry.from == state.position else {
                    failure = "the commits since its base were not all read one by one"
                    break
                }
                guard entry.derived.includes(state.plan.table) else {
                    failure = "a commit's rows of its table were not derived"
                    break
                }
                let mine = entry.changes.filter { $0.table.lowercased() == state.plan.table.lowercased() }
                switch state.apply(mine, at: to) {
                case nil: break
                case .result?: changed = true
                case .rerun?: changed = true
                case .resync(let reason)?:
                    failure = reason
                }
                kept.applied += 1
            }
            maintenance[definition] = kept
            if let failure {
                resync(definition, failure)
                continue
            }
            // Delivered once it is at least where the last delivery was.
            if let upTo = kept.deliveredUpTo, upTo != state.position, upTo.isAfter(state.position) != false {
                rest[definition] = nil
                continue
            }
            let current = registry.evaluations[definition]?.result
            guard changed || current == nil || kept.deliveredUpTo != state.position else {
                rest[definition] = nil
                continue
            }
            // Groups that tie under ORDER BY: SQLite orders them, this time.
            guard let result = state.result else { continue }
            rest[definition] = nil
            maintenance[definition]!.deliveredUpTo = state.position
            guard result != current else { continue }
            let evaluation = registry.evaluations[definition]
            results.append(
                (
                    definition,
                    LiveQueryFetcher.Fetched(
                        result: result, region: evaluation?.region ?? .fullDatabase, tables: nil,
                        elapsed: clock.now - started, counters: evaluation?.lastCounters ?? StatementCounters(),
                        position: state.position)
                ))
        }
        if !results.isEmpty {
            deliveringTogether {
                for (definition, fetched) in results {
                    deliver(.success(fetched), for: definition, pending: batch[definition]!)
                }
            }
        }
        trimInbox()
        return rest
    }

    /// Drops the inbox entries every kept evaluation has passed.
    func trimInbox() {
        guard let inbox else { return }
        let floor = maintenance.values.filter { $0.unsupported == nil }.map(\.consumed).min() ?? (inbox.nextSequence - 1)
        inbox.trim(through: floor)
    }
}

extension RefreshScheduler {
    /// What each kept evaluation did, by SQL (for tests and the benchmark).
    func maintenanceCounts() -> [String: MaintenanceCounts] {
        var counts: [String: MaintenanceCounts] = [:]
        for (definition, kept) in maintenance {
            counts[definition.sql] = MaintenanceCounts(
                applied: kept.applied, resyncs: kept.resyncs, kept: kept.state != nil, unsupported: kept.unsupported)
        }
        return counts
    }
}

/// What a live query kept from rows did: commits applied, bases read again.
struct MaintenanceCounts: Hashable, Sendable, CustomStringConvertible {
    var applied: Int
    var resyncs: Int
    var kept: Bool
    var unsupported: String?

    var description: String {
        "applied \(applied), read again \(resyncs)\(kept ? "" : ", not kept")\(unsupported.map { ": \($0)" } ?? "")"
    }
}
