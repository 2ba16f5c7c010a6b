import Foundation
import SQLiveLocks

/// Runs async engine calls from the session's own thread, waiting for them.
///
/// The session thread is not one of Swift concurrency's threads, so it may
/// block; the operation runs in a task that Ctrl-C cancels.
enum Blocking {
    static func run<T: Sendable>(
        signals: SignalState? = nil, _ operation: @escaping @Sendable () async throws -> T
    ) throws -> T {
        let result = Locked<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let task = Task {
            let outcome: Result<T, any Error>
            do {
                outcome = .success(try await operation())
            } catch {
                outcome = .failure(error)
            }
            result.withLock { $0 = outcome }
            done.signal()
        }
        signals?.setCancel { task.cancel() }
        done.wait()
        signals?.setCancel(nil)
        return try result.withLock { $0! }.get()
    }
}
