import Foundation
import SQLiveTestSupport
import Testing

/// A look changes nothing: a session that only reads, through any front
/// end, leaves the database file, its `-wal` and its journal byte for byte
/// as they were (the `-shm` aside), in every journal mode, whether the
/// `-wal` is missing, empty or holds another process's commits. The real
/// binary over real pipes; the databases are left by a real second process
/// (Python's `sqlite3`, at its defaults).
@Suite("A look changes nothing", .timeLimit(.minutes(5)))
struct LookChangesNothingTests {
    /// How the file is left before sqlive looks at it.
    enum Fixture: String, CaseIterable, CustomStringConvertible {
        /// WAL mode, the `-wal` gone: the last writer closed cleanly.
        case walMissing
        /// WAL mode, an empty `-wal`: a writer checkpointed with TRUNCATE, then died.
        case walEmpty
        /// WAL mode, commits still in the `-wal`: a writer died before checkpointing.
        case walWithCommits
        /// SQLite's default rollback journal.
        case delete

        var description: String { rawValue }

        /// The Python a writer runs: it creates the file at `path`, then leaves it so.
        func script(_ path: String) -> String {
            let setUp = """
                import os, sqlite3
                c = sqlite3.connect('\(path)')
                c.execute('PRAGMA journal_mode=\(self == .delete ? "delete" : "wal")')
                c.execute('CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)')
                c.executemany('INSERT INTO t(name) VALUES (?)', [('a',), ('b',), ('c',)])
                c.commit()

                """
            switch self {
            case .walMissing, .delete:
                return setUp + "c.close()\n"
            case .walEmpty:
                return setUp + "c.execute('PRAGMA wal_checkpoint(TRUNCATE)')\nos._exit(0)\n"
            case .walWithCommits:
                return setUp + "c.execute('PRAGMA wal_checkpoint(TRUNCATE)')\n"
                    + "c.execute(\"INSERT INTO t(name) VALUES ('d')\")\nc.commit()\nos._exit(0)\n"
            }
        }
    }

    /// A front end, and what it is asked to do.
    enum FrontEnd: String, CaseIterable, CustomStringConvertible {
        case command, readonly, stdin, rpc, lsp, mcp
        var description: String { rawValue }
    }

    /// The bytes a look must leave alone: the file, the `-wal` and the
    /// journal (`nil` where there is none).
    struct Snapshot: Equatable, CustomStringConvertible {
        var database: Data?
        var wal: Data?
        var journal: Data?

        init(_ path: String) {
            database = FileManager.default.contents(atPath: path)
            wal = FileManager.default.contents(atPath: path + "-wal")
            journal = FileManager.default.contents(atPath: path + "-journal")
        }

        /// The schema cookie in the file's header (offset 40).
        var schemaVersion: UInt32? {
            guard let database, database.count >= 44 else { return nil }
            return database[40..<44].reduce(0) { $0 << 8 | UInt32($1) }
        }

        var description: String {
            "file \(database?.count ?? -1) B (schema_version \(schemaVersion ?? 0)), -wal \(wal.map { "\($0.count) B" } ?? "none"), -journal \(journal.map { "\($0.count) B" } ?? "none")"
        }
    }

