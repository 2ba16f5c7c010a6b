import Foundation
import Testing

@testable import SQLiveProtocol

struct Inner: Codable, Equatable {
    var name: String
    var tags: [String]?
}

struct Params: Codable, Equatable {
    var sql: String
    var params: [Int64]?
    var maxRows: Int?
    var nested: Inner?
}

/// The case of a decoding error, and its coding path as strings.
func describe(_ error: (any Error)?) -> (kind: String, path: [String])? {
    guard let error = error as? DecodingError else { return nil }
    switch error {
    case .keyNotFound(let key, let context):
        return ("keyNotFound(\(key.stringValue))", context.codingPath.map(\.stringValue))
    case .valueNotFound(_, let context):
        return ("valueNotFound", context.codingPath.map(\.stringValue))
    case .typeMismatch(_, let context):
        return ("typeMismatch", context.codingPath.map(\.stringValue))
    case .dataCorrupted(let context):
        return ("dataCorrupted", context.codingPath.map(\.stringValue))
    @unknown default:
        return ("unknown", [])
    }
}

func decodeError<T: Decodable>(_ type: T.Type, _ text: String) -> (kind: String, path: [String])? {
    do {
        _ = try JSONValueDecoder.decode(type, from: JSONReader.parse(text))
        return nil
    } catch {
        return describe(error)
    }
}

func foundationDecodeError<T: Decodable>(_ type: T.Type, _ text: String) -> (kind: String, path: [String])? {
    do {
        _ = try JSONDecoder().decode(type, from: Data(text.utf8))
        return nil
    } catch {
        return describe(error)
    }
}

