import SQLiveLocks

/// How a request runs with respect to the others.
enum Scheduling: Sendable {
    /// Runs once the barriers and live-query changes before it are done,
    /// without waiting for statements: `liveQuery/list` answers even while
    /// a long query runs, and still sees a live query registered just before.
    case concurrent
    /// Runs after the serial requests and barriers before it, in order:
    /// statements, schema, explain. They share one database connection
    /// anyway, and a client that writes then reads expects that order.
    case serial
    /// A serial request that changes the set of live queries (register,
    /// update, unregister, pause, resume); concurrent requests wait for it.
    case liveQueryChange
    /// Runs alone, after every request before it, and before any after it:
    /// `initialize`, `database/open`, `shutdown`.
    case barrier
}

/// Runs requests as tasks, in the order their scheduling asks for.
///
/// Each request is a `Task`, so that a long query never blocks the reading
/// of messages: a `$/cancelRequest` or a concurrent request overtakes it.
/// Order is kept by making each task wait for the ones it depends on.
final class RequestQueue: Sendable {
    // Mutable State
    //
    // Guarded by the mutex. `schedule` is called by the connection, in the
    // order messages arrive; tasks remove themselves from `running` when done.
    private struct State {
        var lastBarrier: Task<Void, Never>?
        var lastSerial: Task<Void, Never>?
        var lastLiveQueryChange: Task<Void, Never>?
        var running: [Int: Task<Void, Never>] = [:]
        var nextKey = 0
    }
    private let state = Locked(State())

    /// Schedules an operation; returns its task, for cancellation.
    @discardableResult
    func schedule(_ scheduling: Scheduling, operation: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        state.withLock { state in
            let key = state.nextKey
            state.nextKey += 1
            let dependencies: [Task<Void, Never>] =
                switch scheduling {
                case .concurrent: [state.lastBarrier, state.lastLiveQueryChange].compactMap { $0 }
                case .serial, .liveQueryChange: [state.lastBarrier, state.lastSerial].compactMap { $0 }
                case .barrier: Array(state.running.values)
                }
            let task = Task {
                for dependency in dependencies {
                    await dependency.value
                }
                await operation()
                self.finish(key)
            }
            state.running[key] = task
            switch scheduling {
            case .concurrent:
                break
            case .serial:
                state.lastSerial = task
            case .liveQueryChange:
                state.lastSerial = task
                state.lastLiveQueryChange = task
            case .barrier:
                state.lastSerial = task
                state.lastLiveQueryChange = task
                state.lastBarrier = task
            }
            return task
        }
    }

    private func finish(_ key: Int) {
        state.withLock { _ = $0.running.removeValue(forKey: key) }
    }

    /// The tasks not finished yet.
    var runningTasks: [Task<Void, Never>] {
        state.withLock { Array($0.running.values) }
    }

    /// Cancels every task not finished yet.
    func cancelAll() {
        for task in runningTasks { task.cancel() }
    }

    /// Waits until every task scheduled so far has finished, for at most
    /// `timeout`.
    ///
    /// - returns: Whether they all finished in time.
    func waitForAll(timeout: Duration) async -> Bool {
        let tasks = runningTasks
        guard !tasks.isEmpty else { return true }
        return await firstOf(
            {
                for task in tasks { await task.value }
                return true
            },
            {
                try? await Task.sleep(for: timeout)
                return false
            })
    }
}

/// The result of whichever operation ends first; the other is left to end
/// on its own (a task waiting for another cannot be stopped).
func firstOf<T: Sendable>(
    _ first: @escaping @Sendable () async -> T, _ second: @escaping @Sendable () async -> T
) async -> T {
    await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
        let once = Once()
        let resume: @Sendable (T) -> Void = { value in
            if once.claim() { continuation.resume(returning: value) }
        }
        Task { resume(await first()) }
        Task { resume(await second()) }
    }
}

/// A flag that can be claimed once, from any thread.
final class Once: Sendable {
    private let claimed = Locked(false)

    /// Whether this call is the first.
    func claim() -> Bool {
        claimed.withLock { claimed in
            defer { claimed = true }
            return !claimed
        }
    }
}
