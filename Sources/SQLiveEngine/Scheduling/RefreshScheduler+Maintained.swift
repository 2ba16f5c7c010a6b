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
        /// A resync came while a base was being read: that read began
        /// before the change that made it, and is read again.
        var readAgain = false
        /// Why it is not kept (it is then run again as any other).
        var unsupported: String?
        /// Where the last delivered result stood, at the latest (`nil`:
        /// unknown): a kept state is delivered only once it is that far.
        var deliveredUpTo: FilePosition?
        /// Where the last delivered result stood exactly, when it was the
        /// kept state's (a result run again is known only by an upper bound).
        var deliveredAt: FilePosition?
        var resyncs = 0
        /// Base reads that failed since the last that did not.
        var failedReads = 0
        var applied = 0
        /// Commits applied since the base was last read.
        var appliedSinceBase = 0
        /// While a base is read to check the kept state (which goes on
        /// meanwhile): `consumed` when the read began (every entry up to
        /// it is in the base). The inbox keeps the entries after it.
        var auditFrom: Int?
        /// Audits in a row whose base stood at another commit than the
        /// state (a commit came during the read): the state was kept, and
        /// checked again at the next commit; the third such is installed
        /// without a verdict (it heals, unseen).
        var auditMisses = 0
        /// States found different from their query read whole at the same commit.
        var defects = 0
    }

    /// After an evaluation was added, changed or removed: starts or stops keeping it.
    func syncMaintenance(_ definition: LiveQueryDefinition) {
        guard let inbox else { return }
        guard let evaluation = registry.evaluations[definition] else {
            if let gone = maintenance.removeValue(forKey: definition) {
                // (One given up on stopped wanting its table then.)
                if gone.unsupported == nil { inbox.unwant(gone.plan.table) }
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
        guard let inbox, var kept = maintenance[definition], kept.unsupported == nil else { return }
        guard !kept.reading else {
            // The read under way may hold the state before the change that
            // asks for a new one (a dropped table's rows, say): its result
            // is not kept, and the base is read again after it (`handle`
            // marks it so for a schema change too).
            maintenance[definition]!.readAgain = true
            return
        }
        kept.state = nil
        kept.reading = true
        kept.auditFrom = nil
        // Every entry delivered before the base's read begins is in it.
        kept.consumed = inbox.nextSequence - 1
        maintenance[definition] = kept
        baseReadRequests.yield(definition)
    }

    /// Reads a kept state's base again beside it (`keptAuditEvery`): the
    /// state goes on until the base is in, which then replaces it — and
    /// is compared with it, when the state stands at the base's commit.
    private func requestAudit(_ definition: LiveQueryDefinition) {
        guard let inbox, var kept = maintenance[definition], kept.unsupported == nil, kept.state != nil,
            !kept.reading
        else { return }
        kept.reading = true
        kept.auditFrom = inbox.nextSequence - 1
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
            inbox?.unwant(kept.plan.table)
        }
        maintenance[definition] = kept
        requestBase(definition)
    }

    /// The least the shared connection's kept pages weigh for a query
    /// kept from rows to have them let go of (`readBase`).
    static var pagesWorthForgetting: Int { 1 << 20 }

    /// The run loop's: reads a kept query's base, off the actor, and keeps it.
    func readBase(_ definition: LiveQueryDefinition) async {
        guard let baseReader, let kept = maintenance[definition], kept.reading, !isShutDown else { return }
        let rowCap = definition.maxRows ?? self.rowCap
        let read = await baseReader.read(kept.plan, sql: definition.sql, rowCap: rowCap, byteCap: byteCap)
        guard var kept = maintenance[definition], kept.reading else { return }
        kept.reading = false
        let auditFrom = kept.auditFrom
        kept.auditFrom = nil
        if kept.readAgain {
            kept.readAgain = false
            maintenance[definition] = kept
            requestBase(definition)
            return
        }
        var healed: LiveQueryResult?
        switch read {
        case .success(let base)
        where auditFrom != nil && kept.state != nil && kept.state!.position != base.position
            && kept.auditMisses < 2:
            // Not at the state's commit: no verdict; checked again at the next one.
            kept.auditMisses += 1
        case .success(let base):
            kept.failedReads = 0
            kept.appliedSinceBase = 0
            kept.auditMisses = 0
            do {
                let fresh = try MaintainedState(plan: kept.plan, base: base, rowCap: rowCap)
                if auditFrom != nil, let old = kept.state, old.position == fresh.position,
                    let oldResult = old.result, let freshResult = fresh.result, oldResult != freshResult
                {
                    kept.defects += 1
                    healed = freshResult
                    Log.scheduler.error(
                        "a live query kept from rows differed from its query read whole at \(fresh.position) (defect \(kept.defects)): \(definition.sql)"
                    )
                }
                kept.state = fresh
                // The entries after the read began are applied to the new state.
                if let auditFrom { kept.consumed = auditFrom }
            } catch {
                kept.unsupported = error.message
            }
        case .failure(.unsupported(let reason)):
            Log.scheduler.debug("live query not kept from rows: \(reason)")
            kept.unsupported = reason
        case .failure(.failed(let reason)):
            Log.scheduler.debug("reading a kept live query's base: \(reason)")
            // Given up only when it fails again and again in a row (a busy
            // writer overtakes some reads; each retries 64 times already).
            kept.failedReads += 1
            if kept.failedReads > 40 { kept.unsupported = "its base could not be read: \(reason)" }
        }
        if kept.unsupported != nil { kept.state = nil }
        maintenance[definition] = kept
        if kept.unsupported != nil {
            inbox?.unwant(kept.plan.table)
            syncPrefetch(definition)
        }
        trimInbox()
        if kept.state != nil {
            // The pages the shared connection kept from reading it whole (a
            // copy of its table, for a query of every row) are not read
            // there again while it is kept: let go of them. The other live
            // queries read there find every page changed once.
            let forgotten = await reader.forgetCommittedPages(atLeast: Self.pagesWorthForgetting)
            if forgotten > 0 {
                Log.scheduler.debug("kept from rows: the shared connection let go of \(forgotten) bytes of pages")
            }
        }
        if let healed, let state = kept.state, !isShutDown,
            kept.deliveredUpTo.map({ $0 == state.position || $0.isAfter(state.position) == false }) ?? true
        {
            // The defect's result is replaced at once, at the same commit
            // (unless a later one was delivered meanwhile: never go back).
            let evaluation = registry.evaluations[definition]
            let fetched = LiveQueryFetcher.Fetched(
                result: healed, region: evaluation?.region ?? .fullDatabase, tables: nil, elapsed: .zero,
                counters: evaluation?.lastCounters ?? StatementCounters(), position: state.position)
            deliveringTogether {
                deliver(.success(fetched), for: definition, pending: PendingChange(events: 1, cause: .external))
            }
            maintenance[definition]?.deliveredAt = state.position
        }
        if kept.state == nil, kept.unsupported == nil, !isShutDown {
            // The file kept changing, say: again, a moment later (one
            // base at a time: the next request waits for this one).
            try? await Task.sleep(for: .milliseconds(100))
            requestBase(definition)
        }
    }

    /// Notes where a result delivered by running the query stood.
    func noteDelivered(_ definition: LiveQueryDefinition, at position: FilePosition?) {
        guard maintenance[definition] != nil else { return }
        maintenance[definition]!.deliveredUpTo = position
        maintenance[definition]!.deliveredAt = nil
        if position == nil, maintenance[definition]!.state != nil {
            resync(definition, "a result was read at an unknown position")
        }
    }

    /// Applies the inbox to the batch's kept evaluations and delivers their
    /// states; returns what the refresh must run again.
    ///
    /// One refresh shows one state of the file: the kept states are
    /// delivered only when the whole batch is kept, after the inbox has the
    /// commits up to where the file stood when the refresh began (sqlive's
    /// own commit is signalled before the watcher has read it: the refresh
    /// waits for it, 250 ms at most). Otherwise — anything else in the
    /// batch to run, a state read again, groups that tie, a state behind
    /// the last result delivered — the whole batch is run again, the kept
    /// states going on from their rows.
    func applyMaintained(_ incoming: Batch) async -> Batch {
        guard let inbox, let baseReader, !maintenance.isEmpty, damage == nil else { return incoming }
        var batch = incoming
        var kept = batch.keys.filter { maintenance[$0]?.state != nil }
        for (definition, _) in batch {
            // A base that could not be read (the file kept changing): again, at this change.
            if let kept = maintenance[definition], kept.state == nil, !kept.reading, kept.unsupported == nil {
                requestBase(definition)
            }
        }
        guard !kept.isEmpty else { return batch }
        var runAll =
            rerunsKept || kept.count < batch.keys.filter({ registry.evaluations[$0]?.home == .committed }).count
        rerunsKept = false
        if !runAll {
            // Where the file stands: every commit up to there must be applied.
            let clock = ContinuousClock()
            let deadline = clock.now + .milliseconds(250)
            if let target = baseReader.currentPosition() {
                while !isShutDown {
                    if let last = inbox.lastPosition, last == target || last.isAfter(target) == true { break }
                    if clock.now > deadline || inbox.lastPosition.map({ $0.wal != target.wal }) == true {
                        runAll = true
                        break
                    }
                    try? await Task.sleep(for: .milliseconds(1))
                }
            } else {
                runAll = true
            }
            kept = kept.filter { maintenance[$0]?.state != nil }
            if isShutDown { return [:] }
        }
        // Kept queries the batch does not name, whose table a commit the
        // inbox now holds wrote (a commit that came while the batch formed,
        // its tables not yet told): in this refresh too, at the same commit
        // as the batch's — or a screen would show the batch's queries at
        // that commit and these before it. One whose base is being read
        // again makes the whole batch run again, in one snapshot.
        if !runAll {
            for (definition, progress) in maintenance
            where batch[definition] == nil && progress.unsupported == nil
                && registry.evaluations[definition]?.home == .committed
                && !registry.activeMembers(of: definition).isEmpty
            {
                let table = progress.plan.table.lowercased()
                let (later, lost) = inbox.entries(after: progress.consumed)
                let touched =
                    lost
                    || later.contains { entry in
                        !entry.derived.includes(progress.plan.table)
                            || entry.changes.contains { $0.table.lowercased() == table }
                    }
                guard touched else { continue }
                batch[definition] = PendingChange(events: 1, cause: .external)
                if progress.state != nil { kept.append(definition) }
            }
        }
        if kept.count < batch.keys.filter({ registry.evaluations[$0]?.home == .committed }).count { runAll = true }
        let clock = ContinuousClock()
        let started = clock.now
        var results: [(LiveQueryDefinition, LiveQueryFetcher.Fetched)] = []
        // One list of commits for the whole batch (the watcher adds to the
        // inbox meanwhile): every state ends at the same one.
        let floor = kept.compactMap { maintenance[$0]?.consumed }.min() ?? 0
        let (entries, lost) = inbox.entries(after: floor)
        for definition in kept {
            guard let (state, changed) = advance(definition, entries: entries, lost: lost) else {
                runAll = true
                continue
            }
            let progress = maintenance[definition]!
            // Delivered only once it is at least where the last delivery was.
            if let upTo = progress.deliveredUpTo, upTo != state.position, upTo.isAfter(state.position) != false {
                runAll = true
                continue
            }
            let current = registry.evaluations[definition]?.result
            let behind = !registry.membersAreCurrent(definition)
            guard changed || behind || current == nil || progress.deliveredAt != state.position else { continue }
            // Groups that tie under ORDER BY: SQLite orders them, this time.
            guard let result = state.result else {
                runAll = true
                continue
            }
            if let byteCap, result.printedByteCount > byteCap {
                // Too large to send: running it again says so.
                resync(definition, "its result is larger than a message may be")
                runAll = true
                continue
            }
            guard result != current || behind else {
                maintenance[definition]!.deliveredUpTo = state.position
                maintenance[definition]!.deliveredAt = state.position
                continue
            }
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
        for definition in kept where (maintenance[definition]?.appliedSinceBase ?? 0) >= keptAuditEvery {
            requestAudit(definition)
        }
        trimInbox()
        if runAll { return batch }
        if !results.isEmpty {
            deliveringTogether {
                for (definition, fetched) in results {
                    deliver(.success(fetched), for: definition, pending: batch[definition]!)
                }
            }
            for (definition, fetched) in results {
                maintenance[definition]?.deliveredAt = fetched.position
                retireLaneIfUnused(definition)
            }
        }
        return [:]
    }

    /// Applies the inbox's commits after a kept state's position; the state
    /// and whether its result changed, or `nil` when it cannot go on (it
    /// reads its base again).
    private func advance(_ definition: LiveQueryDefinition, entries: [MaintenanceInbox.Entry], lost: Bool)
        -> (MaintainedState, Bool)?
    {
        guard var kept = maintenance[definition], let state = kept.state else { return nil }
        var failure: String? =
            lost || (entries.first.map { $0.sequence > kept.consumed + 1 } ?? false)
            ? "the inbox dropped commits it had not applied" : nil
        var changed = false
        for entry in entries where failure == nil && entry.sequence > kept.consumed {
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
            if mine.contains(where: { $0.reason?.hasPrefix(BTreeCells.tooLargeReason) == true }) {
                // Reading its base would copy that row: run it again from now on.
                kept.unsupported = "its table has a row over 16 MiB"
                inbox?.unwant(state.plan.table)
                failure = kept.unsupported
                break
            }
            switch state.apply(mine, at: to) {
            case nil: break
            case .result?, .rerun?: changed = true
            case .resync(let reason)?: failure = reason
            }
            kept.applied += 1
            kept.appliedSinceBase += 1
        }
        maintenance[definition] = kept
        if let failure {
            resync(definition, failure)
            return nil
        }
        return (state, changed)
    }

    /// Drops the inbox entries every kept evaluation has passed.
    func trimInbox() {
        guard let inbox else { return }
        let floor =
            maintenance.values.filter { $0.unsupported == nil }.map { min($0.consumed, $0.auditFrom ?? .max) }.min()
            ?? (inbox.nextSequence - 1)
        inbox.trim(through: floor)
    }
}

extension RefreshScheduler {
    /// What each kept evaluation did, by SQL (for tests and the benchmark).
    func maintenanceCounts() -> [String: MaintenanceCounts] {
        var counts: [String: MaintenanceCounts] = [:]
        for (definition, kept) in maintenance {
            counts[definition.sql] = MaintenanceCounts(
                applied: kept.applied, resyncs: kept.resyncs, kept: kept.state != nil, unsupported: kept.unsupported,
                defects: kept.defects)
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
    var defects = 0

    var description: String {
        "applied \(applied), read again \(resyncs)\(kept ? "" : ", not kept")\(unsupported.map { ": \($0)" } ?? "")"
    }
}

extension LiveQueryResult {
    /// What its rows weigh printed (`SQLValue.printedByteCount`).
    var printedByteCount: Int { rows.printedByteCount }
}

extension RefreshScheduler {
    /// For tests: applies a row that no commit wrote to a kept state, at its
    /// own position (a defect, as a wrong derivation would make one), so
    /// that the audit is seen to find and heal it. `false` when the query
    /// is not kept now.
    func injectDefect(sql: String, _ change: RowChange) -> Bool {
        guard let definition = maintenance.keys.first(where: { $0.sql == sql }),
            let state = maintenance[definition]?.state
        else { return false }
        _ = state.apply([change], at: state.position)
        return true
    }
}
