import SQLiveEngine
import SQLiveLocks

/// Live-query and trace events waiting to be printed.
///
/// One task per stream moves events here (keeping their order) and wakes
/// the session; the session thread prints them when it is free: at the
/// prompt, between commands, or while `.wait` waits.
final class EventQueue: Sendable {
    enum Item: Sendable {
        case live(LiveQueryEvent)
        case trace(TraceEvent)
        /// A commit's changed rows (`.feed`).
        case feed(CommitRows)
    }

    // Mutable State: guarded by the mutex; pump tasks append, the session thread takes.
    private let items = Locked<[Item]>([])
    private let wake: WakePipe

    init(wake: WakePipe) {
        self.wake = wake
    }

    func append(_ item: Item) {
        append(contentsOf: [item])
    }

    /// Appends items at once: the session takes all of them or none (the
    /// changes of one commit, shown as one state).
    func append(contentsOf new: [Item]) {
        items.withLock { $0.append(contentsOf: new) }
        wake.post()
    }

    func takeAll() -> [Item] {
        items.withLock { items in
            defer { items.removeAll() }
            return items
        }
    }

    /// Takes the live queries' changes only, leaving the other events in order.
    func takeLiveChanges() -> [LiveQueryChange] {
        items.withLock { items in
            var changes: [LiveQueryChange] = []
            items.removeAll { item in
                guard case .live(.changed(let change)) = item else { return false }
                changes.append(change)
                return true
            }
            return changes
        }
    }

    var isEmpty: Bool { items.withLock { $0.isEmpty } }

    /// Starts moving a database's change feed here; cancel the task to stop.
    func pumpFeed(_ database: LiveDatabase, tables: [String]) -> Task<Void, Never> {
        let feed = database.rowChanges(tables: tables)
        return Task { [self] in
            for await commit in feed { append(.feed(commit)) }
        }
    }

    /// Starts moving a database's events here, in the order they happened
    /// (one stream: a refresh's trace line before the change it
    /// delivered); cancel the task to stop.
    func pump(_ database: LiveDatabase) -> [Task<Void, Never>] {
        let events = database.sessionEvents()
        return [
            Task { [self] in
                for await event in events {
                    switch event {
                    case .live(let live): append(.live(live))
                    case .liveBatch(let batch): append(contentsOf: batch.map(Item.live))
                    case .trace(let trace) where trace.origin != .user: append(.trace(trace))
                    case .trace: break
                    }
                }
            }
        ]
    }
}
