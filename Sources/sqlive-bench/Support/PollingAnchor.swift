import GRDB
import SQLiveLocks

/// Re-runs a query at a fixed interval on its own connection, as `\watch`
/// users do, noting when each row id first appeared (the query's first
/// column must be the id).
final class PollingAnchor: Sendable {
    let interval: Duration
    private let state: Locked<[Int64: Int64]>
    private let task: Task<Void, Never>

    init(path: String, query: String, interval: Duration) throws {
        self.interval = interval
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        let state = Locked([Int64: Int64]())
        self.state = state
        task = Task {
            while !Task.isCancelled {
                if let ids = try? await queue.read({ db in try Int64.fetchAll(db, sql: query) }) {
                    let now = Monotonic.now()
                    state.withLock { firstSeen in
                        for id in ids where firstSeen[id] == nil { firstSeen[id] = now }
                    }
                }
                try? await Task.sleep(for: interval)
            }
        }
    }

    /// When each id was first read.
    var firstSeen: [Int64: Int64] { state.withLock { $0 } }

    func stop() { task.cancel() }
}
