import Testing

@testable import SQLiveEngine

/// A manual instant: tests move time by hand, no sleeping.
struct ManualInstant: InstantProtocol, CustomStringConvertible {
    var offset: Duration

    func advanced(by duration: Duration) -> ManualInstant { ManualInstant(offset: offset + duration) }
    func duration(to other: ManualInstant) -> Duration { other.offset - offset }
    static func < (lhs: ManualInstant, rhs: ManualInstant) -> Bool { lhs.offset < rhs.offset }
    static func ms(_ value: Int) -> ManualInstant { ManualInstant(offset: .milliseconds(value)) }
    var description: String { "\(offset)" }
}

@Suite("Coalescing decisions")
struct CoalescingStateMachineTests {
    typealias Machine = CoalescingStateMachine<String, ManualInstant>

    @Test("The first change after a quiet spell refreshes at once")
    func leadingEdge() {
        var machine = Machine(window: .milliseconds(15))
        #expect(
            machine.keysDidChange(["a"], cause: .local, at: .ms(0)) == .refresh(["a": .init(events: 1, cause: .local)]))
        #expect(machine.phase == .refreshing)
    }

    @Test("Changes during a refresh and its window make one refresh after the window")
    func coalescing() {
        var machine = Machine(window: .milliseconds(15))
        _ = machine.keysDidChange(["a"], cause: .local, at: .ms(0))
        #expect(machine.keysDidChange(["a"], cause: .local, at: .ms(1)) == .none)
        #expect(machine.keysDidChange(["b"], cause: .external, at: .ms(2)) == .none)
        #expect(machine.refreshDidFinish(at: .ms(5)) == .wake(at: .ms(20)))
        #expect(machine.keysDidChange(["a"], cause: .external, at: .ms(10)) == .none)
        #expect(machine.timerDidFire(at: .ms(19)) == .none)  // early timer: ignored
        #expect(
            machine.timerDidFire(at: .ms(20))
                == .refresh(["a": .init(events: 2, cause: .external), "b": .init(events: 1, cause: .external)]))
    }

    @Test("A presumed external change does not make a pending change of sqlive's own external")
    func presumedCause() {
        var machine = Machine(window: .milliseconds(15))
        _ = machine.keysDidChange(["a"], cause: .local, at: .ms(0))
        #expect(machine.refreshDidFinish(at: .ms(1)) == .wake(at: .ms(16)))
        _ = machine.keysDidChange(["a", "b"], cause: .local, at: .ms(2))
        _ = machine.keysDidChange(["a", "c"], cause: .external, keepsPendingCause: true, at: .ms(3))
        #expect(
            machine.timerDidFire(at: .ms(16))
                == .refresh([
                    "a": .init(events: 2, cause: .local), "b": .init(events: 1, cause: .local),
                    "c": .init(events: 1, cause: .external),
                ]))
    }

    @Test("A quiet window returns to idle, and the next change is a leading edge again")
    func quiet() {
        var machine = Machine(window: .milliseconds(15))
        _ = machine.keysDidChange(["a"], cause: .local, at: .ms(0))
        _ = machine.refreshDidFinish(at: .ms(3))
        #expect(machine.timerDidFire(at: .ms(18)) == .none)
        #expect(machine.phase == .idle)
        #expect(machine.keysDidChange(["a"], cause: .local, at: .ms(100)) != .none)
    }

    @Test("A change after the window ended but before the timer fired refreshes at once")
    func lateTimer() {
        var machine = Machine(window: .milliseconds(15))
        _ = machine.keysDidChange(["a"], cause: .local, at: .ms(0))
        _ = machine.refreshDidFinish(at: .ms(1))
        #expect(
            machine.keysDidChange(["a"], cause: .local, at: .ms(30)) == .refresh(["a": .init(events: 1, cause: .local)])
        )
    }

    @Test("A steady stream of changes cannot postpone refreshes forever")
    func noStarvation() {
        var machine = Machine(window: .milliseconds(15))
        var refreshes = 0
        var now = 0
        var wake: ManualInstant?
        // A change every millisecond for one second; refreshes take 2 ms.
        var refreshEnds: Int?
        while now < 1000 {
            if let end = refreshEnds, now >= end {
                refreshEnds = nil
                if case .wake(let at) = machine.refreshDidFinish(at: .ms(now)) { wake = at }
            }
            if let at = wake, ManualInstant.ms(now) >= at {
                wake = nil
                if case .refresh = machine.timerDidFire(at: .ms(now)) {
                    refreshes += 1
                    refreshEnds = now + 2
                }
            }
            if case .refresh = machine.keysDidChange(["a"], cause: .external, at: .ms(now)) {
                refreshes += 1
                refreshEnds = now + 2
            }
            now += 1
        }
        // About one refresh per 17 ms, never none.
        #expect(refreshes > 50 && refreshes < 70, "refreshes: \(refreshes)")
    }

    @Test("Forgotten keys are not refreshed")
    func forget() {
        var machine = Machine(window: .milliseconds(15))
        _ = machine.keysDidChange(["a"], cause: .local, at: .ms(0))
        _ = machine.keysDidChange(["b"], cause: .local, at: .ms(1))
        machine.forget("b")
        _ = machine.refreshDidFinish(at: .ms(2))
        #expect(machine.timerDidFire(at: .ms(17)) == .none)
        #expect(machine.phase == .idle)
    }
}
