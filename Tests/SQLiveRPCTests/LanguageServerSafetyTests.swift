import Foundation
import SQLiveProtocol
import SQLiveTestSupport
import Testing

/// Nothing a document names can hang or change the language server
/// (issue #39), over the real binary.
@Suite("Language server: what documents name", .timeLimit(.minutes(3)))
struct LanguageServerSafetyTests {
    typealias Editor = LanguageServerTests.Editor

    @Test func aFIFONamedByTheFirstLineIsRefusedAndTheServerGoesOn() async throws {
        let editor = try await Editor()
        let fifo = editor.directory.path("pipe.sqlite")
        #expect(mkfifo(fifo, 0o600) == 0)
        let refused = try await editor.open("a.sql", "-- sqlive: database=pipe.sqlite\nSELECT 1;")
        #expect(refused.count == 1)
        #expect(refused.first?["message"]?.stringValue?.contains("it is a FIFO (named pipe), not a database file") == true)
        // Nothing waits for the FIFO: other documents, requests and statements are served.
        let other = try await editor.open("b.sql", "SELECT * FROM nowhere;")
        #expect(other.map { $0["message"]?.stringValue ?? "" } == ["no such table: nowhere"])
        #expect(try await editor.server.result("query/execute", ["sql": "SELECT 3"])["results"]?[0]?["rows"] == [[3]])
        let hover = try await editor.server.result("textDocument/hover", editor.at("b.sql", 0, 1))
        #expect(hover != .null)
    }

    @Test func aDocumentsPragmaLockingModeDoesNotBlindTheChecker() async throws {
        let editor = try await Editor()
        let first = try await editor.open("q.sql", "PRAGMA locking_mode=EXCLUSIVE;\nSELECT * FROM newt;")
        #expect(first.map { $0["message"]?.stringValue ?? "" }.last == "no such table: newt")
        #expect(first.first?["severity"] == 3)  // information: not prepared here, and why
        // Another process at its defaults creates the table: the error goes.
        try await SQLite3CLI.run(editor.database, "CREATE TABLE newt(a);", defaultTimeout: false)
        let cleared = try await editor.diagnostics("q.sql") { diagnostics in
            !diagnostics.contains { $0["message"]?.stringValue == "no such table: newt" }
        }
        #expect(cleared.count == 1)
    }
}
