import GRDB
import SQLiveTestSupport
import Testing

@testable import SQLiveREPL

@Suite("REAL literals that SQLite reads back exactly")
struct RealLiteralsTests {
    /// What SQLite computes from a literal in a statement.
    func evaluate(_ literal: String, in queue: DatabaseQueue) throws -> Double? {
        try queue.read { db in try Double.fetchOne(db, sql: "SELECT \(literal)") }
    }

    @Test func theShellsTextWhenItWorks() throws {
        let literals = try RealLiterals()
        #expect(literals.literal(for: 0.1) == "0.10000000000000000555")
        #expect(literals.literal(for: 3) == "3.0")
        #expect(literals.literal(for: -2.5e-7) == "-2.4999999999999998868e-07")
        #expect(literals.literal(for: 1e20) == "1.0e+20")
        #expect(literals.literal(for: .infinity) == "1e999")
        #expect(literals.literal(for: -.infinity) == "-1e999")
        #expect(literals.literal(for: -0.0) == "-0.0")
        #expect(literals.literal(for: .nan) == "NULL")
    }

    @Test("Every double comes back, the tiny ones SQLite 3.40 cannot read from any decimal too")
    func randomDoubles() throws {
        let literals = try RealLiterals()
        let queue = try DatabaseQueue()
        var random = SeededRandom(seed: 42)
        var values: [Double] = [
            .leastNonzeroMagnitude, -8.30684765175859250729e-305, 2.2250738585072014e-308, .greatestFiniteMagnitude,
        ]
        while values.count < 20_000 {
            let value = Double(bitPattern: random.next())
            if value.isFinite { values.append(value) }
        }
        var scaled = 0
        for value in values {
            let literal = literals.literal(for: value)
            if literal.hasPrefix("(") { scaled += 1 }
            let back = try evaluate(literal, in: queue)
            #expect(back?.bitPattern == value.bitPattern, "\(value) written \(literal)")
        }
        #expect(scaled > 0, "some values need the scaled form (else this test no longer covers it)")
    }
}
