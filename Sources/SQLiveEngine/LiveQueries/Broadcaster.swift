import SQLiveLocks

/// Hands each value to every current subscriber's `AsyncStream`.
///
/// One owner yields; each subscriber gets its own stream, which keeps
/// order. A subscriber that stops iterating is dropped. With a `relay`,
/// each value is also handed on, in the same call (the database's one
/// ordered stream of live and trace events).
final class Broadcaster<Element: Sendable>: Sendable {
    private let relay: (@Sendable (Element) -> Void)?

    init(relay: (@Sendable (Element) -> Void)? = nil) {
        self.relay = relay
    }

    // Mutable State: guarded by the mutex; yielded to from any thread.
    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        var nextID = 0
        var finished = false
    }
    private let state = Locked(State())

    private struct Subscriber {
        /// Hands a value on to its stream, when the subscriber takes it.
        var deliver: @Sendable (Element) -> Void
        var finish: @Sendable () -> Void
    }

    /// A stream of the values yielded from now on.
    func subscribe() -> AsyncStream<Element> {
        subscription { $0 }.stream
    }

    /// A stream of what `transform` makes of each value yielded from now
    /// on (nothing when it answers `nil`), and a way to end it.
    func subscription<Output: Sendable>(_ transform: @escaping @Sendable (Element) -> Output?)
        -> (stream: AsyncStream<Output>, finish: @Sendable () -> Void)
    {
        subscription { element, continuation in
            if let output = transform(element) { continuation.yield(output) }
        }
    }

    /// A stream of the outputs `transform` makes of each value yielded
    /// from now on, in order, and a way to end it.
    func subscription<Output: Sendable>(flattening transform: @escaping @Sendable (Element) -> [Output])
        -> (stream: AsyncStream<Output>, finish: @Sendable () -> Void)
    {
        subscription { element, continuation in
            for output in transform(element) { continuation.yield(output) }
        }
    }

    /// A stream fed by `deliver` with each value yielded from now on.
    private func subscription<Output: Sendable>(
        _ deliver: @escaping @Sendable (Element, AsyncStream<Output>.Continuation) -> Void
    ) -> (stream: AsyncStream<Output>, finish: @Sendable () -> Void) {
        let (stream, continuation) = AsyncStream<Output>.makeStream()
        let subscriber = Subscriber(
            deliver: { element in deliver(element, continuation) },
            finish: { continuation.finish() })
        let id: Int? = state.withLock { state in
            guard !state.finished else { return nil }
            defer { state.nextID += 1 }
            state.subscribers[state.nextID] = subscriber
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return (stream, {})
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        return (stream, { continuation.finish() })
    }

    func yield(_ element: Element) {
        relay?(element)
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for subscriber in subscribers { subscriber.deliver(element) }
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
