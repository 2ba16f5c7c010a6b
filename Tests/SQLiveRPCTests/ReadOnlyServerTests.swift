import Foundation
import SQLiveProtocol
import SQLiveTestSupport
import Testing

/// A read-only server writes no file anywhere, for any client: the real
/// `sqlive --web` (its WebSocket), the page `.web` serves from a
/// `sqlive --readonly` REPL, and `sqlive --rpc --readonly`, each sent a list
/// of statements that would write or open a file (`VACUUM INTO`, `ATTACH`,
/// temporary storage moved to disk, the shell's file functions). Each
/// attempt gets an error that says why; the database's directory, the
/// targets' directory and `/tmp` hold no new file afterwards; a large
/// temporary table stays in memory (no file of SQLite's `etilqs_` temporary
/// files is open in the server); the server goes on answering.
@Suite("Read-only servers write no file", .timeLimit(.minutes(5)))
struct ReadOnlyServerTests {
    /// A database, a directory the attempts aim at, and a marker that
    /// names what they would make in `/tmp`.
    struct Fixture {
        let directory: TemporaryDirectory
        let targets: TemporaryDirectory
        let marker = "sqlive-ro-\(UUID().uuidString.prefix(8))"
        var database: String { directory.url.appendingPathComponent("games.sqlite").path }

        init() async throws {
            directory = try TemporaryDirectory()
            targets = try TemporaryDirectory()
            let sql = """
                PRAGMA journal_mode = WAL;
                CREATE TABLE t(x INTEGER PRIMARY KEY, name TEXT);
                INSERT INTO t(name) VALUES ('a'), ('b'), ('c');
                """
            let created = try await Launcher.run("/usr/bin/sqlite3", [database], input: sql)
            #expect(created.status == 0, "\(created.stderr)")
        }

        /// Statements that would write or open a file, and what the error
        /// must say (nil: any error).
        var attempts: [(sql: String, says: String?)] {
            let (dir, tmp) = (targets.url.path, "/tmp/\(marker)")
            let db = directory.url.path
            return [
                ("VACUUM INTO '\(dir)/copy.sqlite'", "not authorized"),
                ("VACUUM INTO '\(db)/copy.sqlite'", "not authorized"),
                ("VACUUM INTO '\(tmp)-copy.sqlite'", "not authorized"),
                ("VACUUM", nil),
                ("ATTACH '\(dir)/evil.sqlite' AS evil", "not authorized"),
                ("ATTACH '\(tmp)-evil.sqlite' AS evil", "not authorized"),
                ("ATTACH ':memory:' AS scratch", "not authorized"),
                ("ATTACH '\(database)' AS again", "not authorized"),
                ("SELECT 1; ATTACH '\(tmp)-second.sqlite' AS second", "not authorized"),
                ("PRAGMA temp_store = FILE", "not authorized"),
                ("PRAGMA temp_store = 1", "not authorized"),
                ("PRAGMA temp_store_directory = '\(dir)'", "not authorized"),
                ("SELECT writefile('\(dir)/written.txt', 'x')", nil),
                ("SELECT writefile('\(tmp)-written.txt', 'x')", nil),
                ("SELECT readfile('\(database)')", nil),
                ("SELECT edit('x', 'touch \(dir)/edited')", nil),
                ("SELECT load_extension('libc.so.6')", nil),
                ("INSERT INTO t(name) VALUES ('d')", "readonly"),
                ("CREATE TABLE u(a)", "readonly"),
            ]
        }

