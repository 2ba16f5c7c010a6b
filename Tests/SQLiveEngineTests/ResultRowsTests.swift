import Foundation
import SQLiveTestSupport
import Testing

@testable import SQLiveEngine

/// The compact rows results hold (`ResultRows`), and the chunked store a
/// kept query edits (`RowStore`), against plain arrays.
@Suite("Compact result rows")
struct ResultRowsTests {
    /// Values of every kind, at the encoding's edges.
    static let edges: [SQLValue] = [
        .null, .integer(0), .integer(-1), .integer(1), .integer(63), .integer(64), .integer(-64), .integer(-65),
        .integer(1 << 57), .integer(-(1 << 57)), .integer((1 << 57) - 1), .integer(-(1 << 57) - 1),
        .integer(.max), .integer(.min), .real(0), .real(-0.5), .real(1e300), .real(.infinity), .text(""),
        .text("é"), .text("e\u{301}"), .text("a\u{0}b"), .text(String(repeating: "x", count: 300)),
        .blob(Data()), .blob(Data([0, 255, 128])), .blob(Data(repeating: 7, count: 5000)),
    ]

    static func value(_ random: inout SeededRandom) -> SQLValue {
        if Int.random(in: 0..<4, using: &random) == 0 { return edges.randomElement(using: &random)! }
        switch Int.random(in: 0..<5, using: &random) {
        case 0: return .null
        case 1: return .integer(Int64.random(in: -1_000_000...1_000_000, using: &random))
        case 2: return .real(Double.random(in: -1e6...1e6, using: &random))
        case 3: return .text("row \(Int.random(in: 0...99_999, using: &random)) ✓")
        default: return .blob(Data((0..<Int.random(in: 0...40, using: &random)).map { UInt8($0 * 7 % 256) }))
        }
    }

    @Test("Every value reads back as it was written, and weighs what SQLValue says")
    func values() {
        let rows = ResultRows(Self.edges.map { [$0] } + [Self.edges, []])
        #expect(Array(rows) == Self.edges.map { [$0] } + [Self.edges, []])
        #expect(rows.count == Self.edges.count + 2)
        #expect(rows[4] == [.integer(63)])
        let printed = (Self.edges.map { [$0] } + [Self.edges, []]).reduce(0) {
            $0 + 2 + $1.reduce(0) { $0 + $1.printedByteCount }
        }
        #expect(rows.printedByteCount == printed)
        // By their bytes: an INTEGER is not a REAL, and normalisations differ.
        #expect(ResultRows([[.integer(1)]]) != ResultRows([[.real(1)]]))
        #expect(ResultRows([[.text("é")]]) != ResultRows([[.text("e\u{301}")]]))
        #expect(ResultRows([[.null]]) != ResultRows([[.text("")]]))
        #expect(ResultRows([[.blob(Data())]]) != ResultRows([[.text("")]]))
        #expect(ResultRows([[.integer(1), .integer(2)]]) != ResultRows([[.integer(1)], [.integer(2)]]))
        let literal: ResultRows = [[.integer(1)], [.text("a")]]
        #expect(literal == ResultRows([[.integer(1)], [.text("a")]]))
        #expect(literal.hashValue == ResultRows([[.integer(1)], [.text("a")]]).hashValue)
    }

