import Foundation
import SQLiveTestSupport
import Testing

@testable import SQLiveProtocol

func encodedText(_ value: some Encodable) throws -> String {
    String(decoding: try JSONValueEncoder.encodeJSON(value), as: UTF8.self)
}

struct Column: Codable, Equatable {
    var name: String
    var declaredType: String?
}

struct QueryResult: Codable, Equatable {
    var changes: Int
    var columns: [String]
    var elapsedMs: Double
    var rows: [[JSONValue]]
    var sql: String
    var truncated: Bool
    var lastInsertRowid: Int64?
    var columnInfo: [Column]?
}

struct Response: Codable, Equatable {
    struct Result: Codable, Equatable { var results: [QueryResult] }
    var jsonrpc = "2.0"
    var id: JSONValue
    var result: Result?
    var error: String?
}

/// An enum with associated values, coded by hand with nested containers.
enum Event: Codable, Equatable {
    case moved(x: Int, y: Int)
    case renamed(String)
    case batch([Event])
    case cleared

    enum CodingKeys: String, CodingKey { case type, point, name, events }
    enum PointKeys: String, CodingKey { case x, y }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .moved(let x, let y):
            try container.encode("moved", forKey: .type)
            var point = container.nestedContainer(keyedBy: PointKeys.self, forKey: .point)
            try point.encode(x, forKey: .x)
            try point.encode(y, forKey: .y)
        case .renamed(let name):
            try container.encode("renamed", forKey: .type)
            try container.encode(name, forKey: .name)
        case .batch(let events):
            try container.encode("batch", forKey: .type)
            var list = container.nestedUnkeyedContainer(forKey: .events)
            for event in events { try list.encode(event) }
        case .cleared:
            try container.encode("cleared", forKey: .type)
            try container.encodeNil(forKey: .name)
        }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(String.self, forKey: .type) {
        case "moved":
            let point = try container.nestedContainer(keyedBy: PointKeys.self, forKey: .point)
            self = .moved(x: try point.decode(Int.self, forKey: .x), y: try point.decode(Int.self, forKey: .y))
        case "renamed":
            self = .renamed(try container.decode(String.self, forKey: .name))
        case "batch":
            var list = try container.nestedUnkeyedContainer(forKey: .events)
            var events: [Event] = []
            while !list.isAtEnd { events.append(try list.decode(Event.self)) }
            self = .batch(events)
        default:
            self = .cleared
        }
    }
}

@Suite("JSONValueEncoder")
struct JSONValueEncoderTests {
    static let response = Response(
        id: 123,
        result: .init(results: [
            QueryResult(
                changes: 0, columns: ["id", "name", "score"], elapsedMs: 0.091, rows: [[1, "player 1", 1]],
                sql: "SELECT id, name, score FROM players WHERE id = 42", truncated: false),
            QueryResult(
                changes: 2, columns: [], elapsedMs: 12, rows: [], sql: "UPDATE t SET a = 1/2", truncated: true,
                lastInsertRowid: .max, columnInfo: [Column(name: "a"), Column(name: "b", declaredType: "TEXT")]),
        ]))

