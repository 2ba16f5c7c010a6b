import Foundation

/// Runs blocking work (a child process's pipes, say) on a thread of its own.
///
/// Swift concurrency has as many threads as cores (two on small machines);
/// blocking one of them would delay sqlive's own tasks and so the very
/// latencies being measured.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        thread.start()
    }
}

/// Blocks the calling thread (one of its own, never Swift concurrency's)
/// until `condition` holds or `timeout` passes; says whether it held.
@discardableResult
func blockUntil(timeout: Duration, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        usleep(200)
    }
    return true
}
