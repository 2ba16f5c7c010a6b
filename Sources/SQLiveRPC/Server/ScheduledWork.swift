import Foundation
import SQLiveLocks
import Synchronization

/// One request's work in the queue: what cancelling it needs.
///
/// Work is cancelled at most once. Cancelled before it starts, it never
/// runs, and the caller answers for it; cancelled while it runs, its task
/// is cancelled and its interrupt handler (a blocking statement's) called.
final class ScheduledWork: Sendable {
    enum Cancellation: Equatable {
        /// The work had not started: it never will.
        case beforeStart
        /// The work was running: it was asked to stop.
        case whileRunning
        /// The work had ended, or was cancelled already.
        case tooLate
    }

    // Mutable State: guarded by the mutex. `phase` only moves forward:
    // queued → running → ended, or queued → cancelled. The interrupt
    // handler is called under the mutex, so it can never reach work that
    // ended (the lane starts the next work only after `end()`).
    private enum Phase {
        case queued, running, ended, cancelled
    }
    private struct State {
        var phase = Phase.queued
        var cancelRequested = false
        var task: Task<Void, Never>?
        var interrupt: (@Sendable () -> Void)?
        var endWaiters: [CheckedContinuation<Void, Never>] = []
        var endSemaphores: [DispatchSemaphore] = []
    }
    private let state = Locked(State())

    /// Whether cancellation was asked for.
    var isCancelled: Bool {
        state.withLock { $0.cancelRequested }
    }

    /// Marks the work started; false if it was cancelled before.
    func begin() -> Bool {
        state.withLock { state in
            guard state.phase == .queued else { return false }
            state.phase = .running
            return true
        }
    }

    /// Marks the work ended, and wakes whoever waits for it.
    func end() {
        let (waiters, semaphores) = state.withLock { state in
            state.phase = .ended
            state.interrupt = nil
            defer {
                state.endWaiters = []
                state.endSemaphores = []
            }
            return (state.endWaiters, state.endSemaphores)
        }
        for waiter in waiters { waiter.resume() }
        for semaphore in semaphores { semaphore.signal() }
    }

    /// Ties the work to the task that runs it, for cancellation.
    func attach(_ task: Task<Void, Never>) {
        let cancelled = state.withLock { state in
            state.task = task
            return state.cancelRequested
        }
        if cancelled { task.cancel() }
    }

    /// Runs `body` with `interrupt` as the way to stop it when cancelled.
    func whileRunning<T, Failure: Error>(
        interrupt: @escaping @Sendable () -> Void, _ body: () throws(Failure) -> T
    ) throws(Failure) -> T {
        let cancelled = state.withLock { state in
            state.interrupt = interrupt
            return state.cancelRequested
        }
        if cancelled { interrupt() }
        defer { state.withLock { $0.interrupt = nil } }
        return try body()
    }

    /// Cancels the work.
    func cancel() -> Cancellation {
        let (outcome, task) = state.withLock { state -> (Cancellation, Task<Void, Never>?) in
            guard !state.cancelRequested else { return (.tooLate, nil) }
            state.cancelRequested = true
            switch state.phase {
            case .queued:
                state.phase = .cancelled
                // The lane skips it; whoever waits for it need not wait.
                for waiter in state.endWaiters { waiter.resume() }
                for semaphore in state.endSemaphores { semaphore.signal() }
                state.endWaiters = []
                state.endSemaphores = []
                return (.beforeStart, nil)
            case .running:
                // Under the mutex: the work cannot end meanwhile, so the
                // interrupt never reaches the next work's statement.
                state.interrupt?()
                return (.whileRunning, state.task)
            case .ended, .cancelled:
                return (.tooLate, nil)
            }
        }
        // Outside the mutex: the task's cancellation handlers run now.
        task?.cancel()
        return outcome
    }

    /// Waits until the work has ended or was cancelled before it started.
    func ended() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                guard state.phase == .queued || state.phase == .running else { return true }
                state.endWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Blocks the calling thread (the lane) until the work has ended.
    func waitUntilEnded() {
        let semaphore = DispatchSemaphore(value: 0)
        let done = state.withLock { state in
            guard state.phase == .queued || state.phase == .running else { return true }
            state.endSemaphores.append(semaphore)
            return false
        }
        if !done { semaphore.wait() }
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
