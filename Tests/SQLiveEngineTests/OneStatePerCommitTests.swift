import Foundation
import SQLiveTestSupport
import Testing

@testable import SQLiveEngine

/// One commit, one state on every screen (issue #41): the refreshes a
/// commit causes are read from one snapshot and delivered together, so a
/// front end never shows two live queries from different commits.
///
/// The writer keeps an invariant: each transaction moves one unit from
/// table `a` to table `b`, so `a + b` is always 100. A consumer of
/// `sessionEvents()` (as the REPL's panel and the server consume it) takes
/// each element whole — one change, or a batch — and checks the sum after
/// each: a screen drawn between two elements would show it. The writer is
/// another process at its defaults (Python's `sqlite3`), or the session
/// itself.
@Suite("One commit, one state", .timeLimit(.minutes(5)))
struct OneStatePerCommitTests {
    enum Writer: String, CaseIterable, CustomTestStringConvertible {
        case otherProcess = "another process"
        case session = "the session"
        var testDescription: String { rawValue }
    }

    static let commits = 300

    @Test(arguments: JournalMode.allCases, Writer.allCases)
    func twoLiveQueriesNeverShowTwoCommits(mode: JournalMode, writer: Writer) async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(
            in: directory, mode: mode,
            "CREATE TABLE a(v INTEGER); CREATE TABLE b(v INTEGER); INSERT INTO a VALUES (100); INSERT INTO b VALUES (0);"
        )
        let database = try await LiveDatabase.open(.file(path))
        let events = database.sessionEvents()
        _ = try await database.directory.register(name: "a", LiveQueryDefinition(sql: "SELECT v FROM a"))
        _ = try await database.directory.register(name: "b", LiveQueryDefinition(sql: "SELECT v FROM b"))

        let consumer = Task { () -> (outOfStep: Int, states: Int) in
            var shown = ["a": Int64(100), "b": Int64(0)]
            var outOfStep = 0
            var states = 0
            for await event in events {
                let changes: [LiveQueryEvent]
                switch event {
                case .live(let live): changes = [live]
                case .liveBatch(let batch): changes = batch
                case .trace: continue
                }
                for case .changed(let change) in changes {
                    if case .integer(let value)? = change.result.rows.first?.first { shown[change.name] = value }
                }
                states += 1
                if shown["a"]! + shown["b"]! != 100 { outOfStep += 1 }
                if shown["b"] == Int64(Self.commits) { break }
            }
            return (outOfStep, states)
        }
        let move = "BEGIN; UPDATE a SET v = v - 1; UPDATE b SET v = v + 1; COMMIT;"
        switch writer {
        case .otherProcess:
            let script = """
                import sqlite3, time
                c = sqlite3.connect('\(path)')
                for i in range(\(Self.commits)):
                    c.executescript("\(move)")
                    time.sleep(0.002)
                """
            let outcome = try await Launcher.run("/usr/bin/env", ["python3", "-c", script])
            #expect(outcome.status == 0, "\(outcome.stderr)")
        case .session:
            for _ in 0..<Self.commits {
                _ = try await database.execute(move)
                try await Task.sleep(for: .milliseconds(2))
            }
        }
        let (outOfStep, states) = try await withTimeout(.seconds(120)) { await consumer.value }
        #expect(outOfStep == 0, "\(outOfStep) of \(states) states showed a and b from different commits")
        // How many states were shown depends on coalescing (a loaded
        // machine may see the 300 commits as a few); the last one is the
        // final commit's, or the consumer would not have ended.
        await database.close()
    }

    private func withTimeout<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async -> T) async throws
        -> T
    {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { await body() }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            guard let first = try await group.next(), let value = first else {
                group.cancelAll()
                throw CancellationError()
            }
            group.cancelAll()
            return value
        }
    }
}
