import SQLiveLocks
import Testing

@testable import SQLiveRPC

@Suite("Request queue", .timeLimit(.minutes(1)))
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
        func wait() async {
            while !opened.withLock({ $0 }) {
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
    }

    @Test func serialRequestsRunInOrder() async {
        let queue = RequestQueue()
        let journal = Journal()
        for index in 0..<50 {
            queue.schedule(.serial) {
                if index % 7 == 0 { try? await Task.sleep(for: .milliseconds(1)) }
                journal.append("\(index)")
            }
        }
        #expect(await queue.waitForAll(timeout: .seconds(30)))
        #expect(journal.all == (0..<50).map(String.init))
    }

    @Test func concurrentRequestsOvertakeARunningStatement() async {
        let queue = RequestQueue()
        let journal = Journal()
        let gate = Gate()
        queue.schedule(.serial) {
            await gate.wait()
            journal.append("long query")
        }
        queue.schedule(.serial) { journal.append("next query") }
        let list = queue.schedule(.concurrent) { journal.append("list") }
        await list.value
        #expect(journal.all == ["list"])
        gate.open()
        #expect(await queue.waitForAll(timeout: .seconds(30)))
        #expect(journal.all == ["list", "long query", "next query"])
    }

    @Test func concurrentRequestsWaitForLiveQueryChangesAndBarriers() async {
        let queue = RequestQueue()
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
        let task = queue.schedule(.serial) {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
        queue.cancelAll()
        await task.value
        #expect(task.isCancelled)
    }
}
