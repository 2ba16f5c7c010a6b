import SQLiveLocks

/// One changed row of one commit, or a table whose changed rows are
/// unknown for that commit (the feed never guesses).
public struct RowChange: Hashable, Sendable {
    public enum Operation: String, Hashable, Sendable {
        case insert, update, delete, unknown
    }

    /// The table, as declared.
    public var table: String
    public var operation: Operation
    /// The row; `nil` for `unknown`.
    public var key: RowKey?
    /// The key's parts: `["rowid"]`, or a `WITHOUT ROWID` table's
    /// primary-key columns (empty for `unknown`).
    public var keyNames: [String]
    /// The table's columns, the names of `old` and `new`'s values.
    public var columns: [String]
    /// The row before the commit (`update`, `delete`).
    public var old: [SQLValue]?
    /// The row after the commit (`insert`, `update`).
    public var new: [SQLValue]?
    /// Why the rows are unknown (`unknown` only): the old version of a page
    /// was out of reach, the schema changed…
    public var reason: String?

    public init(
        table: String, operation: Operation, key: RowKey?, keyNames: [String], columns: [String],
        old: [SQLValue]?, new: [SQLValue]?, reason: String? = nil
    ) {
        self.table = table
        self.operation = operation
        self.key = key
        self.keyNames = keyNames
        self.columns = columns
        self.old = old
        self.new = new
        self.reason = reason
    }

    static func unknown(_ table: String, reason: String) -> RowChange {
        RowChange(
            table: table, operation: .unknown, key: nil, keyNames: [], columns: [], old: nil, new: nil,
            reason: reason)
    }
}

/// The changed rows of one commit, in the order of the commits.
public struct CommitRows: Hashable, Sendable {
    /// The commit's number in the feed: 1, 2, 3… from the database's opening.
    public var commit: Int
    /// Whether a commit of the session may explain it (`local`), or
    /// another connection's or process's made it (`external`).
    public var cause: ChangeCause
    public var changes: [RowChange]
}

/// Which tables a feed reads: every ordinary table (not SQLite's own
/// `sqlite_…` tables), or the ones named.
public enum RowFeedFilter: Hashable, Sendable {
    case all
    /// Lowercased names.
    case tables(Set<String>)

    public init(tables: [String]?) {
        if let tables, !tables.isEmpty {
            self = .tables(Set(tables.map { $0.lowercased() }))
        } else {
            self = .all
        }
    }

    func includes(_ table: String) -> Bool {
        switch self {
        case .all: !table.lowercased().hasPrefix("sqlite_")
        case .tables(let names): names.contains(table.lowercased())
        }
    }

    /// What two subscribers together want.
    func union(_ other: RowFeedFilter) -> RowFeedFilter {
        switch (self, other) {
        case (.tables(let a), .tables(let b)): .tables(a.union(b))
        default: .all
        }
    }
}

/// The database's change feed: its subscribers, what they want derived,
/// and the commit numbers. Owned by the `LiveDatabase` (it outlives a
/// followed file's watcher); the watcher asks `wanted` before each reading
/// and hands each commit's rows to `deliver`.
final class RowFeed: Sendable {
    private struct Subscriber {
        var filter: RowFeedFilter
        var continuation: AsyncStream<CommitRows>.Continuation
    }

    // Mutable State: guarded by the mutex; subscribers come and go from
    // any task, the watcher's thread delivers.
    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        var nextID = 0
        var commits = 0
        var finished = false
    }
    private let state = Locked(State())
    /// The live queries maintained from rows (set once, by the live-query
    /// center, before the watcher starts).
    private let inbox = Locked<MaintenanceInbox?>(nil)

    /// Wakes the watcher to prepare its reading of rows before the next
    /// commit, posted when a table is wanted that was not (a subscriber
    /// came, a live query is kept from rows) and when a WAL page map was
    /// built: it reads the wanted tables' pages at once (the copy
    /// `RollbackRowDeriver` compares the next commit with — without it,
    /// that commit's rows of a new table are unknown — or the pages
    /// `WALRowDeriver` keeps), not on the next commit's path. `nil` when no
    /// pipe could be made (they are read at the next commit).
    let prepare = try? WakePipe()

    /// Hands every commit to the maintained live queries too.
    func attach(_ inbox: MaintenanceInbox?) {
        self.inbox.withLock { $0 = inbox }
        let pipe = prepare
        inbox?.wantedGrew.withLock { $0 = { pipe?.post() } }
    }

    /// What the subscribers want derived; `nil` when no one subscribes
    /// (the watcher then derives nothing).
    var wanted: RowFeedFilter? {
        var wanted: RowFeedFilter? = state.withLock { state in
            var wanted: RowFeedFilter?
            for subscriber in state.subscribers.values {
                wanted = wanted.map { $0.union(subscriber.filter) } ?? subscriber.filter
            }
            return wanted
        }
        if let kept = inbox.withLock({ $0 })?.wanted { wanted = wanted.map { $0.union(kept) } ?? kept }
        return wanted
    }

    /// Each commit's changed rows of the tables the filter names, from now
    /// on, in commit order; it ends when the database closes or the stream
    /// is dropped.
    func subscribe(_ filter: RowFeedFilter) -> AsyncStream<CommitRows> {
        let (stream, continuation) = AsyncStream<CommitRows>.makeStream()
        let id: Int? = state.withLock { state in
            guard !state.finished else { return nil }
            defer { state.nextID += 1 }
            state.subscribers[state.nextID] = Subscriber(filter: filter, continuation: continuation)
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        prepare?.post()
        return stream
    }

    /// Hands one commit's changes (every wanted table's) to each subscriber,
    /// filtered; a commit with none of a subscriber's tables is not sent to it.
    ///
    /// - parameters:
    ///   - from, to: the file's positions before and after the commit (or
    ///     the commits read together), when known, for the maintained live
    ///     queries (`MaintenanceInbox`).
    ///   - derived: the tables whose rows were derived.
    func deliver(
        cause: ChangeCause, from: FilePosition? = nil, to: FilePosition? = nil, derived: RowFeedFilter = .all,
        _ changes: [RowChange]
    ) {
        inbox.withLock { $0 }?.deliver(cause: cause, from: from, to: to, derived: derived, changes)
        state.withLock { state in
            state.commits += 1
            for subscriber in state.subscribers.values {
                let mine = changes.filter { subscriber.filter.includes($0.table) }
                guard !mine.isEmpty else { continue }
                subscriber.continuation.yield(CommitRows(commit: state.commits, cause: cause, changes: mine))
            }
        }
    }

    func finish() {
        let subscribers = state.withLock { state in
            state.finished = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.continuation.finish() }
    }
}
