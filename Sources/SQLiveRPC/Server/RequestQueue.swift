import Foundation
import SQLiveLocks
import Synchronization

/// How a request runs with respect to the others.
enum Scheduling: Hashable, Sendable {
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
    /// Runs at once on a thread of its own, after the barriers before it
    /// only: an agent's statement on a reader of its own, which must hold
    /// back none of the agent's other calls (`scheduleOnThread`).
    case independent
}

/// Runs requests in the order their scheduling asks for.
///
/// Serial requests, live-query changes and barriers run one after the
/// other, in arrival order, on the *serial lane*: a thread of the queue's
/// own, started by the first lane job and ended once no job came for
/// `lingering`, then started again by the next one (an idle session costs
/// no thread). At most one lane thread runs at a time, so the order holds. A request that only needs the database runs there directly
/// (`blocking:`), as the REPL runs a statement: the connection's queue
/// runs it on the calling thread, so a `query/execute` costs one hop, from
/// the reading thread to the lane. A request that awaits actors
/// (`operation:`) runs as a task while the lane waits for it.
///
/// Concurrent requests are tasks that wait only for the live-query changes
/// and barriers before them: a `$/cancelRequest` or a `liveQuery/list`
/// overtakes a long statement, because the reading thread never waits for
/// a request.
///
/// ```swift
/// let queue = RequestQueue()
/// let work = queue.schedule(.serial, blocking: { _ in runStatement() })
/// work.cancel()  // .beforeStart if it had not started
/// ```
final class RequestQueue: Sendable {
    /// Work to run on the lane.
    private struct LaneJob: Sendable {
        var sequence: Int
        var work: ScheduledWork
        /// Concurrent work a barrier waits for before it runs.
        var waitsFor: [ScheduledWork]
        var run: @Sendable () -> Void
    }

    // Mutable State
    //
    // Guarded by the condition's mutex. `schedule` is called by the
    // connection's reading thread, in the order messages arrive; the lane
    // pops `jobs` in order and advances `completed`; concurrent tasks remove
    // themselves from `concurrent` when done. Invariant: lane sequences are
    // given in increasing order, and `completed` is the sequence of the last
    // lane job that ended (jobs end in sequence order, as the lane runs one
    // at a time), so a waiter for sequence n resumes once `completed >= n`.
    // `laneIdle` is true while the lane sleeps for want of jobs: only then
    // does scheduling wake it. `laneRunning` is true while a lane thread
    // exists: set by whoever starts one, cleared by the thread itself as it
    // ends (no job left and none for `lingering`, or stopped), both under
    // the lock, so a job scheduled after it ends starts a new one. The lane marks a job completed and takes the
    // next in one visit to the lock, so the reading thread, which schedules
    // under the same lock, rarely finds it taken.
    private struct State {
        /// Taken jobs are nil: the lane releases each outside the lock.
        var jobs: [LaneJob?] = []
        var nextJob = 0
        var nextSequence = 1
        var completed = 0
        /// The sequence of the last lane request of each kind scheduled:
        /// what requests of the kinds `OrderingRule` names wait for.
        var lastOfKind: [Scheduling: Int] = [:]