        /// What a directory holds.
        static func listing(_ path: String) -> Set<String> {
            Set((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
        }

        /// The files of the directories the attempts could reach, and
        /// `/tmp`'s and `/var/tmp`'s entries that one of them would name.
        func snapshot() -> [String: Set<String>] {
            [
                "database's directory": Self.listing(directory.url.path),
                "targets' directory": Self.listing(targets.url.path),
                "/tmp": Self.listing("/tmp").filter { $0.hasPrefix(marker) || $0.hasPrefix("etilqs_") },
                "/var/tmp": Self.listing("/var/tmp").filter { $0.hasPrefix("etilqs_") },
            ]
        }

        /// SQLite's temporary files the process has open (a temporary
        /// table on disk: deleted as it is opened, so only /proc sees it).
        static func openTemporaryFiles(of pid: Int32) -> [String] {
            let fds = "/proc/\(pid)/fd"
            return ((try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? []).compactMap {
                let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(fds)/\($0)")
                return target.flatMap { $0.contains("etilqs_") ? $0 : nil }
            }
        }
    }

    /// A temporary table too large for SQLite's page cache (some 10 MB):
    /// on disk unless temporary storage is in memory.
    static let largeTempTable = """
        CREATE TEMP TABLE big AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 20000)
        SELECT x, randomblob(500) AS b FROM c
        """

    /// Sends every attempt through `execute` (a `query/execute` response)
    /// and checks the answers, the files, and that the server still serves.
    static func sendAttempts(
        _ fixture: Fixture, pid: Int32, server: String, execute: (String) async throws -> JSONValue
    ) async throws {
        let before = fixture.snapshot()
        for (sql, says) in fixture.attempts {
            let response = try await execute(sql)
            let message =
                response["error"]?["data"]?["message"]?.stringValue ?? response["error"]?["message"]?.stringValue
            #expect(response["error"] != nil, "\(server) ran \(sql): \(response)")
            #expect(!(message ?? "").isEmpty, "\(server): no reason for refusing \(sql): \(response)")
            if let says {
                #expect(message?.contains(says) == true, "\(server): \(sql) failed with \(message ?? "nothing")")
            }
        }
        // Temporary storage is in memory: a large temp table opens no file.
        let created = try await execute(largeTempTable)
        #expect(created["error"] == nil, "\(server): \(created)")
        #expect(Fixture.openTemporaryFiles(of: pid) == [], "\(server) keeps temporary tables on disk")
        let counted = try await execute("SELECT count(*) FROM big")
        #expect(counted["result"]?["results"]?[0]?["rows"]?[0]?[0] == .integer(20000), "\(server): \(counted)")
        #expect(Fixture.openTemporaryFiles(of: pid) == [], "\(server) keeps temporary tables on disk")
        _ = try await execute("DROP TABLE big")
        // Nothing new anywhere, and the server goes on.
        let after = fixture.snapshot()
        for (place, names) in after {
            #expect(names == before[place], "\(server): \(place) changed: \(names.subtracting(before[place] ?? []))")
        }
        let answer = try await execute("SELECT count(*) FROM t")
        #expect(answer["result"]?["results"]?[0]?["rows"]?[0]?[0] == .integer(3), "\(server): \(answer)")
    }

    /// The page's URL printed by a server: its port and token.
    static func address(from line: String) throws -> (port: Int, token: String) {
        let url = try #require(URLComponents(string: line.trimmingCharacters(in: .whitespacesAndNewlines)))
        let port = try #require(url.port, "no port in \(line)")
        let token = try #require(url.queryItems?.first { $0.name == "token" }?.value, "no token in \(line)")
        return (port, token)
    }

    /// The first `count` lines the child prints.
    static func lines(from child: PipedChild, count: Int) throws -> [String] {
        var text = ""
        while text.filter({ $0 == "\n" }).count < count {
            let chunk = child.read()
            guard !chunk.isEmpty else { throw LoopbackClient.Failure("fewer than \(count) lines: \(text)") }
            text += String(decoding: chunk, as: UTF8.self)
        }
        return Array(text.split(separator: "\n", omittingEmptySubsequences: false).prefix(count).map(String.init))
    }

    /// Reads the child's output up to the first line that starts with
    /// `prefix` (what it printed after that line is dropped).
    static func line(from child: PipedChild, startingWith prefix: String) throws -> String {
        var text = ""
        while true {
            if let line = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
                .first(where: { $0.hasPrefix(prefix) })
            {
                return String(line)
            }
            let chunk = child.read()
            guard !chunk.isEmpty else { throw LoopbackClient.Failure("no line starting with \(prefix): \(text)") }
            text += String(decoding: chunk, as: UTF8.self)
        }
    }

    /// The page's WebSocket, initialized.
    static func pageSession(port: Int, token: String) throws -> LoopbackClient {
        let socket = try LoopbackClient.webSocket(
            port: port, "/rpc?token=\(token)", headers: [("Origin", "http://127.0.0.1:\(port)")])
        let initialized = try socket.request("initialize", ["clientInfo": ["name": "tests"]])
        #expect(initialized["result"]?["serverInfo"]?["name"] == "sqlive", "\(initialized)")
        return socket
    }

    @Test func webPage() async throws {
        let fixture = try await Fixture()
        let server = try PipedChild(SQLiveBinary.path, ["--web", "0", fixture.database])
        defer { server.child.terminate() }
        let (port, token) = try Self.address(from: Self.line(from: server, startingWith: "http://"))
        let page = try Self.pageSession(port: port, token: token)
        try await Self.sendAttempts(fixture, pid: server.child.processIdentifier, server: "--web") { sql in
            try page.request("query/execute", ["sql": .string(sql)])
        }
        server.child.terminate()
        #expect(await server.child.exit() == 0)
    }

    /// The page of a `--readonly` REPL shares the REPL's connection, where
    /// the shell's functions are: the page never reaches them, nor ATTACH,
    /// while the REPL's user still does (the guard is the page's alone).
    @Test func replPage() async throws {
        let fixture = try await Fixture()
        let repl = try PipedChild(SQLiveBinary.path, ["--readonly", fixture.database])
        defer { repl.child.terminate() }
        repl.write(".web 0\n")
        let (port, token) = try Self.address(from: Self.line(from: repl, startingWith: "http://"))
        let page = try Self.pageSession(port: port, token: token)
        try await Self.sendAttempts(fixture, pid: repl.child.processIdentifier, server: ".web") { sql in
            try page.request("query/execute", ["sql": .string(sql)])
        }
        for function in ["writefile('\(fixture.targets.url.path)/w.txt', 'x')", "readfile('\(fixture.database)')"] {
            let refused = try page.request("query/execute", ["sql": .string("SELECT \(function)")])
            let message = refused["error"]?["data"]?["message"]?.stringValue ?? ""
            #expect(message.contains("not authorized") && message.contains("sqlite3 shell"), "\(refused)")
        }
        // The REPL's user keeps the shell's functions and ATTACH.
        let mine = fixture.targets.url.appendingPathComponent("mine.txt").path
        repl.write(".mode list\n.headers off\nATTACH ':memory:' AS scratch;\nSELECT writefile('\(mine)', 'ok');\n")
        _ = try Self.line(from: repl, startingWith: "2")
        #expect(FileManager.default.contents(atPath: mine) == Data("ok".utf8))
        repl.write(".quit\n")
        #expect(await repl.child.exit() == 0)
    }

    @Test func rpcServer() async throws {
        let fixture = try await Fixture()
        let server = try ServerProcess(arguments: ["--readonly", fixture.database], directory: fixture.directory.url)
        let initialized = try await server.request("initialize", ["clientInfo": ["name": "tests"]])
        #expect(initialized["result"]?["serverInfo"]?["name"] == "sqlive")
        try await Self.sendAttempts(fixture, pid: server.process.processIdentifier, server: "--rpc --readonly") {
            try await server.request("query/execute", ["sql": .string($0)])
        }
        _ = try await server.request("shutdown")
        server.notify("exit")
        #expect(try await server.waitForExit() == 0)
    }
}
