import Foundation
import SQLiveEngine
import Synchronization

/// Collects a database's live-query events as they arrive.
final class EventRecorder: Sendable {
    private final class Storage: Sendable {
        let events = Mutex<[LiveQueryEvent]>([])
    }
    private let storage = Storage()
    private let task: Task<Void, Never>

    init(_ database: LiveDatabase) {
        let stream = database.liveQueryEvents()
        let storage = storage
        task = Task {
            for await event in stream {
                storage.events.withLock { $0.append(event) }
            }
        }
    }

    var all: [LiveQueryEvent] { storage.events.withLock { $0 } }

    func changes(_ name: String) -> [LiveQueryChange] {
        all.compactMap {
            if case .changed(let change) = $0, change.name == name { return change }
            return nil
        }
    }

    func failures(_ name: String) -> [SQLiveError] {
        all.compactMap {
            if case .failed(let failed, let error) = $0, failed == name { return error }
            return nil
        }
    }

    /// Waits until the condition holds on the events, or fails after the
    /// time-out (which only catches hangs).
    func wait(
        timeout: Duration = .seconds(20), _ description: String = "condition",
        until condition: ([LiveQueryEvent]) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition(all) {
            guard ContinuousClock.now < deadline else {
                throw TimedOut(description: "timed out waiting for \(description); events: \(all.count)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits until the latest delivered rows of a query satisfy the condition.
    func waitForRows(
        _ name: String, timeout: Duration = .seconds(20), _ condition: @escaping ([[SQLValue]]) -> Bool
    ) async throws {
        try await wait(timeout: timeout, "rows of \(name)") { events in
            let last = events.last { event in
                if case .changed(let change) = event { return change.name == name }
                return false
            }
            if case .changed(let change) = last { return condition(change.result.rows) }
            return false
        }
    }

    deinit {
        task.cancel()
    }
}

struct TimedOut: Error, CustomStringConvertible {
    var description: String
}

/// Collects a database's traced statements as they arrive.
final class TraceRecorder: Sendable {
    private final class Storage: Sendable {
        let events = Mutex<[TraceEvent]>([])
    }
    private let storage = Storage()
    private let task: Task<Void, Never>

    init(_ database: LiveDatabase) {
        let stream = database.traceEvents()
        let storage = storage
        task = Task {
            for await event in stream {
                storage.events.withLock { $0.append(event) }
            }
        }
    }

    var all: [TraceEvent] { storage.events.withLock { $0 } }

    func wait(timeout: Duration = .seconds(20), until condition: ([TraceEvent]) -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition(all) {
            guard ContinuousClock.now < deadline else { throw TimedOut(description: "timed out waiting for trace") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    deinit {
        task.cancel()
    }
}
