import Foundation
import SQLiveLocks
import Testing

@testable import SQLiveRPC

@Suite("Request queue", .timeLimit(.minutes(3)))
struct RequestQueueTests {
    /// Records the order operations run in.
    final class Journal: Sendable {
        private let entries = Locked<[String]>([])
        func append(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    /// A gate that operations wait on until the test opens it.
    final class Gate: Sendable {
        private let opened = Locked(false)
        func open() { opened.withLock { $0 = true } }
        var isOpen: Bool { opened.withLock { $0 } }
        func wait() async {
            while !opened.withLock({ $0 }) {
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
    }

    @Test func serialRequestsRunInOrder() async {
        let queue = RequestQueue()
        defer { queue.stop() }
        let journal = Journal()
        for index in 0..<50 {
            queue.schedule(.serial) {
                if index % 7 == 0 { try? await Task.sleep(for: .milliseconds(1)) }
                journal.append("\(index)")
            }
        }
        // Patient: the lane's tasks need Swift concurrency's pool, which
        // other suites' blocking waits can hold on two cores for a while.
        #expect(await queue.waitForAll(timeout: .seconds(120)))
        #expect(journal.all == (0..<50).map(String.init))
    }

    @Test func concurrentRequestsOvertakeARunningStatement() async {
        let queue = RequestQueue()
        defer { queue.stop() }
        let journal = Journal()
        let gate = Gate()
        queue.schedule(.serial) {
            await gate.wait()
            journal.append("long query")
        }
        queue.schedule(.serial) { journal.append("next query") }
        let list = queue.schedule(.concurrent) { journal.append("list") }
        await list.ended()
        #expect(journal.all == ["list"])
        gate.open()
        #expect(await queue.waitForAll(timeout: .seconds(30)))
        #expect(journal.all == ["list", "long query", "next query"])
    }

    @Test func concurrentRequestsWaitForLiveQueryChangesAndBarriers() async {
        let queue = RequestQueue()
        defer { queue.stop() }
        let journal = Journal()
        let gate = Gate()
        queue.schedule(.barrier) {
            await gate.wait()
            journal.append("open")
        }
        queue.schedule(.liveQueryChange) { journal.append("register") }
        queue.schedule(.concurrent) { journal.append("list") }
        queue.schedule(.barrier) { journal.append("shutdown") }
        queue.schedule(.concurrent) { journal.append("late list") }
        gate.open()
        #expect(await queue.waitForAll(timeout: .seconds(30)))
        #expect(journal.all == ["open", "register", "list", "shutdown", "late list"])
    }

    @Test func cancellationReachesTheOperation() async {
        let queue = RequestQueue()
        defer { queue.stop() }
        let started = Gate()
        let work = queue.schedule(.serial) {
            started.open()
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
        await started.wait()
        #expect(work.cancel() == .whileRunning)
        await work.ended()
        #expect(work.isCancelled)
    }

    @Test func cancellingBlockingWorkCallsItsInterrupt() async {
        let queue = RequestQueue()
        defer { queue.stop() }
        let started = Gate()
        let interrupted = Gate()
        let journal = Journal()
        let work = queue.schedule(.serial) { work in
            work.whileRunning(interrupt: { interrupted.open() }) {
                started.open()
                // A statement that runs until it is interrupted.
                while !interrupted.isOpen { usleep(1000) }
                journal.append("interrupted")
            }
        }
        let queued = queue.schedule(.serial) { _ in journal.append("queued ran") }
        await started.wait()
        #expect(queued.cancel() == .beforeStart)
        #expect(work.cancel() == .whileRunning)
        #expect(work.cancel() == .tooLate)
        await work.ended()
        #expect(await queue.waitForAll(timeout: .seconds(30)))
        #expect(journal.all == ["interrupted"])
    }

    @Test func barriersWaitForConcurrentWorkBeforeThem() async {
        let queue = RequestQueue()
        defer { queue.stop() }
        let journal = Journal()
        let gate = Gate()
        queue.schedule(.concurrent) {
            await gate.wait()
            journal.append("list")
        }
        queue.schedule(.barrier) { _ in journal.append("shutdown") }
        try? await Task.sleep(for: .milliseconds(20))
        #expect(journal.all.isEmpty)
        gate.open()
        #expect(await queue.waitForAll(timeout: .seconds(30)))
        #expect(journal.all == ["list", "shutdown"])
    }

    /// Work on threads of its own (an agent's tool calls): one that never
    /// ends by itself holds back neither another such work nor the lane;
    /// a barrier after it waits for it; cancelling it interrupts it.
    @Test func workOnThreadsOfItsOwnRunsBesideEachOtherAndTheLane() async {
        let queue = RequestQueue()
        defer { queue.stop() }
        let journal = Journal()
        let started = Gate()
        let interrupted = Gate()
        let runaway = queue.scheduleOnThread { work in
            work.whileRunning(interrupt: { interrupted.open() }) {
                started.open()
                while !interrupted.isOpen { usleep(1000) }
                journal.append("runaway interrupted")
            }
        }
        await started.wait()
        let other = queue.scheduleOnThread { _ in journal.append("other call") }
        await other.ended()
        let serial = queue.schedule(.serial) { _ in journal.append("serial") }
        await serial.ended()
        let barrier = queue.schedule(.barrier) { _ in journal.append("barrier") }
        try? await Task.sleep(for: .milliseconds(20))
        #expect(journal.all == ["other call", "serial"])
        #expect(runaway.cancel() == .whileRunning)
        await barrier.ended()
        #expect(await queue.waitForAll(timeout: .seconds(30)))
        #expect(journal.all == ["other call", "serial", "runaway interrupted", "barrier"])
    }

    /// The ordering rule, as the table it is: where each kind runs, and
    /// which earlier kinds it waits for.
    @Test func orderingRuleTable() {
        typealias Rule = OrderingRule
        #expect(Rule.place(of: .serial) == .lane)
        #expect(Rule.place(of: .liveQueryChange) == .lane)
        #expect(Rule.place(of: .barrier) == .lane)
        #expect(Rule.place(of: .concurrent) == .task)
        #expect(Rule.place(of: .independent) == .thread)
        // A list sees the live queries registered before it, and waits for no statement.
        #expect(Rule.waitsFor(.concurrent) == [.liveQueryChange, .barrier])
        // Statements and live-query changes wait for nothing off the lane.
        #expect(Rule.waitsFor(.serial).isEmpty)
        #expect(Rule.waitsFor(.liveQueryChange).isEmpty)
        // A barrier waits for everything before it.
        #expect(Rule.waitsForWorkOffTheLane(.barrier))
        #expect(Rule.laneKindsWaitedFor(by: .barrier).isEmpty)
        // An agent's statement waits for initialize and shutdown only.
        #expect(Rule.waitsFor(.independent) == [.barrier])
        #expect(!Rule.waitsForWorkOffTheLane(.independent))
    }

    /// Work on threads of its own runs on `maximumThreads` at most: more
    /// waits for one of them, and runs when one is free.
    @Test func threadsOfItsOwnAreCapped() async {
        let queue = RequestQueue()
        defer { queue.stop() }
        let gate = Gate()
        let running = Locked(0)
        let most = Locked(0)
        var works: [ScheduledWork] = []
        for _ in 0..<(RequestQueue.maximumThreads * 2) {
            works.append(
                queue.scheduleOnThread { _ in
                    let now = running.withLock { count -> Int in
                        count += 1
                        return count
                    }
                    most.withLock { $0 = max($0, now) }
                    while !gate.isOpen { usleep(1000) }
                    running.withLock { $0 -= 1 }
                })
        }
        // Wait until the first threads' worth run, then let them all go.
        while running.withLock({ $0 }) < RequestQueue.maximumThreads { try? await Task.sleep(for: .milliseconds(1)) }
        try? await Task.sleep(for: .milliseconds(20))
        #expect(most.withLock { $0 } == RequestQueue.maximumThreads)
        gate.open()
        for work in works { await work.ended() }
        #expect(most.withLock { $0 } == RequestQueue.maximumThreads)
        #expect(await queue.waitForAll(timeout: .seconds(30)))
    }
}