        /// The lane sequence a request of `kind` waits for: the last of the
        /// lane kinds the rule names.
        func lastSequence(waitedForBy kind: Scheduling) -> Int {
            OrderingRule.laneKindsWaitedFor(by: kind).map { lastOfKind[$0] ?? 0 }.max() ?? 0
        }
        var concurrent: [ObjectIdentifier: ScheduledWork] = [:]
        var waiters: [(sequence: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var laneRunning = false
        var laneIdle = false
        var stopped = false
    }
    private let state = Condition(State())
    /// How many lane jobs wait, not taken yet: a copy of `jobs.count -
    /// nextJob`, changed under the lock, read without it by
    /// `hasQueuedLaneWork` (for every response sent).
    private let queuedJobs = Atomic<Int>(0)

    /// The threads that run work scheduled on threads of its own: the
    /// queue's own (`maximumThreads`), or a budget a server's sessions
    /// share (`--mcp --http`).
    let threads: ThreadBudget

    init(threads: ThreadBudget = ThreadBudget(maximum: RequestQueue.maximumThreads)) {
        self.threads = threads
    }

    /// Schedules work that runs on the lane thread, blocking it.
    ///
    /// - parameter body: Runs unless the work was cancelled before it
    ///   started; it receives the work, to install an interrupt handler.
    @discardableResult
    func schedule(_ scheduling: Scheduling, blocking body: @escaping @Sendable (ScheduledWork) -> Void)
        -> ScheduledWork
    {
        precondition(OrderingRule.place(of: scheduling) == .lane, "only lane work blocks the lane")
        let work = ScheduledWork()
        enqueue(scheduling, work) {
            guard work.begin() else { return }
            body(work)
            work.end()
        }
        return work
    }

    /// Schedules work that runs as a task, in the order its scheduling asks.
    ///
    /// A serial, live-query change or barrier task holds the lane until it
    /// ends; a concurrent one runs alongside it.
    @discardableResult
    func schedule(_ scheduling: Scheduling, operation: @escaping @Sendable () async -> Void) -> ScheduledWork {
        let work = ScheduledWork()
        precondition(scheduling != .independent, "work on a thread of its own: scheduleOnThread")
        guard scheduling == .concurrent else {
            enqueue(scheduling, work) {
                guard work.begin() else { return }
                let done = DispatchSemaphore(value: 0)
                work.attach(
                    Task {
                        await operation()
                        done.signal()
                    })
                done.wait()
                work.end()
            }
            return work
        }
        let waitFor = state.withLock { state in
            state.concurrent[ObjectIdentifier(work)] = work
            return state.lastSequence(waitedForBy: .concurrent)
        }
        work.attach(
            Task {
                await self.waitUntilCompleted(waitFor)
                if work.begin() {
                    await operation()
                    work.end()
                }
                self.state.withLock { _ = $0.concurrent.removeValue(forKey: ObjectIdentifier(work)) }
            })
        return work
    }

    /// Schedules blocking work that runs on a thread of its own, beside
    /// the lane and every other such work: an agent's statement, on a
    /// reader of its own, that must hold back none of the agent's other
    /// calls. It waits only for the barriers before it (`initialize`,
    /// `shutdown`); barriers after it, and `waitForAll`, wait for it.
    ///
    /// The queue owns the thread: it ends when `body` returns, which the
    /// work's interrupt handler hastens when the work is cancelled.
    @discardableResult
    func scheduleOnThread(_ body: @escaping @Sendable (ScheduledWork) -> Void) -> ScheduledWork {
        let work = ScheduledWork()
        let (accepted, waitFor) = state.withLock { state -> (Bool, Int) in
            guard !state.stopped else { return (false, 0) }
            state.concurrent[ObjectIdentifier(work)] = work
            return (true, state.lastSequence(waitedForBy: .independent))
        }
        guard accepted else {
            _ = work.cancel()
            return work
        }
        let start: @Sendable () -> Void = {
            self.runOnThread {
                if work.begin() {
                    body(work)
                    work.end()
                }
                self.state.withLock { _ = $0.concurrent.removeValue(forKey: ObjectIdentifier(work)) }
            }
        }
        if state.withLock({ $0.completed >= waitFor }) {
            start()
        } else {
            work.attach(
                Task {
                    await self.waitUntilCompleted(waitFor)
                    start()
                })
        }
        return work
    }

    /// The most threads work scheduled on threads of its own runs on at
    /// once (`scheduleOnThread`) in a queue with a budget of its own; more
    /// waits for one of them, in order.
    static var maximumThreads: Int { 8 }

    private func runOnThread(_ job: @escaping @Sendable () -> Void) {
        threads.run(job)
    }

    private func enqueue(_ scheduling: Scheduling, _ work: ScheduledWork, _ run: @escaping @Sendable () -> Void) {
        let (accepted, startLane, wakeLane) = state.withLock { state -> (Bool, Bool, Bool) in
            guard !state.stopped else { return (false, false, false) }
            let sequence = state.nextSequence
            state.nextSequence += 1
            state.lastOfKind[scheduling] = sequence
            let waitsFor = OrderingRule.waitsForWorkOffTheLane(scheduling) ? Array(state.concurrent.values) : []
            state.jobs.append(LaneJob(sequence: sequence, work: work, waitsFor: waitsFor, run: run))
            queuedJobs.add(1, ordering: .relaxed)
            defer {
                state.laneRunning = true
                state.laneIdle = false
            }
            return (true, !state.laneRunning, state.laneIdle)
        }
        guard accepted else {
            // After `stop`: the work never runs.
            _ = work.cancel()
            return
        }
        if startLane { startLaneThread() }
        if wakeLane { state.broadcast() }
    }

    /// What the lane does next, decided under the lock.
    private enum LaneStep {
        /// Run this job (after resuming the waiters).
        case run(LaneJob, resumed: [CheckedContinuation<Void, Never>])
        /// Resume these waiters, then look again.
        case resume([CheckedContinuation<Void, Never>])
        /// Stopped, and no job is left; or idle for `lingering`.
        case stop
    }

    /// How long the lane thread waits for a job before it ends.
    static var lingering: Duration { .seconds(1) }

    /// Whether a lane thread runs now (tests).
    var isLaneRunning: Bool { state.withLock { $0.laneRunning } }

    private func startLaneThread() {
        let thread = Thread { [self] in
            var ended: Int?
            var idleSince: ContinuousClock.Instant?
            while true {
                let step = state.wait { state -> Condition<State>.Step<LaneStep> in
                    var resumed: [CheckedContinuation<Void, Never>] = []
                    if let sequence = ended {
                        ended = nil
                        state.completed = sequence
                        if !state.waiters.isEmpty {
                            resumed = state.waiters.filter { $0.sequence <= sequence }.map(\.continuation)
                            state.waiters.removeAll { $0.sequence <= sequence }
                        }
                    }
                    guard state.nextJob < state.jobs.count else {
                        // Resume waiters before sleeping, not after.
                        if !resumed.isEmpty { return .done(.resume(resumed)) }
                        let now = ContinuousClock.now
                        let since = idleSince ?? now
                        idleSince = since
                        let left = now.duration(to: since.advanced(by: Self.lingering))
                        if state.stopped || left <= .zero {
                            state.laneRunning = false
                            state.laneIdle = false
                            return .done(.stop)
                        }
                        state.laneIdle = true
                        return .waitAtMost(left)
                    }
                    idleSince = nil
                    // Taken out, not copied: the job's closures are freed when
                    // the lane is done with it, not under the lock.
                    guard let job = state.jobs[state.nextJob].take() else { preconditionFailure("a job taken twice") }
                    state.nextJob += 1
                    queuedJobs.subtract(1, ordering: .relaxed)
                    // Drop the jobs taken, now and then, not one by one.
                    if state.nextJob >= 64 && state.nextJob * 2 >= state.jobs.count {
                        state.jobs.removeFirst(state.nextJob)
                        state.nextJob = 0
                    }
                    return .done(.run(job, resumed: resumed))
                }
                switch step {
                case .stop:
                    return
                case .resume(let resumed):
                    for continuation in resumed { continuation.resume() }
                case .run(let job, let resumed):
                    for continuation in resumed { continuation.resume() }
                    for work in job.waitsFor {
                        work.waitUntilEnded()
                    }
                    job.run()
                    ended = job.sequence
                }
            }
        }
        thread.name = "sqlive.rpc.serial"
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Waits until the lane job of sequence `sequence` (and every one
    /// before it) has ended.
    private func waitUntilCompleted(_ sequence: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.completed >= sequence { return true }
                state.waiters.append((sequence, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Whether lane work waits in line, not started yet: a response sent
    /// now is followed by others at once, and may wait to be written with
    /// them (`MessageWriter.send(_:batching:)`).
    var hasQueuedLaneWork: Bool {
        queuedJobs.load(ordering: .relaxed) > 0
    }

    /// The last lane sequence given, and the concurrent work not finished.
    private var lastScheduled: (lane: Int, concurrent: [ScheduledWork]) {
        state.withLock { ($0.nextSequence - 1, Array($0.concurrent.values)) }
    }

    /// Waits until every work scheduled so far has finished, for at most
    /// `timeout`.
    ///
    /// - returns: Whether it all finished in time.
    func waitForAll(timeout: Duration) async -> Bool {
        let (lane, concurrent) = lastScheduled
        return await firstOf(
            {
                await self.waitUntilCompleted(lane)
                for work in concurrent { await work.ended() }
                return true
            },
            {
                try? await Task.sleep(for: timeout)
                return false
            })
    }

    /// Ends the lane thread once the work queued before has run; work
    /// scheduled later never runs.
    func stop() {
        state.withLock { $0.stopped = true }
        // A sleeping lane must see it.
        state.broadcast()
    }
}

/// Threads for blocking work (`RequestQueue.scheduleOnThread`): at most
/// `maximum` run at once; a job beyond them waits, in order, for one to be
/// free. A thread runs the jobs waiting after its own, then ends: no job,
/// no thread.
///
/// A queue has one of its own; the sessions of `--mcp --http` share one,
/// so that the threads running agents' statements at once are bounded
/// server-wide, however many sessions there are.
final class ThreadBudget: Sendable {
    let maximum: Int

    // Mutable State: guarded by the mutex. `running` counts the threads
    // alive; `jobs` holds the jobs waiting for one, in order. A thread
    // takes the next job, or (none waiting) counts itself out, in one visit
    // to the lock, so a job is never left waiting with no thread to run it.
    private struct State {
        var running = 0
        var jobs: [@Sendable () -> Void] = []
    }
    private let state = Locked(State())

    init(maximum: Int) {
        precondition(maximum >= 1)
        self.maximum = maximum
    }

    /// How many threads run now (tests).
    var running: Int { state.withLock { $0.running } }

    /// Runs a job on a new thread while fewer than `maximum` run, else on
    /// the next one free.
    func run(_ job: @escaping @Sendable () -> Void) {
        let startsThread = state.withLock { state -> Bool in
            guard state.running < maximum else {
                state.jobs.append(job)
                return false
            }
            state.running += 1
            return true
        }
        guard startsThread else { return }
        let thread = Thread { [self] in
            var next: (@Sendable () -> Void)? = job
            while let current = next {
                current()
                next = state.withLock { state in
                    guard !state.jobs.isEmpty else {
                        state.running -= 1
                        return nil
                    }
                    return state.jobs.removeFirst()
                }
            }
        }
        thread.name = "sqlive.rpc.call"
        thread.stackSize = 8 << 20
        thread.start()
    }
}
