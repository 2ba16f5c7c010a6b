import Foundation
import GRDB
import SQLiveLocks
import SQLiveTestSupport
import Testing

@testable import SQLiveEngine

@Suite("Was this commit the session's? The resolver's questions", .timeLimit(.minutes(5)))
struct ExternalCommitResolverTests {
    /// A database on a queue (the session's connection), a resolver over
    /// it, and a way to keep the connection busy.
    struct Fixture {
        let directory: TemporaryDirectory
        let path: String
        let queue: DatabaseQueue
        let resolver: ExternalCommitResolver<ContinuousClock>

        init(patience: Duration) throws {
            directory = try TemporaryDirectory()
            path = directory.path("db.sqlite")
            queue = try DatabaseQueue(path: path)
            try queue.write { db in try db.execute(sql: "CREATE TABLE a(x); CREATE TABLE b(x)") }
            resolver = ExternalCommitResolver(session: queue, clock: ContinuousClock(), patience: patience)
            try queue.writeWithoutTransaction { db in try resolver.prime("main", db) }
        }

        /// Occupies the session's connection until the returned semaphore is signalled.
        func occupy() -> DispatchSemaphore {
            let started = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let queue = queue
            Thread {
                try? queue.writeWithoutTransaction { _ in
                    started.signal()
                    release.wait()
                }
            }.start()
            started.wait()
            return release
        }

        /// Asks about two ambiguous changes (of tables a and b) while the
        /// connection is busy; `meanwhile` runs before the connection is
        /// free again. Returns what the resolver emitted once it is done.
        func resolveTwo(
            meanwhile: @escaping @Sendable (_ emitted: @escaping @Sendable () -> [Set<String>?]) async throws -> Void
        ) async throws -> [Set<String>?] {
            let emitted = Locked<[Set<String>?]>([])
            let emit: @Sendable (ChangeSignal) -> Void = { signal in
                switch signal {
                case .external(let tables), .presumedExternal(let tables): emitted.withLock { $0.append(tables) }
                default: break
                }
            }
            let release = occupy()
            // Ends when the resolver's children have.
            await withDiscardingTaskGroup { group in
                resolver.resolve("main", tables: ["a"], in: &group, emit: emit)
                resolver.resolve("main", tables: ["b"], in: &group, emit: emit)
                group.addTask {
                    try? await meanwhile { emitted.withLock { $0 } }
                    release.signal()
                }
            }
            return emitted.withLock { $0 }
        }
    }

    @Test("Two changes of the session's own, the second seen while the first's question waited: nothing external")
    func foldedLocalChanges() async throws {
        let fixture = try Fixture(patience: .seconds(60))
        let emitted = try await fixture.resolveTwo { _ in try await Task.sleep(for: .milliseconds(100)) }
        #expect(emitted.isEmpty)
    }

    @Test("Another process's commit while the question waited: one external change, covering both")
    func foldedWithExternalCommit() async throws {
        let fixture = try Fixture(patience: .seconds(60))
        let path = fixture.path
        let emitted = try await fixture.resolveTwo { _ in
            _ = try await SQLite3CLI.run(path, "INSERT INTO b VALUES (1);")
        }
        #expect(emitted == [["a", "b"]])
    }

    @Test("A session busy past the patience: one external change at once, nothing more after")
    func patienceRunsOut() async throws {
        let fixture = try Fixture(patience: .milliseconds(50))
        // The connection is freed once the change has been emitted.
        let emitted = try await fixture.resolveTwo { emitted in
            let deadline = ContinuousClock.now + .seconds(60)
            while emitted().isEmpty, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        #expect(emitted == [["a", "b"]])
    }
}
