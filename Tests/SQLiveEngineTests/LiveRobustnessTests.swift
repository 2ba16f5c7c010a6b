import Foundation
import GRDB
import SQLiveTestSupport
import Testing

@testable import SQLiveEngine

@Suite("Live queries: every refresh ends, everything started is owned")
struct LiveRobustnessTests {
    /// Failures GRDB's `read` can throw before it runs its closure.
    enum Fault: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case closedConnection = "a closed connection"
        case failedBegin = "a failed BEGIN"
        case locked = "a lock held past the busy timeout"
        case cancelled = "a cancellation"

        var testDescription: String { rawValue }

        var error: any Error {
            switch self {
            case .closedConnection: DatabaseError(resultCode: .SQLITE_MISUSE, message: "Connection is closed")
            case .failedBegin: DatabaseError(resultCode: .SQLITE_IOERR, message: "disk I/O error")
            case .locked: DatabaseError(resultCode: .SQLITE_BUSY, message: "database is locked")
            case .cancelled: CancellationError()
            }
        }

        /// Whether the refresh is retried by itself (else the error is delivered).
        var isRetried: Bool { self == .locked || self == .cancelled }
    }

    @Test(
        "A read that throws before its closure ends the refresh; the queries are served afterwards",
        arguments: Fault.allCases)
    func failingRead(fault: Fault) async throws {
        let directory = try TemporaryDirectory()
        // Every refresh reads on the live queries' connection, where the
        // fault is: none is read at the commit (LocalPrefetch), none is kept
        // from rows (MaintainedState).
        let database = try await LiveDatabase.open(
            .file(try await makeDatabaseFile(in: directory, mode: .wal, playersSchema)),
            options: .init(
                liveQueries: LiveQueryOptions(
                    safetyPollInterval: .seconds(3600), readAtCommitLimit: nil, maintainsFromRows: false)))
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "n", LiveQueryDefinition(sql: "SELECT count(*) FROM players"))
        _ = try await database.directory.register(name: "g", LiveQueryDefinition(sql: "SELECT count(*) FROM games"))
        let error = fault.error
        database.live.reader.injectFault { throw error }
        _ = try await database.execute("INSERT INTO players(gameID, name) VALUES (1, 'X')")
        if fault.isRetried {
            // Retried each window while it lasts: nothing is delivered, nothing hangs.
            try await Task.sleep(for: .milliseconds(150))
            #expect(recorder.all.isEmpty)
        } else {
            try await recorder.wait("the error") { _ in !recorder.failures("n").isEmpty }
            #expect(recorder.failures("n").first?.description == "\(SQLiveError.wrap(error))")
        }
        database.live.reader.injectFault(nil)
        if !fault.isRetried {
            _ = try await database.execute("INSERT INTO players(gameID, name) VALUES (1, 'Y')")
        }
        try await recorder.waitForRows("n") { $0 == [[.integer(fault.isRetried ? 5 : 6)]] }
        // The scheduler is not stuck: a later change reaches another query.
        _ = try await database.execute("INSERT INTO games(title) VALUES ('Chess')")
        try await recorder.waitForRows("g") { $0 == [[.integer(3)]] }
        await database.close()
    }

    @Test("A database dropped without close stops its thread and its run loop")
    func droppedWithoutClose() async throws {
        let directory = try TemporaryDirectory()
        weak var center: LiveQueryCenter?
        do {
            let database = try await LiveDatabase.open(
                .file(try await makeDatabaseFile(in: directory, mode: .wal, playersSchema)))
            _ = try await database.directory.register(
                name: "n", LiveQueryDefinition(sql: "SELECT count(*) FROM players"))
            center = database.live
        }
        let deadline = ContinuousClock.now + .seconds(20)
        while center != nil && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(center == nil)
    }

    @Test("A database that fails to open leaks no descriptor")
    func failedOpen() async throws {
        let directory = try TemporaryDirectory()
        let before = openDescriptors(under: directory.url.path)
        // A file that is not a database fails at once.
        let garbage = directory.path("garbage.sqlite")
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: garbage))
        for _ in 0..<5 {
            await #expect(throws: SQLiveError.self) { try await LiveDatabase.open(.file(garbage)) }
        }
        #expect(openDescriptors(under: directory.url.path) == before)
    }
}

/// The descriptors of this process open on files under a directory.
func openDescriptors(under directory: String) -> Int {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return entries.filter { entry in
        let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)")) ?? ""
        return target.hasPrefix(directory)
    }.count
}
