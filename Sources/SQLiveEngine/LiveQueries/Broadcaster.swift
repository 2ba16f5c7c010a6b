import SQLiveLocks

/// Hands each value to every current subscriber's `AsyncStream`.
///
/// One owner yields; each subscriber gets its own stream, which keeps
/// order. A subscriber that stops iterating is dropped.
final class Broadcaster<Element: Sendable>: Sendable {
    // Mutable State: guarded by the mutex; yielded to from any thread.
    private struct State {
        var subscribers: [Int: AsyncStream<Element>.Continuation] = [:]
        var nextID = 0
        var finished = false
    }
    private let state = Locked(State())

    func subscribe() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream()
        let id: Int? = state.withLock { state in
            guard !state.finished else { return nil }
            defer { state.nextID += 1 }
            state.subscribers[state.nextID] = continuation
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    func yield(_ element: Element) {
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for subscriber in subscribers { subscriber.yield(element) }
    }

    func finish() {
        let subscribers = state.withLock { state in
            state.finished = true
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}