    @Test(arguments: Fixture.allCases, FrontEnd.allCases)
    func aLookLeavesTheFileAsItWas(fixture: Fixture, frontEnd: FrontEnd) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        let setUp = directory.path("setup.py")
        try fixture.script(path).write(toFile: setUp, atomically: true, encoding: .utf8)
        _ = try await runCommand("/usr/bin/env", ["python3", setUp])
        switch fixture {
        case .walMissing, .delete: #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        case .walEmpty: #expect(FileManager.default.contents(atPath: path + "-wal")?.count == 0)
        case .walWithCommits: #expect((FileManager.default.contents(atPath: path + "-wal")?.count ?? 0) > 0)
        }
        let before = Snapshot(path)
        let outcome = try await Launcher.run(
            SQLiveBinary.path, Self.arguments(frontEnd, path), input: Self.input(frontEnd))
        #expect(outcome.status == 0, "\(outcome.stderr)")
        // Each front end really read: the rows, the committed ones included.
        let expected = fixture == .walWithCommits ? "4" : "3"
        #expect(outcome.stdout.contains(expected), "\(outcome.stdout)")
        let after = Snapshot(path)
        #expect(after == before, "before: \(before); after: \(after)")
        #expect(after.schemaVersion == before.schemaVersion)
    }

    /// A session that writes still leaves the file as the sqlite3 shell
    /// would: its commit checkpointed into the file at close, the `-wal` gone.
    @Test func aSessionThatWritesCheckpointsAsTheShellDoes() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        try await sqlite3(path, "PRAGMA journal_mode=wal; CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        let before = Snapshot(path)
        _ = try await runCommand(SQLiveBinary.path, [path, "-c", "INSERT INTO t VALUES (2);"])
        let after = Snapshot(path)
        #expect(after.database != before.database)
        #expect(after.wal == nil, "the -wal is checkpointed and removed at close, as sqlite3 leaves it")
        let count = try await runCommand(SQLiveBinary.path, [path, "-c", "SELECT count(*) FROM t;"])
        #expect(count == "2\n")
    }

    static func arguments(_ frontEnd: FrontEnd, _ path: String) -> [String] {
        switch frontEnd {
        case .command:
            [
                "-c", ".mode list", "-c", "SELECT count(*) FROM t;", "-c", ".schema", "-c", ".tables",
                "-c", ".explain SELECT * FROM t WHERE name = 'a'", path,
            ]
        case .readonly: ["--readonly", "-c", "SELECT count(*) FROM t;", path]
        case .stdin: [path]
        case .rpc: ["--rpc", path]
        case .lsp: ["--lsp", path]
        case .mcp: ["--mcp", path]
        }
    }

    static func input(_ frontEnd: FrontEnd) -> String {
        switch frontEnd {
        case .command, .readonly:
            return ""
        case .stdin:
            return """
                SELECT count(*) FROM t;
                .watch n SELECT count(*) FROM t
                .watch --changes rows SELECT id, name FROM t
                .watch --diff names SELECT name FROM t ORDER BY id
                .schema
                .dump
                """
        case .rpc, .lsp:
            let uri = "file:///look.sql"
            let messages: [String] = [
                #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#,
                #"{"jsonrpc":"2.0","method":"initialized","params":{}}"#,
                #"{"jsonrpc":"2.0","id":2,"method":"query/execute","params":{"sql":"SELECT count(*) AS n FROM t"}}"#,
                #"{"jsonrpc":"2.0","id":3,"method":"liveQuery/register","params":{"name":"n","sql":"SELECT count(*) FROM t"}}"#,
                #"{"jsonrpc":"2.0","id":4,"method":"database/schema","params":{}}"#,
                #"{"jsonrpc":"2.0","id":5,"method":"explain","params":{"sql":"SELECT * FROM t WHERE name = 'a'"}}"#,
                #"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"\#(uri)","languageId":"sql","version":1,"text":"SELECT name FROM t WHERE id = 1;\nSELECT nope FROM t;\n"}}}"#,
                #"{"jsonrpc":"2.0","id":6,"method":"textDocument/hover","params":{"textDocument":{"uri":"\#(uri)"},"position":{"line":0,"character":18}}}"#,
                #"{"jsonrpc":"2.0","id":7,"method":"textDocument/completion","params":{"textDocument":{"uri":"\#(uri)"},"position":{"line":0,"character":7}}}"#,
                #"{"jsonrpc":"2.0","id":8,"method":"shutdown"}"#,
                #"{"jsonrpc":"2.0","method":"exit"}"#,
            ]
            return messages.map { "Content-Length: \($0.utf8.count)\r\n\r\n\($0)" }.joined()
        case .mcp:
            let messages: [String] = [
                #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"look","version":"1"}}}"#,
                #"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                #"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"query","arguments":{"sql":"SELECT count(*) AS n FROM t"}}}"#,
                #"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"explain","arguments":{"sql":"SELECT * FROM t WHERE name = 'a'"}}}"#,
                #"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"schema","arguments":{}}}"#,
                #"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"watch","arguments":{"name":"n","sql":"SELECT count(*) FROM t"}}}"#,
            ]
            return messages.joined(separator: "\n") + "\n"
        }
    }
}
