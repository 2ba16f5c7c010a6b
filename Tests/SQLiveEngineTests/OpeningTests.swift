import Foundation
import GRDB
import SQLiveTestSupport
import Testing

@testable import SQLiveEngine

@Suite("Opening databases", .timeLimit(.minutes(5)))
struct OpeningTests {
    @Test("A file path is created when missing, and reports version and journal mode")
    func filePath() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("new.sqlite")
        let database = try await LiveDatabase.open(.file(path))
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(database.info.sqliteVersion.hasPrefix("3."))
        #expect(database.info.journalMode == "delete")
        #expect(database.info.readonly == false)
        #expect(database.writer is DatabaseQueue)
        await database.close()
    }

    @Test("Opening a WAL database whose -wal is empty writes nothing to it")
    func walOpensWithoutWriting() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("wal.sqlite")
        try await SQLite3CLI.run(path, "PRAGMA journal_mode=WAL; CREATE TABLE t(x);")
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let database = try await LiveDatabase.open(.file(path))
        #expect(database.info.journalMode == "wal")
        _ = try await database.execute("SELECT count(*) FROM t")
        // GRDB's DatabasePool would have created and dropped a table here
        // (schema_version +2): the session is one connection.
        #expect(database.writer is DatabaseQueue)
        #expect(FileManager.default.contents(atPath: path + "-wal")?.count == 0)
        await database.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test("Opening a rollback-journal database leaves its journal mode alone")
    func journalModeKept() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("delete.sqlite")
        try await SQLite3CLI.run(path, "CREATE TABLE t(x);")
        let database = try await LiveDatabase.open(.file(path))
        _ = try await database.execute("INSERT INTO t VALUES (1)")
        await database.close()
        #expect(try await SQLite3CLI.run(path, "PRAGMA journal_mode;") == "delete\n")
    }

    @Test("A file: URI opens the file it names, with its parameters")
    func uri() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("uri db.sqlite")
        try await SQLite3CLI.run(path, "CREATE TABLE t(x); INSERT INTO t VALUES (42);")
        let escaped = path.replacingOccurrences(of: " ", with: "%20")
        let database = try await LiveDatabase.open(DatabaseLocation("file:\(escaped)?mode=ro"))
        #expect(database.info.readonly)
        let results = try await database.execute("SELECT x FROM t")
        #expect(results[0].rows == [[.integer(42)]])
        await database.close()
    }

    @Test("immutable=1: a WAL database is read, a live query works, and no -shm or -wal appears")
    func immutableURI() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("wal.sqlite")
        try await SQLite3CLI.run(path, "PRAGMA journal_mode=WAL; CREATE TABLE t(x); INSERT INTO t VALUES (7);")
        // The shell's last close checkpointed and removed them.
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        let database = try await LiveDatabase.open(DatabaseLocation("file:\(path)?immutable=1"))
        #expect(try await database.execute("SELECT x FROM t")[0].rows == [[.integer(7)]])
        let snapshot = try await database.directory.register(name: "q", LiveQueryDefinition(sql: "SELECT x FROM t"))
        #expect(snapshot.result.rows == [[.integer(7)]])
        #expect(await database.directory.list().map(\.name) == ["q"])
        #expect(!FileManager.default.fileExists(atPath: path + "-shm"))
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        await database.close()
        #expect(!FileManager.default.fileExists(atPath: path + "-shm"))
    }

    @Test("No name and :memory: open a private in-memory database")
    func memory() async throws {
        #expect(DatabaseLocation(nil) == .memory)
        #expect(DatabaseLocation(":memory:") == .memory)
        let database = try await LiveDatabase.open(.memory)
        _ = try await database.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        let results = try await database.execute("SELECT count(*) FROM t")
        #expect(results[0].rows == [[.integer(1)]])
        await database.close()
    }

    @Test("Read-only: writes fail clearly and the file is never modified")
    func readonly() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("ro.sqlite")
        try await SQLite3CLI.run(path, "CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let database = try await LiveDatabase.open(.file(path), options: .init(readonly: true))
        #expect(database.info.readonly)
        let failure = await #expect(throws: ScriptFailure.self) {
            try await database.execute("INSERT INTO t VALUES (2)")
        }
        #expect(failure?.failure.code == 8)  // SQLITE_READONLY
        #expect(failure?.failure.message.contains("readonly") == true)
        let results = try await database.execute("SELECT count(*) FROM t")
        #expect(results[0].rows == [[.integer(1)]])
        await database.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(files == ["ro.sqlite"])
    }

    @Test("Read-only: a missing file is an error and is not created")
    func readonlyMissing() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("missing.sqlite")
        let error = await #expect(throws: SQLiveError.self) {
            try await LiveDatabase.open(.file(path), options: .init(readonly: true))
        }
        #expect(error?.description.contains("no such file") == true)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("A directory is an error")
    func directoryIsError() async throws {
        let directory = try TemporaryDirectory()
        let error = await #expect(throws: SQLiveError.self) {
            try await LiveDatabase.open(.file(directory.url.path))
        }
        #expect(error?.description.contains("is a directory") == true)
    }

    @Test("A file that is not a database is an error, and is left untouched")
    func notADatabase() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.txt")
        let text = String(repeating: "These are not the bytes of a SQLite database.\n", count: 200)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let error = await #expect(throws: SQLiveError.self) {
            try await LiveDatabase.open(.file(path))
        }
        #expect(error?.description.contains("file is not a database") == true)
        #expect(error?.sqliteFailure?.code == 26)  // SQLITE_NOTADB
        #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
    }

    @Test("A corrupt database is an error")
    func corrupt() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("corrupt.sqlite")
        try await SQLite3CLI.run(path, "CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        // Keep the header, scribble over the schema page.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seek(toOffset: 100)
        handle.write(Data(repeating: 0xA5, count: 3900))
        try handle.close()
        let error = await #expect(throws: SQLiveError.self) {
            try await LiveDatabase.open(.file(path))
        }
        let code = error?.sqliteFailure?.code
        #expect(code == 11 || code == 26)  // SQLITE_CORRUPT or SQLITE_NOTADB
        #expect(error?.description.contains(path) == true)
    }

    @Test("A database locked by another process is an error after the busy timeout")
    func locked() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("locked.sqlite")
        try await SQLite3CLI.run(path, "CREATE TABLE t(x);")
        let holder = try SQLite3CLI.Session(path)
        holder.send("BEGIN EXCLUSIVE; INSERT INTO t VALUES (1);")
        await holder.sync()
        let error = await #expect(throws: SQLiveError.self) {
            try await LiveDatabase.open(.file(path), options: .init(busyTimeout: .milliseconds(300)))
        }
        #expect(error?.description.contains("database is locked") == true)
        holder.send("COMMIT;")
        await holder.finish()
        let database = try await LiveDatabase.open(.file(path))
        #expect(try await database.execute("SELECT count(*) FROM t")[0].rows == [[.integer(1)]])
        await database.close()
    }
}
