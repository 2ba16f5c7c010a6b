#if canImport(Glibc)
    import Glibc
#endif

/// A value guarded by a lock, with a condition variable to wait until it
/// changes.
///
/// `Locked` with a way to sleep: a thread that has nothing to do waits in
/// `wait(_:)`, and whoever changes the value calls `broadcast()` when the
/// change may be what the sleeper waits for. Like `Locked`, it uses a
/// `pthread_mutex_t` (and a `pthread_cond_t` on the monotonic clock), which
/// ThreadSanitizer understands.
///
/// The waiting thread never holds the value across a wait: `wait(_:)`
/// calls its body under the lock, once at first and again after every
/// wake-up, and the body answers whether to wait more (for how long at
/// most) or what to return. Spurious wake-ups only call the body again.
///
/// ```swift
/// let queue = Condition([Int]())
/// // Consumer:
/// let next = queue.wait { items in items.isEmpty ? .wait : .done(items.removeFirst()) }
/// // Producer:
/// queue.withLock { $0.append(1) }
/// queue.broadcast()
/// ```
public final class Condition<Value>: @unchecked Sendable {
    /// What the body of `wait(_:)` decides, holding the lock.
    public enum Step<Result> {
        /// Stop waiting: `wait(_:)` returns this.
        case done(Result)
        /// Sleep until a broadcast.
        case wait
        /// Sleep until a broadcast, or this long at most.
        case waitAtMost(Duration)
    }

    // Invariant: the value is `Locked`'s, under its mutex (see `Locked`);
    // `condition` is only waited on with that mutex held, and the value is
    // reached only inside `withLock` or a body of `wait`, never across a
    // wait.
    @usableFromInline let locked: Locked<Value>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    public init(_ value: Value) {
        locked = Locked(value)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
    }

    /// Runs `body` with the value, holding the lock.
    @inlinable
    public func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try locked.withLock(body)
    }

    /// Wakes every thread waiting in `wait(_:)`, so each calls its body
    /// again. Call it after changing the value, with or without the lock.
    public func broadcast() {
        pthread_cond_broadcast(condition)
    }

    /// Waits until `body`, called under the lock, answers `.done`.
    ///
    /// The body runs at once, then after every wake-up: a broadcast, the
    /// end of the time it asked for, or a spurious one.
    public func wait<Result>(_ body: (inout Value) -> Step<Result>) -> Result {
        let mutex = locked.mutex
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            // A fresh access to the value for each call: none spans a wait.
            switch body(&locked.value) {
            case .done(let result):
                return result
            case .wait:
                pthread_cond_wait(condition, mutex)
            case .waitAtMost(let duration):
                var deadline = timespec()
                clock_gettime(CLOCK_MONOTONIC, &deadline)
                let (seconds, attoseconds) = duration.components
                let nanoseconds = Int(deadline.tv_nsec) + Int(max(0, attoseconds) / 1_000_000_000)
                deadline.tv_sec += Int(max(0, seconds)) + nanoseconds / 1_000_000_000
                deadline.tv_nsec = nanoseconds % 1_000_000_000
                pthread_cond_timedwait(condition, mutex, &deadline)
            }
        }
    }
}
