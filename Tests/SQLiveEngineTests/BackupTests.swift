import Foundation
import SQLiveTestSupport
import Testing

@testable import SQLiveEngine

/// `.backup` (`LiveDatabase.backup`): a finished copy stands alone, with no
/// `-wal`, `-shm` or journal beside it, whatever the source's journal mode;
/// a copy that fails leaves nothing, neither the temporary file nor its
/// journal. Each case lists the directory before and after.
@Suite("Backups leave only the copy", .timeLimit(.minutes(2)))
struct BackupTests {
    static func files(in directory: TemporaryDirectory) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: directory.url.path)) ?? [])
    }

    static func source(mode: String) async throws -> (TemporaryDirectory, LiveDatabase) {
        let directory = try TemporaryDirectory()
        let path = directory.path("source.sqlite")
        try await SQLite3CLI.run(
            path,
            """
            PRAGMA journal_mode = \(mode);
            CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);
            WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 2000)
            INSERT INTO t(v) SELECT hex(randomblob(100)) FROM c;
            """)
        let database = try await LiveDatabase.open(.file(path))
        return (directory, database)
    }

    @Test("A finished copy has no -wal, -shm or journal beside it", arguments: ["wal", "delete"])
    func finishedCopy(mode: String) async throws {
        let (directory, database) = try await Self.source(mode: mode)
        let target = try TemporaryDirectory()
        let copy = target.path("copy.sqlite")
        try database.backup(schema: "main", to: copy)
        #expect(Self.files(in: target) == ["copy.sqlite"])
        // Nothing of the copy beside the source either.
        #expect(Self.files(in: directory).allSatisfy { $0.hasPrefix("source.sqlite") }, "\(Self.files(in: directory))")
        // The copy is whole, and says the source's journal mode, as sqlite3's `.backup` makes it.
        let check = try await SQLite3CLI.run(copy, "PRAGMA integrity_check; SELECT count(*) FROM t;")
        #expect(check == "ok\n2000\n")
        let header = try #require(FileManager.default.contents(atPath: copy))
        #expect(Array(header[18...19]) == (mode == "wal" ? [2, 2] : [1, 1]))
        // Over an existing file: replaced, still alone.
        try database.backup(schema: "main", to: copy)
        #expect(Self.files(in: target) == ["copy.sqlite"])
        await database.close()
    }

    @Test("A copy that fails leaves nothing", arguments: ["wal", "delete"])
    func failedCopy(mode: String) async throws {
        let (directory, database) = try await Self.source(mode: mode)
        let target = try TemporaryDirectory()
        // Made whole, then the rename fails: the name is a directory with a file in it.
        let taken = target.path("taken")
        try FileManager.default.createDirectory(atPath: taken, withIntermediateDirectories: false)
        FileManager.default.createFile(atPath: taken + "/keep", contents: Data("x".utf8))
        let before = Self.files(in: target)
        #expect(throws: LiveDatabase.CopyFailure.self) { try database.backup(schema: "main", to: taken) }
        #expect(Self.files(in: target) == before)
        // The schema does not exist: SQLite refuses to start the copy.
        #expect(throws: LiveDatabase.CopyFailure.self) {
            try database.backup(schema: "nosuch", to: target.path("copy.sqlite"))
        }
        #expect(Self.files(in: target) == before)
        // A directory that does not exist: nothing is made anywhere.
        #expect(throws: LiveDatabase.CopyFailure.self) {
            try database.backup(schema: "main", to: target.path("missing/copy.sqlite"))
        }
        #expect(Self.files(in: target) == before)
        #expect(Self.files(in: directory).allSatisfy { $0.hasPrefix("source.sqlite") }, "\(Self.files(in: directory))")
        await database.close()
    }
}
