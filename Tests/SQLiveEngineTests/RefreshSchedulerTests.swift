import Clocks
import Foundation
import GRDB
import SQLiveLocks
import SQLiveTestSupport
import Testing

@testable import SQLiveEngine

/// The scheduler driven by hand: its refresh requests are read from its
/// stream, and its timer sleeps on swift-clocks' `TestClock`, which
/// suspends the sleeper until the test advances it: the timing rules are
/// checked without waiting.
@Suite("Refresh scheduler on a test clock", .timeLimit(.minutes(5)))
struct RefreshSchedulerTests {
    @Test("Leading edge, coalescing within the window, one refresh when the clock passes it")
    func timing() async throws {
        let database = try await LiveDatabase.open(.memory)
        _ = try await database.execute("CREATE TABLE t(x)")
        let clock = TestClock<Duration>()
        let start = clock.now
        let events = Broadcaster<LiveQueryNotice>()
        let recorder = StreamRecorder(events.subscription(flattening: { $0.items.map(\.event) }).stream)
        let scheduler = RefreshScheduler(
            reader: database.live.reader, tracer: StatementTracer(), events: events, interest: Interest(),
            options: LiveQueryOptions(coalescingWindow: .seconds(10)), clock: clock)
        _ = try await scheduler.register(
            LiveQueryID.next(), name: "n", definition: LiveQueryDefinition(sql: "SELECT count(*) FROM t"))
        var refreshes = scheduler.refreshes.makeAsyncIterator()
        // The run loop's timer: sleeps on the clock until each deadline asked for.
        let deadlines = Locked<[TestClock<Duration>.Instant]>([])
        let timer = Task {
            for await deadline in scheduler.wakes {
                deadlines.withLock { $0.append(deadline) }
                do {
                    try await clock.sleep(until: deadline, tolerance: nil)
                } catch {
                    return
                }
                await scheduler.timerDidFire()
            }
        }

        // Leading edge: the first change is refreshed at once.
        _ = try await database.execute("INSERT INTO t VALUES (1)")
        await scheduler.handle(.local([.insert(tableName: "t")]))
        let first = try #require(await refreshes.next())
        #expect(first.values.map(\.events) == [1])
        await scheduler.refresh(first)
        try await recorder.wait("the first change") { $0.count == 1 }
        let deadline = ContinuousClock.now + .seconds(20)
        while deadlines.withLock({ $0.isEmpty }) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
        #expect(deadlines.withLock { $0 } == [start.advanced(by: .seconds(10))])

        // Within the window: changes only mark the query pending.
        for value in 2...4 {
            _ = try await database.execute("INSERT INTO t VALUES (\(value))")
            await scheduler.handle(.local([.insert(tableName: "t")]))
        }
        // Nine seconds on: the timer still sleeps.
        await clock.advance(by: .seconds(9))
        #expect(await scheduler.pendingEvents == [3])

        // The window is over: the timer wakes, one refresh covers the three changes.
        await clock.advance(by: .seconds(1))
        // On a loaded machine the timer task may reach its sleep only after
        // the clock moved past the deadline: TestClock resumes such a
        // sleeper at its next advance, so advance by nothing until it fired.
        let realDeadline = ContinuousClock.now + .seconds(20)
        while await !scheduler.pendingEvents.isEmpty, ContinuousClock.now < realDeadline {
            await clock.advance(by: .zero)
            try await Task.sleep(for: .milliseconds(5))
        }
        let second = try #require(await refreshes.next())
        #expect(second.values.map(\.events) == [3])
        #expect(await scheduler.pendingEvents.isEmpty)
        await scheduler.refresh(second)
        try await recorder.wait("the second change") { $0.count == 2 }
        let changes = recorder.all.compactMap { event -> LiveQueryChange? in
            if case .changed(let change) = event { return change }
            return nil
        }
        #expect(changes.map(\.result.rows) == [[[.integer(1)]], [[.integer(4)]]])
        #expect(changes.map(\.version) == [2, 3])
        #expect(changes.last?.coalesced == 3)
        timer.cancel()
        await scheduler.shutdown()
        await database.close()
    }
}
