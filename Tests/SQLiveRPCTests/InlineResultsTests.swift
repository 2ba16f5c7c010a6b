import Foundation
import SQLiveProtocol
import SQLiveTestSupport
import Testing

/// Every statement's live result inline, through standard LSP: inlay hints
/// and code lens titles, refreshed when another process writes.
@Suite("Inline results", .timeLimit(.minutes(3)))
struct InlineResultsTests {
    typealias Editor = LanguageServerTests.Editor

    static let document = """
        SELECT count(*) FROM players;
        SELECT name, score FROM players ORDER BY score DESC;
        INSERT INTO players(name, score) VALUES ('Eve', 1);
        SELECT nope FROM players;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n;

        """

    /// Another process writes: the sqlite3 shell at its defaults (no busy
    /// timeout), as an application's writer would be.
    static func write(_ database: String, _ sql: String) async throws {
        try await SQLite3CLI.run(database, sql)
    }

    /// The inlay hints of a whole document, by line.
    static func hints(_ editor: Editor, _ name: String) async throws -> [Int: String] {
        let result = try await editor.server.result(
            "textDocument/inlayHint",
            [
                "textDocument": ["uri": .string(editor.uri(name))],
                "range": ["start": ["line": 0, "character": 0], "end": ["line": 100, "character": 0]],
            ])
        var hints: [Int: String] = [:]
        for hint in result.arrayValue ?? [] {
            guard let line = hint["position"]?["line"]?.integerValue, let label = hint["label"]?.stringValue else {
                continue
            }
            hints[Int(line)] = label
        }
        return hints
    }

    /// Waits for the server to ask the client to refresh its inlay hints.
    static func refreshRequest(_ editor: Editor) async throws {
        _ = try await editor.server.next("a workspace/inlayHint/refresh request") { message in
            message["method"] == "workspace/inlayHint/refresh" && message["id"] != nil
        }
    }

    @Test("Each read-only statement shows its result; writes never run; another process's commit refreshes")
    func liveHints() async throws {
        let editor = try await Editor(refreshSupport: true)
        #expect(editor.initializeResult["capabilities"]?["inlayHintProvider"] == true)
        try await editor.open("live.sql", Self.document)
        let hints = try await Self.hints(editor, "live.sql")
        #expect(hints[0] == "→ 2")
        #expect(hints[1] == "→ 2 rows: (Ann, 12), (Bob, 7)")
        #expect(hints[2] == nil, "a statement that writes is never run by itself")
        #expect(hints[3] == "⚠ no such column: nope")
        #expect(hints[4]?.hasPrefix("⏱ over 100 ms: not run by itself") == true, "\(hints)")
        #expect(try await SQLite3CLI.run(editor.database, "SELECT count(*) FROM players") == "2\n")

        // The Run lens carries the same brief.
        let lenses = try await editor.server.result(
            "textDocument/codeLens", ["textDocument": ["uri": .string(editor.uri("live.sql"))]])
        let titles = (lenses.arrayValue ?? []).compactMap { $0["command"]?["title"]?.stringValue }
        #expect(titles.contains("▶ Run  → 2"), "\(titles)")

        // Another process, the sqlite3 shell at its defaults.
        try await Self.write(editor.database, "INSERT INTO players(name, score) VALUES ('Cy', 30)")
        try await Self.refreshRequest(editor)
        let after = try await Self.hints(editor, "live.sql")
        #expect(after[0] == "→ 3")
        #expect(after[1] == "→ 3 rows: (Cy, 30), (Ann, 12), (Bob, 7)")
    }

    @Test("Only the statements in the range asked about are run; an edited statement is evaluated anew")
    func rangesAndEdits() async throws {
        let editor = try await Editor(refreshSupport: true)
        try await editor.open("range.sql", "SELECT 1;\nSELECT 2;\n")
        let first = try await editor.server.result(
            "textDocument/inlayHint",
            [
                "textDocument": ["uri": .string(editor.uri("range.sql"))],
                "range": ["start": ["line": 1, "character": 0], "end": ["line": 1, "character": 9]],
            ])
        #expect(first.arrayValue?.map { $0["label"] } == ["→ 2"])
        editor.change(
            "range.sql", version: 2,
            [
                [
                    "range": ["start": ["line": 1, "character": 7], "end": ["line": 1, "character": 8]],
                    "text": "40 + 2",
                ]
            ])
        _ = try await editor.diagnostics("range.sql")
        let hints = try await Self.hints(editor, "range.sql")
        #expect(hints == [0: "→ 1", 1: "→ 42"])
    }

    @Test("A closed document's live results end: no refresh for it, and no file kept open for its own database")
    func closing() async throws {
        let editor = try await Editor(refreshSupport: true)
        let other = editor.directory.path("other.sqlite")
        try await sqlite3(other, "CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        let pid = editor.server.process.processIdentifier
        func descriptors(of path: String) throws -> Int {
            try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").filter { fd in
                let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)")
                return target?.hasPrefix(path) == true
            }.count
        }
        #expect(try descriptors(of: other) == 0)
        try await editor.open("own.sql", "-- sqlive: database=\(other)\nSELECT count(*) FROM t;\n")
        #expect(try await Self.hints(editor, "own.sql")[1] == "→ 1")
        #expect(try descriptors(of: other) > 0)
        try await Self.write(other, "INSERT INTO t VALUES (2)")
        try await Self.refreshRequest(editor)
        #expect(try await Self.hints(editor, "own.sql")[1] == "→ 2")

        // A document on the session's database, whose database stays open.
        try await editor.open("session.sql", "SELECT count(*) FROM players;\n")
        #expect(try await Self.hints(editor, "session.sql")[0] == "→ 2")

        for name in ["own.sql", "session.sql"] {
            editor.server.notify("textDocument/didClose", ["textDocument": ["uri": .string(editor.uri(name))]])
            _ = try await editor.diagnostics(name) { $0.isEmpty }
        }
        // Closing is asynchronous (the engine's connections end on its
        // own tasks): wait for it, a hang only reaching the suite's limit.
        while try descriptors(of: other) > 0 { try await Task.sleep(for: .milliseconds(20)) }
        try await Self.write(other, "INSERT INTO t VALUES (3)")
        try await Self.write(editor.database, "INSERT INTO players(name, score) VALUES ('Cy', 30)")
        try await Task.sleep(for: .seconds(1))
        let refreshes = editor.server.messages.filter { $0["method"] == "workspace/inlayHint/refresh" }
        #expect(refreshes.count == 1, "a refresh after the documents closed")
    }

    @Test("A client that cannot be asked to refresh is never asked")
    func noRefreshSupport() async throws {
        let editor = try await Editor()
        try await editor.open("q.sql", "SELECT count(*) FROM players;\n")
        #expect(try await Self.hints(editor, "q.sql")[0] == "→ 2")
        try await Self.write(editor.database, "INSERT INTO players(name, score) VALUES ('Cy', 30)")
        // The next request shows the new result all the same.
        var hint: String?
        for _ in 0..<200 where hint != "→ 3" {
            hint = try await Self.hints(editor, "q.sql")[0]
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(hint == "→ 3")
        #expect(!editor.server.messages.contains { $0["method"] == "workspace/inlayHint/refresh" })
    }
}
