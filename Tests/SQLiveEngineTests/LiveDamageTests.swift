import Foundation
import SQLiveTestSupport
import Testing

@testable import SQLiveEngine

@Suite("Live queries: a database file damaged in place")
struct LiveDamageTests {
    /// Ways a file gets damaged under sqlive, each written from outside SQLite.
    enum Damage: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case header = "its first pages overwritten"
        case innerPages = "pages in the middle overwritten"
        case truncated = "cut short"

        var testDescription: String { rawValue }

        /// SQLite's code for what a reader finds.
        var code: Int32 { self == .header ? 26 : 11 }

        func apply(to path: String) throws {
            let file = try FileHandle(forUpdating: URL(fileURLWithPath: path))
            defer { try? file.close() }
            let garbage = Data(repeating: 0xA5, count: 2 * 4096)
            switch self {
            case .header:
                try file.write(contentsOf: garbage)
            case .innerPages:
                try file.seek(toOffset: 3 * 4096)
                try file.write(contentsOf: garbage)
            case .truncated:
                try file.truncate(atOffset: 3 * 4096)
            }
        }
    }

    /// How the watcher learns that the file was written: inotify, or only
    /// the file's modification time — in its first moments, before it makes
    /// its inotify descriptor, and for good when inotify is refused (the
    /// per-user limit on instances is reached) or polling was asked for.
    enum Detection: String, CaseIterable, Sendable {
        case inotify
        case beforeInotify = "before inotify"
        case polling

        var options: LiveDatabase.Options {
            switch self {
            case .inotify, .beforeInotify: noSafetyPoll
            case .polling:
                LiveDatabase.Options(liveQueries: LiveQueryOptions(externalDetection: .polling(.milliseconds(100))))
            }
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var mode: JournalMode
        var damage: Damage
        var detection: Detection
        var testDescription: String { "\(mode.rawValue), \(damage.rawValue), \(detection.rawValue)" }
    }

    static let cases = JournalMode.allCases.flatMap { mode in
        Damage.allCases.flatMap { damage in Detection.allCases.map { Case(mode: mode, damage: damage, detection: $0) } }
    }

    @Test(
        "Every live query fails at once, and recovers by itself when the file is restored in place",
        arguments: cases)
    func damagedAndRestored(_ test: Case) async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(
            in: directory, mode: test.mode,
            """
            CREATE TABLE t(x INTEGER, padding TEXT);
            WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000)
            INSERT INTO t SELECT x, printf('%040d', x) FROM c;
            """)
        let backup = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(backup.count >= 8 * 4096)
        let database = try await LiveDatabase.open(.file(path), options: test.detection.options)
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "count", LiveQueryDefinition(sql: "SELECT count(*) FROM t"))
        _ = try await database.directory.register(name: "sum", LiveQueryDefinition(sql: "SELECT sum(x) FROM t"))

        if test.detection == .inotify {
            try await Task.sleep(for: ExternalChangeWatcher.inotifyDelay * 3)
        }
        try test.damage.apply(to: path)
        try await recorder.wait("an error for each query") { _ in
            !recorder.failures("count").isEmpty && !recorder.failures("sum").isEmpty
        }
        for name in ["count", "sum"] {
            #expect(recorder.failures(name).last?.sqliteFailure?.code == test.damage.code)
            #expect(recorder.changes(name).isEmpty)
        }
        if test.damage == .header {
            try await recorder.wait("the damage reported") { events in
                events.contains {
                    if case .databaseFileChanged(let change) = $0 { change.reason == .damaged } else { false }
                }
            }
        }

        // Restored in place, as `cp backup.sqlite games.sqlite` does.
        let file = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try file.write(contentsOf: backup)
        try file.close()
        try await recorder.waitForRows("count") { $0 == [[.integer(2000)]] }
        try await recorder.waitForRows("sum") { $0 == [[.integer(2001 * 1000)]] }
        await database.close()
    }

    /// An empty file is an empty database to SQLite, so reading one that
    /// was cut to 0 bytes says "no such table"; the watcher says what it
    /// is: the file that held pages is damaged, until it holds some again.
    @Test("A file cut to 0 bytes is reported damaged, and repaired when restored", arguments: JournalMode.allCases)
    func emptied(mode: JournalMode) async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(
            in: directory, mode: mode, "CREATE TABLE t(x); INSERT INTO t VALUES (1), (2);")
        let backup = try Data(contentsOf: URL(fileURLWithPath: path))
        let database = try await LiveDatabase.open(.file(path), options: Detection.polling.options)
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "count", LiveQueryDefinition(sql: "SELECT count(*) FROM t"))
        let file = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try file.truncate(atOffset: 0)
        try await recorder.wait("the damage reported") { events in
            events.contains {
                if case .databaseFileChanged(let change) = $0 {
                    change.reason == .damaged && change.message.contains("cut to 0 bytes")
                } else {
                    false
                }
            }
        }
        try await recorder.wait("the query's error says so") { _ in
            recorder.failures("count").last?.sqliteFailure?.code == 11
        }
        try file.write(contentsOf: backup)
        try file.close()
        try await recorder.wait("the repair reported") { events in
            events.contains {
                if case .databaseFileChanged(let change) = $0 { change.reason == .repaired } else { false }
            }
        }
        try await recorder.waitForRows("count") { $0 == [[.integer(2)]] }
        await database.close()
    }

    /// `chmod` changes no data and no identity: it is reported for what it
    /// is, with the mode, and the open connections go on.
    @Test("A change of the file's permissions is reported as such")
    func permissionsChanged() async throws {
        let directory = try TemporaryDirectory()
        let path = try await makeDatabaseFile(in: directory, mode: .wal, "CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        let database = try await LiveDatabase.open(.file(path), options: Detection.polling.options)
        let recorder = EventRecorder(database)
        _ = try await database.directory.register(name: "count", LiveQueryDefinition(sql: "SELECT count(*) FROM t"))
        #expect(chmod(path, 0) == 0)
        defer { _ = chmod(path, 0o644) }
        try await recorder.wait("the change reported") { events in
            events.contains {
                if case .databaseFileChanged(let change) = $0 {
                    change.reason == .permissionsChanged && change.message.contains("permissions changed to 0000")
                } else {
                    false
                }
            }
        }
        _ = try await database.execute("INSERT INTO t VALUES (2)")
        try await recorder.waitForRows("count") { $0 == [[.integer(2)]] }
        await database.close()
    }

    @Test("The header check: a sound file, an empty one, garbage, damaged fields, a short file")
    func headerAssessment() throws {
        var header = [UInt8](repeating: 0, count: 100)
        header.replaceSubrange(0..<16, with: Array("SQLite format 3\0".utf8))
        header[16] = 0x10  // 4096-byte pages
        header[18] = 1
        header[19] = 1
        header[21] = 64
        header[22] = 32
        header[23] = 32
        header[27] = 7  // change counter 7
        header[31] = 4  // 4 pages
        header[95] = 7  // valid for change counter 7
        #expect(DatabaseHeader.assess(header, fileSize: 4 * 4096) == nil)
        #expect(DatabaseHeader.assess([], fileSize: 0) == nil)
        #expect(DatabaseHeader.assess(header, fileSize: 3 * 4096)?.code == 11)
        #expect(DatabaseHeader.assess(header, fileSize: 3 * 4096, checkSize: false) == nil)
        var stale = header
        stale[95] = 6  // the page count is not valid: the size is not checked
        #expect(DatabaseHeader.assess(stale, fileSize: 3 * 4096) == nil)
        #expect(DatabaseHeader.assess(Array(header[0..<50]), fileSize: 50)?.code == 26)
        var garbage = header
        garbage[3] = 0xA5
        #expect(DatabaseHeader.assess(garbage, fileSize: 4 * 4096)?.code == 26)
        var badPageSize = header
        badPageSize[17] = 3
        #expect(DatabaseHeader.assess(badPageSize, fileSize: 4 * 4096)?.code == 26)
        var badFraction = header
        badFraction[21] = 63
        #expect(DatabaseHeader.assess(badFraction, fileSize: 4 * 4096)?.code == 26)
    }

    @Test("Damage counts when seen twice, apart, with no writer at work; repair at once")
    func damageConfirmation() {
        let start = ContinuousClock.now
        let garbage = DataVersionProbe.FileState(
            header: [UInt8](repeating: 0xA5, count: 100), size: 8192, writerActive: false)
        var writing = garbage
        writing.writerActive = true
        let empty = DataVersionProbe.FileState(header: [], size: 0, writerActive: false)
        var check = DamageCheck()
        #expect(check.check(garbage, walSize: 0, at: start) == .suspected)
        #expect(check.check(garbage, walSize: 0, at: start + .milliseconds(50)) == .unchanged)
        #expect(check.check(writing, walSize: 0, at: start + .milliseconds(150)) == .unchanged)
        guard case .damaged(let failure) = check.check(garbage, walSize: 0, at: start + .milliseconds(150)) else {
            Issue.record("the damage was not confirmed")
            return
        }
        #expect(failure.code == 26)
        #expect(check.check(garbage, walSize: 0, at: start + .milliseconds(300)) == .unchanged)
        #expect(check.check(empty, walSize: 0, at: start + .milliseconds(400)) == .repaired)
        // A failure seen once, then gone, is never reported.
        #expect(check.check(garbage, walSize: 0, at: start + .milliseconds(500)) == .suspected)
        #expect(check.check(empty, walSize: 0, at: start + .milliseconds(700)) == .unchanged)
        #expect(check.check(garbage, walSize: 0, at: start + .milliseconds(800)) == .suspected)
    }
}
