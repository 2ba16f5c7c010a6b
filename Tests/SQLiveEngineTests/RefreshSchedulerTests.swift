import Foundation
import GRDB
import SQLiveLocks
import SQLiveTestSupport
import Testing

@testable import SQLiveEngine

/// A clock that moves only when a test advances it.
final class ManualClock: Clock, Sendable {
    typealias Instant = ManualInstant
    private let current = Locked(ManualInstant(offset: .zero))

    var now: ManualInstant { current.withLock { $0 } }
    var minimumResolution: Duration { .zero }

    func advance(by duration: Duration) {
        current.withLock { $0 = $0.advanced(by: duration) }
    }

    /// Returns once the clock was advanced past the deadline.
    func sleep(until deadline: ManualInstant, tolerance: Duration?) async throws {
        while now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
    }
}

/// The scheduler driven by hand: its requests are read from its streams,
/// and time is a manual clock, so the timing rules are checked without sleeping.
@Suite("Refresh scheduler on a manual clock")
struct RefreshSchedulerTests {
    @Test("Leading edge, coalescing within the window, one refresh when the clock passes it")
    func timing() async throws {
        let database = try await LiveDatabase.open(.memory)
        _ = try await database.execute("CREATE TABLE t(x)")
        let clock = ManualClock()
        let events = Broadcaster<LiveQueryEvent>()
        let recorder = StreamRecorder(events.subscribe())
        let scheduler = RefreshScheduler(
            reader: database.live.reader, tracer: StatementTracer(), events: events, interest: Interest(),
            options: LiveQueryOptions(coalescingWindow: .seconds(10)), clock: clock)
        _ = try await scheduler.register(name: "n", definition: LiveQueryDefinition(sql: "SELECT count(*) FROM t"))
        var refreshes = scheduler.refreshes.makeAsyncIterator()
        var wakes = scheduler.wakes.makeAsyncIterator()

        // Leading edge: the first change is refreshed at once.
        _ = try await database.execute("INSERT INTO t VALUES (1)")
        await scheduler.handle(.local([.insert(tableName: "t")]))
        let first = try #require(await refreshes.next())
        #expect(first.values.map(\.events) == [1])
        await scheduler.refresh(first)
        #expect(await wakes.next() == ManualInstant(offset: .seconds(10)))
        try await recorder.wait("the first change") { $0.count == 1 }

        // Within the window: changes only mark the query pending.
        for value in 2...4 {
            _ = try await database.execute("INSERT INTO t VALUES (\(value))")
            await scheduler.handle(.local([.insert(tableName: "t")]))
        }
        clock.advance(by: .seconds(9))
        await scheduler.timerDidFire()
        #expect(await scheduler.pendingEvents == [3])

        // The window is over: one refresh covers the three changes.
        clock.advance(by: .seconds(1))
        await scheduler.timerDidFire()
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
        await scheduler.shutdown()
        await database.close()
    }
}
