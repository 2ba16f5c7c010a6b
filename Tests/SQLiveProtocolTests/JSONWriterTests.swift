import Foundation
import SQLiveTestSupport
import Testing

@testable import SQLiveProtocol

/// Foundation's JSON text for a value, with the options JSONWriter matches.
func foundationJSON(_ value: some Encodable) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    encoder.nonConformingFloatEncodingStrategy = .convertToString(
        positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}

func written(_ value: JSONValue) -> String {
    var writer = JSONWriter()
    writer.write(value)
    return String(decoding: writer.bytes, as: UTF8.self)
}

@Suite("JSONWriter")
struct JSONWriterTests {
    static let trickyStrings: [String] = [
        "", "plain", "a/b", "</script>", "\"", "\\", "\"\\\"", "\u{0}", "\u{1}", "\u{8}", "\u{9}", "\u{A}", "\u{B}",
        "\u{C}", "\u{D}", "\u{1F}", "\u{20}", "\u{7F}", "\u{80}", "\u{9F}", "\u{A0}", "é", "e\u{301}", "🎉",
        "👩‍👩‍👧", "\u{2028}\u{2029}", "\u{FEFF}", "\u{FFFF}", "\u{10FFFF}", "日本語", "<>&'", "tab\there",
        "line\nbreak\r\n", "\u{1B}[0m", "a\u{0}b", String(repeating: "x", count: 100) + "\"" + "y",
        (0..<32).map { String(UnicodeScalar(UInt8($0))) }.joined(),
    ]

    @Test("writes strings as Foundation", arguments: trickyStrings)
    func writesString(_ string: String) throws {
        #expect(written(.string(string)) == (try foundationJSON(string)))
    }

    static let doubles: [Double] = [
        0, -0.0, 1, -1, 0.1, -0.1, 0.5, 1.5, 1e-7, 1e300, -1e300, 123_456_789_012_345_678.0, 100, 1e15, 1e16, 1e17,
        1e21, 1e22, 1e23, 9_007_199_254_740_991, 9_007_199_254_740_992, 9_007_199_254_740_994, -9_007_199_254_740_991,
        -9_007_199_254_740_992, 4_503_599_627_370_497.5, 0.001, 0.0001, 1e-5, 1e-6, .leastNonzeroMagnitude,
        2.2250738585072014e-308,
        .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .infinity, -.infinity, .nan, 0.30000000000000004,
        12345.678, 3.14159e100, 1.2345e-8, 2e20, 1_234_567_890_123_456_789_012.0, 0.091, 1 / 3, 2.0 / 3, 1e-10,
        Double(Int64.max), Double(Int64.min), 1.7976931348623157e308, 4.35, 100_000.5,
    ]

    @Test("writes doubles as Foundation", arguments: doubles)
    func writesDouble(_ double: Double) throws {
        var writer = JSONWriter()
        writer.write(double: double)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == (try foundationJSON(double)))
    }

    @Test("writes random doubles as Foundation")
    func randomDoubles() throws {
        var generator = SeededRandom(seed: 1)
        var doubles: [Double] = []
        for _ in 0..<2_000 {
            doubles.append(Double(bitPattern: generator.next()))
            doubles.append(Double(Int64(bitPattern: generator.next()) >> (generator.next() % 64)))
            doubles.append(Double(Int64(bitPattern: generator.next()) >> (generator.next() % 64)) / 1000)
        }
        var writer = JSONWriter()
        writer.write(.array(doubles.map(JSONValue.double)))
        #expect(String(decoding: writer.bytes, as: UTF8.self) == (try foundationJSON(doubles)))
    }

    static let corpus: [JSONValue] = [
        nil, true, false, 0, 1, -1, .integer(.max), .integer(.min), 1.5, -0.0, 1e300, .double(.infinity),
        .double(-.infinity), .double(.nan), "", "a/b", [], [:], [nil, [nil, []], [:]],
        ["a": 1, "B": 2, "é": 3, "Z": 4, "_": 5, "aa": 6, "a b": 7, "ü": 8, "Ω": 9, "🎉": 10, "\u{FF5E}": 11, "A": 12],
        ["e\u{301}": 1, "f": 2, "e": 3, "ea": 4, "\u{E000}": 5, "a10": 6, "a9": 7, "": 8],
        [
            "jsonrpc": "2.0", "id": 123,
            "result": [
                "results": [
                    [
                        "changes": 0, "columns": ["id", "name", "score"], "elapsedMs": 0.091,
                        "rows": [[1, "player 1", 1.25], [2, nil, -0.5]], "sql": "SELECT * FROM t WHERE a = '/'",
                        "truncated": false,
                    ]
                ]
            ],
        ],
        ["nested": ["z": ["b": [1, 2, ["y": nil, "x": "\u{1}\n"]]], "a": [:]], "\"quoted\"": "\\"],
    ]

    @Test("writes values as Foundation", arguments: corpus)
    func writesValue(_ value: JSONValue) throws {
        #expect(written(value) == (try foundationJSON(value)))
    }

    @Test("sorts keys by their UTF-8 bytes")
    func keyOrder() {
        let value: JSONValue = ["a": 1, "B": 2, "é": 3, "Z": 4, "_": 5, "aa": 6, "a b": 7]
        #expect(written(value) == #"{"B":2,"Z":4,"_":5,"a":1,"a b":7,"aa":6,"é":3}"#)
    }

    @Test("writes pieces with commas")
    func pieces() {
        var writer = JSONWriter(capacity: 16)
        writer.beginObject()
        writer.key("id")
        writer.write(integer: -123)
        writer.key("list")
        writer.beginArray()
        writer.write(bool: true)
        writer.writeNull()
        writer.write(double: 2.5)
        writer.write(string: "x/\"y\"")
        writer.beginObject()
        writer.endObject()
        writer.beginArray()
        writer.endArray()
        writer.write(["b": 1, "a": [2]])
        writer.endArray()
        writer.key("last")
        writer.write(integer: .min)
        writer.endObject()
        #expect(
            String(decoding: writer.bytes, as: UTF8.self)
                == #"{"id":-123,"list":[true,null,2.5,"x/\"y\"",{},[],{"a":[2],"b":1}],"last":-9223372036854775808}"#)
    }

    @Test("writes deeply nested pieces as whole values")
    func deepPieces() {
        func build(_ depth: Int) -> JSONValue {
            depth == 0 ? 0 : [.integer(Int64(depth)), build(depth - 1), ["k": .integer(Int64(depth))]]
        }
        func emit(_ value: JSONValue, _ writer: inout JSONWriter) {
            switch value {
            case .array(let elements):
                writer.beginArray()
                for element in elements { emit(element, &writer) }
                writer.endArray()
            case .object(let members):
                writer.beginObject()
                for (key, member) in members.sorted(by: { $0.key < $1.key }) {
                    writer.key(key)
                    emit(member, &writer)
                }
                writer.endObject()
            default:
                writer.write(value)
            }
        }
        let value = build(200)
        var writer = JSONWriter()
        emit(value, &writer)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == written(value))
    }

    @Test("describes values as JSON")
    func describes() {
        let value: JSONValue = ["b": [1, 2.5, "x"], "a": nil]
        #expect(value.description == #"{"a":null,"b":[1,2.5,"x"]}"#)
        #expect("\(JSONValue.double(1.0))" == "1")
    }
}