    @Test("A store edited at random holds what an array edited alike holds; results taken before stay as they were")
    func store() {
        for seed in [1, 2, 3] as [UInt64] {
            var random = SeededRandom(seed: seed)
            var store = RowStore(leading: 1)
            var model: [(key: SQLValue, row: [SQLValue])] = []
            var taken: [(rows: ResultRows, expected: [[SQLValue]])] = []
            func encode(_ key: SQLValue, _ row: [SQLValue]) -> (inout [UInt8]) -> Void {
                { bytes in for value in [key] + row { RowEncoding.append(value, to: &bytes) } }
            }
            for _ in 0..<3_000 {
                let row = (0..<Int.random(in: 0...4, using: &random)).map { _ in Self.value(&random) }
                let key = SQLValue.integer(Int64.random(in: 0...1_000_000, using: &random))
                store.append(encode(key, row))
                model.append((key, row))
            }
            for step in 0..<6_000 {
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<3 where !model.isEmpty:
                    let at = Int.random(in: 0..<model.count, using: &random)
                    store.remove(at: at)
                    model.remove(at: at)
                case 0..<8:
                    // Bursts in one place grow a chunk past its split.
                    let at =
                        step % 500 < 250 ? min(model.count, 1_000) : Int.random(in: 0...model.count, using: &random)
                    let row = (0..<Int.random(in: 1...3, using: &random)).map { _ in Self.value(&random) }
                    let key = Self.value(&random)
                    store.insert(at: at, encode(key, row))
                    model.insert((key, row), at: at)
                case 8:
                    let kept = Int.random(in: max(0, model.count - 10)...model.count, using: &random)
                    store.truncate(to: kept)
                    model.removeLast(model.count - kept)
                case 9 where step % 10 == 0:
                    let prefix = Int.random(in: 0...model.count, using: &random)
                    taken.append((store.rows(prefix: prefix), model.prefix(prefix).map(\.row)))
                default: break
                }
                if step % 997 == 0 {
                    #expect(Array(store.rows(prefix: store.count)) == model.map(\.row))
                }
            }
            #expect(store.count == model.count)
            #expect(Array(store.rows(prefix: store.count)) == model.map(\.row))
            for index in stride(from: 0, to: model.count, by: 37) {
                #expect(store.leadingValues(at: index) == [model[index].key])
                #expect(store.rows(prefix: store.count)[index] == model[index].row)
            }
            #expect(store.chunks.allSatisfy { $0.count > 0 && $0.count <= 2 * RowStore.chunkEntries })
            #expect(store.chunks.count >= 4)
            // Taken earlier, unchanged by every edit after (copy on write).
            for (rows, expected) in taken {
                #expect(Array(rows) == expected)
                #expect(rows == ResultRows(expected))
                #expect(rows.hashValue == ResultRows(expected).hashValue)
                #expect(rows.printedByteCount == ResultRows(expected).printedByteCount)
            }
            #expect(taken.count > 20)
            // Equal ends, by walking both, against row by row (by bytes:
            // the texts "é" and "e\u{301}" are equal Strings, not equal rows).
            func same(_ a: [SQLValue], _ b: [SQLValue]) -> Bool { ResultRows([a]) == ResultRows([b]) }
            let now = (store.rows(prefix: store.count), model.map(\.row))
            for ((a, arrayA), (b, arrayB)) in zip(taken + [now], taken.dropFirst() + [now, taken[0]]) {
                let limit = min(arrayA.count, arrayB.count)
                var prefix = 0
                while prefix < limit, same(arrayA[prefix], arrayB[prefix]) { prefix += 1 }
                #expect(a.commonPrefix(with: b) == prefix)
                var suffix = 0
                while suffix < limit - prefix,
                    same(arrayA[arrayA.count - 1 - suffix], arrayB[arrayB.count - 1 - suffix])
                {
                    suffix += 1
                }
                #expect(a.commonSuffix(with: b, limit: limit - prefix) == suffix)
                let fresh = ResultRows(arrayB)
                #expect(a.commonPrefix(with: fresh) == prefix)
                #expect(a.commonSuffix(with: fresh, limit: limit - prefix) == suffix)
            }
        }
    }

    @Test("Changes between two results of a store: the shared chunks are skipped, the changes are the arrays'")
    func changesBetweenResults() {
        var store = RowStore(leading: 1)
        for id in 0..<5_000 {
            store.append { bytes in
                for value in [SQLValue.integer(Int64(id)), .integer(Int64(id)), .text("n\(id)")] {
                    RowEncoding.append(value, to: &bytes)
                }
            }
        }
        let before = store.rows(prefix: store.count)
        store.remove(at: 2_500)
        store.insert(at: 2_500) { bytes in
            for value in [SQLValue.integer(2_500), .integer(2_500), .text("changed")] {
                RowEncoding.append(value, to: &bytes)
            }
        }
        store.remove(at: 10)
        let after = store.rows(prefix: store.count)
        #expect(before.commonPrefix(with: after) == 10)
        #expect(before.commonSuffix(with: after, limit: 4_999 - 10) == 2_499)
        let changes = RowChanges(from: before, to: after, keyColumns: [0])
        #expect(changes == RowChanges(from: Array(before), to: Array(after), keyColumns: [0]))
        #expect(changes.apply(to: Array(before)) == Array(after))
        #expect(changes.removed.map(\.from) == [10] && changes.changed.map(\.at) == [2_499])
        #expect(before != after && before == before && after == ResultRows(Array(after)))
    }

    /// Two results differ as SQLite's values do; so must what changed
    /// between them: a text in another Unicode normal form, -0.0 for 0.0,
    /// are changes (Swift's `String ==` takes the texts for equal).
    @Test("Changes between results see what their bytes see")
    func changesByBytes() {
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        for (old, new) in [
            (SQLValue.text(composed), SQLValue.text(decomposed)), (SQLValue.real(0.0), SQLValue.real(-0.0)),
        ] {
            #expect(old != new, "values compare as SQLite stores them (Swift's String == would call them equal)")
            // In the middle of a result: the equal ends around the row.
            let before = ResultRows([[.integer(1), .text("a")], [.integer(2), old], [.integer(3), .text("c")]])
            let after = ResultRows([[.integer(1), .text("a")], [.integer(2), new], [.integer(3), .text("c")]])
            #expect(before != after)
            for keyColumns in [[0], nil] {
                let changes = RowChanges(from: before, to: after, keyColumns: keyColumns)
                #expect(!changes.isEmpty, "\(old) → \(new), key \(String(describing: keyColumns))")
                #expect(ResultRows(changes.apply(to: Array(before))).encodedRow(1) == after.encodedRow(1))
            }
        }
    }
}
