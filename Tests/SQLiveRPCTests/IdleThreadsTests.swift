import Clocks
import Foundation
import SQLiveLocks
import SQLiveProtocol
import Testing

@testable import SQLiveRPC

/// The pieces that make an idle session cost no thread (issue 56): the
/// request queue's lane and the message writer's thread end once idle for
/// their `lingering` and start again at the next job or message, in
/// order; and the MCP sessions' policy (how many, for how long), a pure
/// value over a test clock's instants.
@Suite("Idle sessions cost no thread", .timeLimit(.minutes(2)))
struct IdleThreadsTests {
    /// Waits until `condition` holds, for at most `limit`.
    static func eventually(within limit: Duration = .seconds(20), _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now.advanced(by: limit)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return condition()
    }

    @Test func theLaneEndsWhenIdleAndStartsAgainInOrder() async {
        let queue = RequestQueue()
        defer { queue.stop() }
        let journal = Locked<[Int]>([])
        queue.schedule(.serial, blocking: { _ in journal.withLock { $0.append(1) } })
        #expect(await queue.waitForAll(timeout: .seconds(60)))
        #expect(await Self.eventually { !queue.isLaneRunning }, "the lane thread did not end once idle")
        // A request after the lane ended starts it again; the order holds,
        // and concurrent work still waits for the barrier before it.
        queue.schedule(.barrier, blocking: { _ in journal.withLock { $0.append(2) } })
        queue.schedule(.concurrent) { journal.withLock { $0.append(3) } }
        queue.schedule(.serial, blocking: { _ in journal.withLock { $0.append(4) } })
        #expect(await queue.waitForAll(timeout: .seconds(60)))
        let order = journal.withLock { $0 }
        #expect(order.first == 1 && order.dropFirst().first == 2 && order.count == 4, "\(order)")
        #expect(await Self.eventually { !queue.isLaneRunning })
    }

    @Test func theWriterThreadEndsWhenIdleAndMessagesStayInOrder() async {
        let received = Locked<[Int64]>([])
        let writer = MessageWriter(
            output: .sink { bytes in
                if let json = try? JSONCoding.decode(JSONValue.self, from: bytes), let id = json["id"]?.integerValue {
                    received.withLock { $0.append(id) }
                }
            }, framing: .newline)
        defer { writer.stop() }
        #expect(!writer.isThreadRunning, "a writer with nothing to write has no thread")
        for id in 0..<100 { writer.send(.response(id: .number(Int64(id)), result: ["n": id]), batching: id % 3 != 0) }
        #expect(writer.flush())
        #expect(await Self.eventually { !writer.isThreadRunning }, "the writer thread did not end once idle")
        for id in 100..<200 { writer.send(.response(id: .number(Int64(id)), result: ["n": id])) }
        #expect(writer.flush())
        #expect(received.withLock { $0 } == (0..<200).map(Int64.init))
    }

    /// Queues that share a budget of threads (the sessions of one
    /// `--mcp --http` server) run at most its maximum of blocking calls at
    /// once, all of them in the end, and keep no thread once done.
    @Test func queuesSharingABudgetAreBoundedTogether() async {
        let budget = ThreadBudget(maximum: 3)
        let queues = (0..<4).map { _ in RequestQueue(threads: budget) }
        defer { for queue in queues { queue.stop() } }
        let running = Locked(0)
        let most = Locked(0)
        let open = Locked(false)
        var works: [ScheduledWork] = []
        for queue in queues {
            for _ in 0..<3 {
                works.append(
                    queue.scheduleOnThread { _ in
                        let now = running.withLock { count -> Int in
                            count += 1
                            return count
                        }
                        most.withLock { $0 = max($0, now) }
                        while !open.withLock({ $0 }) { usleep(1000) }
                        running.withLock { $0 -= 1 }
                    })
            }
        }
        #expect(await Self.eventually { running.withLock { $0 } == 3 }, "the budget's threads did not all start")
        #expect(budget.running == 3)
        open.withLock { $0 = true }
        for work in works { await work.ended() }
        #expect(most.withLock { $0 } == 3, "more calls ran at once than the budget allows")
        #expect(await Self.eventually { budget.running == 0 }, "a thread outlived the work")
    }

    @Test func sessionPolicyOverATestClock() {
        let clock = TestClock<Duration>()
        let policy = MCPSessionPolicy(maximumSessions: 2, idleLimit: .seconds(60), busyRetryAfter: .seconds(5))
        let start = clock.now
        typealias Activity = MCPSessionPolicy.Activity<TestClock<Duration>.Instant>
        let idle = Activity(lastActive: start, busy: false)
        let busy = Activity(lastActive: start, busy: true)
        #expect(!policy.isExpired(idle, at: start.advanced(by: .seconds(59))))
        #expect(policy.isExpired(idle, at: start.advanced(by: .seconds(60))))
        #expect(!policy.isExpired(busy, at: start.advanced(by: .seconds(3600))), "a busy session never expires")
        #expect(policy.admission([idle], at: start) == .admit)
        // Full: retry when the first idle session expires, rounded up.
        let later = Activity(lastActive: start.advanced(by: .seconds(10)), busy: false)
        #expect(
            policy.admission([later, idle], at: start.advanced(by: .milliseconds(20_500)))
                == .refuse(retryAfterSeconds: 40))
        // Full of busy sessions: the busy retry.
        #expect(policy.admission([busy, busy], at: start) == .refuse(retryAfterSeconds: 5))
        // Never less than a second.
        #expect(policy.admission([idle, idle], at: start.advanced(by: .seconds(60))) == .refuse(retryAfterSeconds: 1))
        #expect(MCPSessionPolicy(idleLimit: .seconds(1)).sweepInterval == .milliseconds(250))
        #expect(MCPSessionPolicy().sweepInterval == .seconds(30))
        #expect(MCPSessionPolicy().maximumSessions == 256 && MCPSessionPolicy().idleLimit == .seconds(600))
    }
}
