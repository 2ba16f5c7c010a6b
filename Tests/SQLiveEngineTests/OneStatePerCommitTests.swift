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

        let consumer = Self.screens(events, shown: ["a": 100, "b": 0]) { shown in
            (
                shown["a"]! + shown["b"]! == 100 ? nil : "a \(shown["a"]!), b \(shown["b"]!)",
                shown["b"] == Int64(Self.commits)
            )
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
        #expect(outOfStep.isEmpty, "\(outOfStep.count) of \(states) states showed a and b from different commits")
        // How many states were shown depends on coalescing (a loaded
        // machine may see the 300 commits as a few); the last one is the
        // final commit's, or the consumer would not have ended.
        await database.close()
    }

    /// A commit that writes only some tables, read by a refresh together
    /// with the next commit, which writes others: the live queries of the
    /// others must be in that refresh too, or the screen shows the first
    /// query at the later commit and the others before it. Each commit
    /// inserts a `tick` row (its number); every fifth also inserts into
    /// `g`: a state whose clock says n shows `count(*)` of g at n.
    @Test(arguments: JournalMode.allCases)
    func aCommitReadWithTheNextOneRefreshesItsQueriesToo(mode: JournalMode) async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(
            in: directory, mode: mode,
            "CREATE TABLE tick(id INTEGER PRIMARY KEY); CREATE TABLE g(x); INSERT INTO tick VALUES (0);")
        let database = try await LiveDatabase.open(.file(path))
        let events = database.sessionEvents()
        _ = try await database.directory.register(name: "clock", LiveQueryDefinition(sql: "SELECT max(id) FROM tick"))
        _ = try await database.directory.register(name: "g", LiveQueryDefinition(sql: "SELECT count(*) FROM g"))
        let commits = 400
        let consumer = Self.screens(events, shown: ["clock": 0, "g": 0]) { shown in
            (
                shown["g"]! == shown["clock"]! / 5 ? nil : "clock \(shown["clock"]!), g \(shown["g"]!)",
                shown["clock"] == Int64(commits)
            )
        }
        let script = """
            import sqlite3, time
            c = sqlite3.connect('\(path)', isolation_level=None)
            for i in range(1, \(commits) + 1):
                c.execute("BEGIN")
                c.execute("INSERT INTO tick VALUES (?)", (i,))
                if i % 5 == 0:
                    c.execute("INSERT INTO g VALUES (?)", (i,))
                c.execute("COMMIT")
                time.sleep(0.004)
            """
        let outcome = try await Launcher.run("/usr/bin/env", ["python3", "-c", script])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let (outOfStep, states) = try await withTimeout(.seconds(120)) { await consumer.value }
        if mode == .wal {
            #expect(outOfStep.isEmpty, "\(outOfStep.count) of \(states) states out of step: \(outOfStep.prefix(5))")
        } else {
            // Known, not fixed (issue #55, item 5): in a rollback-journal
            // file a batch run again — kept states not yet read, commits
            // read together — reads a snapshot that may hold a commit whose
            // tables the batch was not told; its other queries then show
            // the commit before (about 1 run in 4 here).
            withKnownIssue("a batch run again reads past the commits it was made of", isIntermittent: true) {
                #expect(
                    outOfStep.isEmpty, "\(outOfStep.count) of \(states) states out of step: \(outOfStep.prefix(5))")
            }
        }
        await database.close()
    }

    /// Reads the session's events as a front end draws them — each element
    /// whole, one change or a batch — keeping each live query's first
    /// value; after each, `judge` says what is wrong with that screen (if
    /// anything) and whether it is the last. Returns the screens found
    /// wrong and how many were drawn.
    private static func screens(
        _ events: AsyncStream<SessionEvent>, shown initial: [String: Int64],
        judge: @escaping @Sendable ([String: Int64]) -> (wrong: String?, last: Bool)
    ) -> Task<(outOfStep: [String], states: Int), Never> {
        Task {
            var shown = initial
            var outOfStep: [String] = []
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
                let (wrong, last) = judge(shown)
                if let wrong { outOfStep.append(wrong) }
                if last { break }
            }
            return (outOfStep, states)
        }
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