    @Test("encodes nested structs, leaving out nil optionals")
    func structs() throws {
        let value = try JSONValueEncoder.encode(Self.response)
        #expect(value["jsonrpc"] == "2.0")
        #expect(value["error"] == nil)
        #expect(value["result"]?["results"]?[0]?["lastInsertRowid"] == nil)
        #expect(value["result"]?["results"]?[1]?["lastInsertRowid"] == .integer(.max))
        #expect(
            value["result"]?["results"]?[1]?["columnInfo"] == [["name": "a"], ["name": "b", "declaredType": "TEXT"]])
        #expect(try encodedText(Self.response) == (try foundationJSON(Self.response)))
        #expect(try JSONValueDecoder.decode(Response.self, from: value) == Self.response)
    }

    @Test("encodes arrays, dictionaries, optionals and numbers as Foundation")
    func collections() throws {
        #expect(try encodedText([[1, 2], [], [3]]) == "[[1,2],[],[3]]")
        #expect(try encodedText([[[String]]]([[["a"]], [[]]])) == #"[[["a"]],[[]]]"#)
        #expect(try encodedText(["b": 1, "a": 2, "é": 3, "B": 4]) == #"{"B":4,"a":2,"b":1,"é":3}"#)
        #expect(try encodedText([1: "a", 2: "b"]) == (try foundationJSON([1: "a", 2: "b"])))
        #expect(try encodedText([Int?.none, 1]) == "[null,1]")
        #expect(try encodedText(Int?.none) == "null")
        #expect(try JSONValueEncoder.encode(UInt64.max) == .double(Double(UInt64.max)))
        #expect(try JSONValueEncoder.encode(UInt64(Int64.max)) == .integer(.max))
        #expect(try JSONValueEncoder.encode(Int8.min) == .integer(-128))
        #expect(try JSONValueEncoder.encode(1.0) == .double(1))
        let floats: [Float] = [0.1, 1, 3.4028235e38, 1e-7, -2.5, .infinity, 16_777_215, 1.5e-30]
        #expect(try encodedText(floats) == (try foundationJSON(floats)))
        let mixed: [String: [Double?]] = ["x": [0.1, nil, 1e300, -0.0], "y": []]
        #expect(try encodedText(mixed) == (try foundationJSON(mixed)))
        #expect(try encodedText("a/b\u{1}") == (try foundationJSON("a/b\u{1}")))
    }

    @Test("encodes enums with nested containers")
    func enums() throws {
        let events: [Event] = [.moved(x: 1, y: -2), .renamed("n"), .batch([.cleared, .batch([])]), .cleared]
        let value = try JSONValueEncoder.encode(events)
        #expect(
            value == [
                ["type": "moved", "point": ["x": 1, "y": -2]], ["type": "renamed", "name": "n"],
                ["type": "batch", "events": [["type": "cleared", "name": nil], ["type": "batch", "events": []]]],
                ["type": "cleared", "name": nil],
            ])
        #expect(try encodedText(events) == (try foundationJSON(events)))
        #expect(try JSONValueDecoder.decode([Event].self, from: value) == events)
    }

    @Test("keeps what is encoded into nested containers after they are made")
    func referenceSemantics() throws {
        struct Late: Encodable {
            enum Keys: String, CodingKey { case a, b, list, sup, z }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                var a = container.nestedContainer(keyedBy: Keys.self, forKey: .a)
                var list = container.nestedUnkeyedContainer(forKey: .list)
                let superEncoder = container.superEncoder(forKey: .sup)
                try container.encode(1, forKey: .b)
                try a.encode("late", forKey: .z)
                var inner = list.nestedUnkeyedContainer()
                try list.encode(2)
                try inner.encode(true)
                var deeper = list.nestedContainer(keyedBy: Keys.self)
                try deeper.encode(3, forKey: .z)
                var superContainer = superEncoder.singleValueContainer()
                try superContainer.encode("super")
                // A second keyed container shares the same object.
                var again = encoder.container(keyedBy: Keys.self)
                try again.encode(4, forKey: .z)
                #expect(deeper.codingPath.map(\.stringValue) == ["list", "Index 2"])
                #expect(superEncoder.codingPath.map(\.stringValue) == ["sup"])
            }
        }
        let value = try JSONValueEncoder.encode(Late())
        #expect(value == ["a": ["z": "late"], "b": 1, "list": [[true], 2, ["z": 3]], "sup": "super", "z": 4])
        #expect(try encodedText(Late()) == (try foundationJSON(Late())))
    }

    @Test("encodes through super encoders and single-value containers")
    func superEncoders() throws {
        class Base: Encodable {
            var id = 1
        }
        final class Derived: Base {
            var name = "d"
            enum Keys: String, CodingKey { case name }
            override func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode(name, forKey: .name)
                try super.encode(to: container.superEncoder())
            }
        }
        struct Wrapped: Encodable {
            var inner: [Int]
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(inner)
            }
        }
        struct Empty: Encodable {
            func encode(to encoder: any Encoder) throws {}
        }
        #expect(try JSONValueEncoder.encode(Derived()) == ["name": "d", "super": ["id": 1]])
        #expect(try encodedText(Derived()) == (try foundationJSON(Derived())))
        #expect(try JSONValueEncoder.encode(Wrapped(inner: [1, 2])) == [1, 2])
        #expect(try JSONValueEncoder.encode(["e": Empty()]) == ["e": [:]])
        #expect(throws: EncodingError.self) { try JSONValueEncoder.encode(Empty()) }
    }

    @Test("writes repeated and equivalent keys as Foundation")
    func repeatedKeys() throws {
        struct Repeated: Encodable {
            var keys: [String]
            struct Key: CodingKey {
                var stringValue: String
                var intValue: Int? { nil }
                init(stringValue: String) { self.stringValue = stringValue }
                init?(intValue: Int) { nil }
            }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Key.self)
                for (offset, key) in keys.enumerated() { try container.encode(offset, forKey: Key(stringValue: key)) }
            }
        }
        let cases: [[String]] = [
            ["b", "a", "b"], ["a", "a", "a"], ["z", "y", "x", "y", "z"], ["é", "e\u{301}", "f", "e"],
            ["e\u{301}", "é"], (0..<40).map { "k\($0 % 17)" }, (0..<40).map { "é\($0 % 13)" },
        ]
        for keys in cases {
            let value = Repeated(keys: keys)
            #expect(try encodedText(value) == (try foundationJSON(value)), "\(keys)")
            #expect(written(try JSONValueEncoder.encode(value)) == (try foundationJSON(value)), "\(keys)")
        }
    }

    @Test("writes large objects as Foundation")
    func largeObjects() throws {
        for count in [2, 3, 31, 32, 33, 100] {
            var generator = SeededRandom(seed: UInt64(count))
            var dictionary: [String: Int] = [:]
            for index in 0..<count { dictionary["key\(generator.next() % 1000)-\(index)"] = index }
            #expect(try encodedText(dictionary) == (try foundationJSON(dictionary)))
            #expect(written(try JSONValueEncoder.encode(dictionary)) == (try foundationJSON(dictionary)))
        }
    }

    @Test("inserts JSON values as they are")
    func jsonValues() throws {
        let value: JSONValue = ["a": [1, 2.0, "x", nil], "b": .double(.infinity)]
        #expect(try JSONValueEncoder.encode(value) == value)
        #expect(try JSONValueEncoder.encode([value]) == [value])
        #expect(try JSONValueEncoder.encode(["k": value]) == ["k": value])
        #expect(try encodedText(value) == #"{"a":[1,2,"x",null],"b":"Infinity"}"#)
    }

    @Test("reports coding paths while encoding")
    func codingPaths() throws {
        struct Probe: Encodable {
            func encode(to encoder: any Encoder) throws {
                throw EncodingError.invalidValue(
                    0, .init(codingPath: encoder.codingPath, debugDescription: "probe"))
            }
        }
        struct Outer: Encodable {
            var list: [[String: Probe]]
        }
        let error = #expect(throws: EncodingError.self) {
            try JSONValueEncoder.encode(Outer(list: [[:], ["k": Probe()]]))
        }
        guard case .invalidValue(_, let context) = error else {
            Issue.record("no error")
            return
        }
        #expect(context.codingPath.map(\.stringValue) == ["list", "Index 1", "k"])
    }
}
