import GRDB
import SQLiveEngine
import SQLiveTestSupport
import Testing

@testable import SQLiveREPL

@Suite("LIKE for .tables and .schema")
struct NamePatternTests {
    @Test("Agrees with SQLite's own LIKE on seeded random patterns and names")
    func agreesWithSQLite() throws {
        let queue = try DatabaseQueue()
        var random = SeededRandom(seed: 0x11CE)
        let alphabet: [Character] = ["a", "B", "c", "%", "_"]
        try queue.read { db in
            for _ in 0..<3_000 {
                let pattern = String(
                    (0..<Int.random(in: 0...6, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
                let text = String(
                    (0..<Int.random(in: 0...7, using: &random)).map { _ in "aAbBc".randomElement(using: &random)! })
                let sqlite = try Bool.fetchOne(db, sql: "SELECT ? LIKE ?", arguments: [text, pattern]) ?? false
                #expect(NamePattern.like(pattern, text) == sqlite, "'\(text)' LIKE '\(pattern)'")
            }
        }
    }

    @Test("A pattern of many % against a long name that does not match ends at once")
    func noBlowUp() {
        let pattern = String(repeating: "%a", count: 40) + "b"
        let text = String(repeating: "a", count: 200)
        let clock = ContinuousClock()
        let start = clock.now
        #expect(!NamePattern.like(pattern, text))
        // A generous bound that only a backtracking explosion would pass (it took minutes).
        #expect(clock.now - start < .seconds(5))
    }
}