@Suite("JSONValueDecoder")
struct JSONValueDecoderTests {
    @Test("decodes a struct")
    func decodes() throws {
        let text = #"{"sql": "SELECT 1", "params": [1, -2, 3.0], "maxRows": 2.0, "nested": {"name": "n", "tags": []}}"#
        let params = try JSONValueDecoder.decode(Params.self, from: JSONReader.parse(text))
        #expect(params == Params(sql: "SELECT 1", params: [1, -2, 3], maxRows: 2, nested: Inner(name: "n", tags: [])))
        #expect(params == (try JSONDecoder().decode(Params.self, from: Data(text.utf8))))

        let minimal = try JSONValueDecoder.decode(
            Params.self, from: JSONReader.parse(#"{"sql": "x", "params": null, "maxRows": null}"#))
        #expect(minimal == Params(sql: "x"))
    }

    @Test("throws errors with their coding paths")
    func errors() throws {
        #expect(decodeError(Params.self, #"{}"#)! == ("keyNotFound(sql)", []))
        #expect(decodeError(Params.self, #"{"sql": 1}"#)! == ("typeMismatch", ["sql"]))
        #expect(decodeError(Params.self, #"{"sql": null}"#)! == ("valueNotFound", ["sql"]))
        #expect(decodeError(Params.self, #"{"sql": "", "maxRows": "x"}"#)! == ("typeMismatch", ["maxRows"]))
        #expect(decodeError(Params.self, #"{"sql": "", "maxRows": 1.5}"#)! == ("dataCorrupted", ["maxRows"]))
        #expect(decodeError(Params.self, #"{"sql": "", "maxRows": 1e30}"#)! == ("dataCorrupted", ["maxRows"]))
        #expect(decodeError(Params.self, #"{"sql": "", "maxRows": true}"#)! == ("typeMismatch", ["maxRows"]))
        #expect(
            decodeError(Params.self, #"{"sql": "", "params": [1, "a"]}"#)! == ("typeMismatch", ["params", "Index 1"]))
        #expect(
            decodeError(Params.self, #"{"sql": "", "params": [1, null]}"#)! == ("valueNotFound", ["params", "Index 1"]))
        #expect(decodeError(Params.self, #"{"sql": "", "params": {}}"#)! == ("typeMismatch", ["params"]))
        #expect(decodeError(Params.self, #"{"sql": "", "nested": {}}"#)! == ("keyNotFound(name)", ["nested"]))
        #expect(
            decodeError(Params.self, #"{"sql": "", "nested": {"name": "", "tags": [1]}}"#)! == (
                "typeMismatch", ["nested", "tags", "Index 0"]
            ))
        #expect(decodeError(Params.self, #"[]"#)! == ("typeMismatch", []))
        #expect(decodeError(Params.self, #"null"#)! == ("valueNotFound", []))

        let error = #expect(throws: DecodingError.self) {
            try JSONValueDecoder.decode(Params.self, from: ["sql": "", "params": [1, "a"]])
        }
        guard case .typeMismatch(let type, let context) = error else {
            Issue.record("not a type mismatch: \(String(describing: error))")
            return
        }
        #expect("\(type)" == "Int64")
        #expect(context.codingPath.last?.intValue == 1)
    }

    static let erroneousTexts = [
        #"{}"#, #"{"sql": 1}"#, #"{"sql": null}"#, #"{"sql": "", "maxRows": "x"}"#, #"{"sql": "", "maxRows": true}"#,
        #"{"sql": "", "params": [1, "a"]}"#, #"{"sql": "", "params": [1, null]}"#, #"{"sql": "", "params": {}}"#,
        #"{"sql": "", "nested": {}}"#, #"{"sql": "", "nested": {"name": "", "tags": [1]}}"#, #"[]"#, #"null"#,
        #"{"sql": "", "nested": 3}"#, #"{"sql": "", "nested": {"name": false}}"#,
    ]

    @Test("throws the errors Foundation throws", arguments: erroneousTexts)
    func foundationErrors(_ text: String) throws {
        let ours = try #require(decodeError(Params.self, text))
        let theirs = try #require(foundationDecodeError(Params.self, text))
        #expect(ours == theirs)
    }

    @Test("converts numbers as Foundation")
    func numbers() throws {
        #expect(try JSONValueDecoder.decode(Int.self, from: .double(2.0)) == 2)
        #expect(try JSONValueDecoder.decode(Int8.self, from: .integer(-128)) == -128)
        #expect(
            try JSONValueDecoder.decode(UInt64.self, from: .double(18_446_744_073_709_549_568))
                == 18_446_744_073_709_549_568)
        #expect(try JSONValueDecoder.decode(Double.self, from: .integer(3)) == 3)
        #expect(try JSONValueDecoder.decode(Float.self, from: .double(0.1)) == 0.1)
        #expect(try JSONValueDecoder.decode(Int64.self, from: .integer(.min)) == .min)
        #expect(
            describe(#expect(throws: DecodingError.self) { try JSONValueDecoder.decode(Int8.self, from: 128) })?.kind
                == "dataCorrupted")
        #expect(
            describe(#expect(throws: DecodingError.self) { try JSONValueDecoder.decode(UInt.self, from: -1) })?.kind
                == "dataCorrupted")
        #expect(
            describe(
                #expect(throws: DecodingError.self) { try JSONValueDecoder.decode(Int.self, from: .double(.nan)) })?
                .kind == "dataCorrupted")
        #expect(
            describe(#expect(throws: DecodingError.self) { try JSONValueDecoder.decode(Float.self, from: 1e300) })?.kind
                == "dataCorrupted")
        #expect(
            describe(#expect(throws: DecodingError.self) { try JSONValueDecoder.decode(Bool.self, from: 1) })?.kind
                == "typeMismatch")
        #expect(
            describe(#expect(throws: DecodingError.self) { try JSONValueDecoder.decode(String.self, from: 1) })?.kind
                == "typeMismatch")
        #expect(
            describe(#expect(throws: DecodingError.self) { try JSONValueDecoder.decode(Double.self, from: "1") })?.kind
                == "typeMismatch")
        #expect(
            describe(#expect(throws: DecodingError.self) { try JSONValueDecoder.decode(Int.self, from: nil) })?.kind
                == "valueNotFound")
    }

    @Test("decodes JSON values as they are")
    func jsonValues() throws {
        struct Request: Codable, Equatable {
            var id: JSONValue
            var params: JSONValue?
            var list: [JSONValue]
            var map: [String: JSONValue]
        }
        let value: JSONValue = ["id": 1.0, "params": ["a": [1, 2.0, nil]], "list": [1e2, "x"], "map": ["k": 2.0]]
        let request = try JSONValueDecoder.decode(Request.self, from: value)
        #expect(request.id == .double(1.0))
        #expect(request.params == ["a": [1, 2.0, nil]])
        #expect(request.list == [.double(100), "x"])
        #expect(request.map == ["k": .double(2.0)])
        #expect(try JSONValueDecoder.decode(JSONValue.self, from: value) == value)
        let absent = try JSONValueDecoder.decode(
            Request.self, from: ["id": nil, "params": nil, "list": [], "map": [:]])
        #expect(absent == Request(id: nil, params: nil, list: [], map: [:]))

        // Through the JSONValue's own init(from:), which tries each kind.
        struct Wrapper: Decodable {
            var value: JSONValue
            init(from decoder: any Decoder) throws { value = try JSONValue(from: decoder) }
        }
        let text = #"{"a": [1, 2.5, "x", true, null, {"b": {}}]}"#
        #expect(
            try JSONValueDecoder.decode(Wrapper.self, from: JSONReader.parse(text)).value
                == (try JSONReader.parse(text)))
    }

