import SQLiveLocks

/// The change feed's commits, kept for the live queries maintained from
/// rows until each has applied them (`MaintainedState`).
///
/// The watcher's thread delivers every commit it derived rows for, in
/// order, before it reports the commit (`RowFeed.deliver`); a refresh
/// waits until the inbox has the commits up to where the file stands. Each entry says
/// which span of positions it covers and which tables were derived for it,
/// so that a kept result applies exactly the commits after its base — a
/// gap, an overlap or a table not derived make it read its base again.
/// The scheduler takes the entries after the last one it applied, and
/// trims what every kept query has passed.
final class MaintenanceInbox: Sendable {
    struct Entry: Sendable {
        /// Its place in the inbox: 1, 2, 3…
        var sequence: Int
        /// The positions before and after the commit (or commits, when the
        /// rows of several were read together); `nil` when unknown.
        var from: FilePosition?
        var to: FilePosition?
        /// What was derived for it.
        var derived: RowFeedFilter
        /// Its changes of the inbox's tables.
        var changes: [RowChange]
    }

    private struct State {
        var entries: [Entry] = []
        var next = 1
        /// The tables of the kept queries, lowercased.
        var tables: [String: Int] = [:]
        var last: FilePosition?
    }
    // Mutable State: guarded by the mutex; the watcher's thread delivers,
    // the scheduler's actor takes, trims and says what it wants.
    private let state = Locked(State())
    /// The most entries kept: past it the oldest go, and a kept query that
    /// had not applied them reads its base again.
    static let capacity = 4096

    /// The tables to derive, `nil` for none.
    var wanted: RowFeedFilter? {
        state.withLock { $0.tables.isEmpty ? nil : .tables(Set($0.tables.keys)) }
    }

    /// Derives one more table's rows (a count: two kept queries of one table).
    func want(_ table: String) {
        let grew = state.withLock { state in
            state.tables[table.lowercased(), default: 0] += 1
            return state.tables[table.lowercased()] == 1
        }
        if grew { wantedGrew.withLock { $0 }?() }
    }

    /// Called when a table is wanted that was not (set once, by the `RowFeed`).
    let wantedGrew = Locked<(@Sendable () -> Void)?>(nil)

    func unwant(_ table: String) {
        state.withLock { state in
            let name = table.lowercased()
            guard let count = state.tables[name] else { return }
            state.tables[name] = count > 1 ? count - 1 : nil
        }
    }

    /// The sequence the next entry will have.
    var nextSequence: Int { state.withLock { $0.next } }

    /// From the watcher's thread: one commit's rows.
    func deliver(
        cause: ChangeCause, from: FilePosition?, to: FilePosition?, derived: RowFeedFilter, _ changes: [RowChange]
    ) {
        state.withLock { state in
            guard !state.tables.isEmpty else { return }
            var mine: [RowChange] = []
            for change in changes {
                if change.operation == .unknown, change.table == "*" {
                    // Every table's rows unknown (no page map, no WAL): each kept table's.
                    mine += state.tables.keys.sorted().map { RowChange.unknown($0, reason: change.reason ?? "") }
                } else if state.tables[change.table.lowercased()] != nil {
                    mine.append(change)
                }
            }
            state.entries.append(
                Entry(sequence: state.next, from: from, to: to, derived: derived, changes: mine))
            state.next += 1
            state.last = to
            if state.entries.count > Self.capacity { state.entries.removeFirst(state.entries.count - Self.capacity) }
        }
    }

    /// The position of the last commit delivered (`nil`: none, or unknown).
    var lastPosition: FilePosition? { state.withLock { $0.last } }

    /// The entries after `sequence`, and whether any between were dropped.
    func entries(after sequence: Int) -> (entries: [Entry], lost: Bool) {
        state.withLock { state in
            let first = state.entries.firstIndex { $0.sequence > sequence } ?? state.entries.count
            let lost = (state.entries.first?.sequence ?? state.next) > sequence + 1
            return (Array(state.entries[first...]), lost)
        }
    }

    /// Drops the entries up to `sequence`.
    func trim(through sequence: Int) {
        state.withLock { state in
            state.entries.removeAll { $0.sequence <= sequence }
        }
    }
}
