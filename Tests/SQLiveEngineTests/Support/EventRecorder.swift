import Foundation
import SQLiveEngine
import SQLiveLocks

/// Collects the elements of an `AsyncStream` as they arrive, for assertions.
final class StreamRecorder<Element: Sendable>: Sendable {
    private final class Storage: Sendable {
        let elements = Locked<[Element]>([])
    }
    private let storage = Storage()
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<Element>) {
        let storage = storage
        task = Task {
            for await element in stream {
                storage.elements.withLock { $0.append(element) }
            }
        }
    }

    var all: [Element] { storage.elements.withLock { $0 } }

    /// Waits until the condition holds on the elements, or fails after the
    /// time-out (which only catches hangs).
    func wait(
        timeout: Duration = .seconds(20), _ description: String = "condition", until condition: ([Element]) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition(all) {
            guard ContinuousClock.now < deadline else {
                throw TimedOut(description: "timed out waiting for \(description); elements: \(all.count)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    deinit {
        task.cancel()
    }
}

/// A database's live-query events.
typealias EventRecorder = StreamRecorder<LiveQueryEvent>

/// A database's traced statements.
typealias TraceRecorder = StreamRecorder<TraceEvent>

extension StreamRecorder where Element == LiveQueryEvent {
    convenience init(_ database: LiveDatabase) {
        self.init(database.directory.events())
    }

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

    /// Waits until the latest delivered rows of a query satisfy the condition.
    func waitForRows(
        _ name: String, timeout: Duration = .seconds(20), _ condition: @escaping ([[SQLValue]]) -> Bool
    ) async throws {
        try await wait(timeout: timeout, "rows of \(name)") { events in
            let last = events.last { event in
                if case .changed(let change) = event { return change.name == name }
                return false
            }
            if case .changed(let change) = last { return condition(Array(change.result.rows)) }
            return false
        }
    }
}

extension StreamRecorder where Element == TraceEvent {
    convenience init(_ database: LiveDatabase) {
        self.init(database.traceEvents())
    }
}

struct TimedOut: Error, CustomStringConvertible {
    var description: String
}
