#if canImport(Glibc)
    import Glibc
#endif

/// A value guarded by a lock: `withLock` is the only way to reach it.
///
/// It plays the part of the standard library's `Synchronization.Mutex`,
/// with one difference that matters here: it locks a `pthread_mutex_t`,
/// which ThreadSanitizer understands. On Linux, `Mutex` waits on a futex
/// that the sanitizer cannot see, so every access it guards is reported as
/// a race (checked on this machine with a four-thread program), which
/// would drown any real one. `scripts/sanitize.sh` relies on this.
///
/// ```swift
/// let counter = Locked(0)
/// counter.withLock { $0 += 1 }
/// ```
public final class Locked<Value>: @unchecked Sendable {
    // Invariant: `value` is only read or written between lock and unlock
    // of `mutex`: inside `withLock`, or inside a body of `Condition.wait`,
    // which waits on this mutex.
    @usableFromInline var value: Value
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the value, holding the lock.
    @inlinable
    public func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