    @Test("decodes dictionaries and arrays")
    func collections() throws {
        let value: JSONValue = ["b": [1, 2], "a": [], "é": [3]]
        #expect(try JSONValueDecoder.decode([String: [Int]].self, from: value) == ["b": [1, 2], "a": [], "é": [3]])
        #expect(
            try JSONValueDecoder.decode([[String]].self, from: [["a"], [], ["b", "c"]]) == [["a"], [], ["b", "c"]])
        #expect(try JSONValueDecoder.decode([Int?].self, from: [1, nil, 3]) == [1, nil, 3])
        #expect(try JSONValueDecoder.decode([Int: String].self, from: ["1": "a", "20": "b"]) == [1: "a", 20: "b"])
        #expect(try JSONValueDecoder.decode(Set<String>.self, from: ["a", "b"]) == ["a", "b"])
        let error = #expect(throws: DecodingError.self) {
            try JSONValueDecoder.decode([String: [Int]].self, from: ["a": [1, "x"]])
        }
        #expect(describe(error)! == ("typeMismatch", ["a", "Index 1"]))
    }

    @Test("decodes through nested containers and super decoders")
    func nestedContainers() throws {
        struct Shape: Decodable, Equatable {
            var kind: String
            var x: Double
            var y: Double
            var labels: [String]
            var base: Int

            enum CodingKeys: String, CodingKey { case kind, point, labels }
            enum PointKeys: String, CodingKey { case x, y }

            init(kind: String, x: Double, y: Double, labels: [String], base: Int) {
                (self.kind, self.x, self.y, self.labels, self.base) = (kind, x, y, labels, base)
            }

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                kind = try container.decode(String.self, forKey: .kind)
                let point = try container.nestedContainer(keyedBy: PointKeys.self, forKey: .point)
                x = try point.decode(Double.self, forKey: .x)
                y = try point.decode(Double.self, forKey: .y)
                var list = try container.nestedUnkeyedContainer(forKey: .labels)
                var labels: [String] = []
                while !list.isAtEnd {
                    var pair = try list.nestedUnkeyedContainer()
                    labels.append(try pair.decode(String.self))
                }
                self.labels = labels
                base = try container.superDecoder().singleValueContainer().decode(Int.self)
                #expect(point.codingPath.map(\.stringValue) == ["point"])
                #expect(list.codingPath.map(\.stringValue) == ["labels"])
            }
        }
        let value: JSONValue = ["kind": "dot", "point": ["x": 1, "y": 2.5], "labels": [["a"], ["b", 0]], "super": 7]
        #expect(
            try JSONValueDecoder.decode(Shape.self, from: value)
                == Shape(kind: "dot", x: 1, y: 2.5, labels: ["a", "b"], base: 7))

        let wrong: JSONValue = ["kind": "dot", "point": ["x": 1, "y": "2"], "labels": [], "super": 7]
        let error = #expect(throws: DecodingError.self) { try JSONValueDecoder.decode(Shape.self, from: wrong) }
        #expect(describe(error)! == ("typeMismatch", ["point", "y"]))
        let short: JSONValue = ["kind": "dot", "point": ["x": 1, "y": 2], "labels": [[]], "super": 7]
        let end = #expect(throws: DecodingError.self) { try JSONValueDecoder.decode(Shape.self, from: short) }
        #expect(describe(end)! == ("valueNotFound", ["labels", "Index 0", "Index 0"]))
    }

    @Test("lists every key")
    func allKeys() throws {
        struct Keys: Decodable {
            var keys: [String]
            struct AnyKey: CodingKey {
                var stringValue: String
                var intValue: Int? { nil }
                init(stringValue: String) { self.stringValue = stringValue }
                init?(intValue: Int) { nil }
            }
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: AnyKey.self)
                keys = container.allKeys.map(\.stringValue).sorted()
                #expect(container.contains(AnyKey(stringValue: "a")))
                #expect(!container.contains(AnyKey(stringValue: "z")))
                #expect(try container.decodeNil(forKey: AnyKey(stringValue: "n")))
            }
        }
        #expect(try JSONValueDecoder.decode(Keys.self, from: ["a": 1, "b": 2, "n": nil]).keys == ["a", "b", "n"])
    }
}
