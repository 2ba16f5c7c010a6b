import SQLiveEngine
import SQLiveLocks

/// Notes when each row id first appeared in a live query's delivered results.
///
/// The live query's first column must be the row id. The time taken is
/// `Monotonic.now()` when the `.changed` event reaches this listener.
final class DeliveryRecorder: Sendable {
    private struct State {
        var firstSeen: [Int64: Int64] = [:]
        var latest: [Int64] = []
        var failures: [String] = []
    }

    private let state: Locked<State>
    private let listener: Task<Void, Never>

    /// Starts listening; subscribe to the events before registering the live query.
    init(_ events: AsyncStream<LiveQueryEvent>) {
        let state = Locked(State())
        self.state = state
        listener = Task {
            for await event in events {
                let now = Monotonic.now()
                switch event {
                case .changed(let change):
                    let ids = change.result.rows.compactMap { row -> Int64? in
                        guard case .integer(let id)? = row.first else { return nil }
                        return id
                    }
                    state.withLock { state in
                        for id in ids where state.firstSeen[id] == nil { state.firstSeen[id] = now }
                        state.latest = ids
                    }
                case .failed(let name, let error):
                    state.withLock { $0.failures.append("\(name): \(error)") }
                case .databaseFileChanged(let change):
                    state.withLock { $0.failures.append("database file changed: \(change.message)") }
                }
            }
        }
    }

    /// When each id was first delivered.
    var firstSeen: [Int64: Int64] { state.withLock { $0.firstSeen } }
    /// The ids of the latest delivered result.
    var latest: [Int64] { state.withLock { $0.latest } }
    /// Failure events, described.
    var failures: [String] { state.withLock { $0.failures } }

    func stop() { listener.cancel() }
}
