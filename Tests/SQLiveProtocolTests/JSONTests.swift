import Foundation
import Testing

@testable import SQLiveProtocol

/// The protocol's JSON, as Foundation's coders read and write it on this
/// toolchain.
@Suite("JSON")
struct JSONTests {
    func parse(_ text: String) throws -> JSONValue {
        try JSONCoding.decode(JSONValue.self, from: Array(text.utf8))
    }

    func serialize(_ value: JSONValue) throws -> String {
        String(decoding: try JSONCoding.encode(value), as: UTF8.self)
    }

    @Test func integersAreExact() throws {
        #expect(try parse("9223372036854775807") == .integer(Int64.max))
        #expect(try parse("-9223372036854775808") == .integer(Int64.min))
        #expect(try serialize(.integer(Int64.max)) == "9223372036854775807")
        #expect(try serialize(.integer(Int64.min)) == "-9223372036854775808")
        let extremes = "[9223372036854775807,-9223372036854775808]"
        #expect(try serialize(try parse(extremes)) == extremes)
        // Beyond 64 bits, a number is a double.
        #expect(try parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
    }

    @Test func foundationCodersKeepInt64Exact() throws {
        // The guarantee the protocol relies on, checked on Foundation itself.
        struct Box: Codable, Equatable { var values: [Int64] }
        let box = Box(values: [Int64.max, Int64.min, 0, -1])
        let text = try JSONEncoder().encode(box)
        #expect(String(decoding: text, as: UTF8.self) == #"{"values":[9223372036854775807,-9223372036854775808,0,-1]}"#)
        #expect(try JSONDecoder().decode(Box.self, from: text) == box)
    }

    @Test func doubles() throws {
        #expect(try parse("2.5") == .double(2.5))
        #expect(try parse("-0.5E-3") == .double(-0.0005))
        #expect(try serialize(.double(0.1)) == "0.1")
        #expect(try serialize(.double(1e300)) == "1e+300")
        #expect(try parse(serialize(.double(0.1 + 0.2))) == .double(0.1 + 0.2))
        // The known loss: an integral double is written without its `.0`
        // (docs/protocol.md). A number with a fraction or an exponent reads
        // as a double, whatever its value.
        #expect(try serialize(.double(1)) == "1")
        #expect(try parse("1.0") == .double(1))
        #expect(try parse("1e2") == .double(100))
        #expect(try parse("-0") == .integer(0))
    }

    @Test func nonFiniteDoublesAreWrittenAsStrings() throws {
        #expect(try serialize(.double(.infinity)) == #""Infinity""#)
        #expect(try serialize(.double(-.infinity)) == #""-Infinity""#)
        #expect(try serialize(.double(.nan)) == #""NaN""#)
        #expect(try serialize([.double(.infinity), 1]) == #"["Infinity",1]"#)
    }

    @Test func strings() throws {
        #expect(try parse(#""a\"b\\c\/d\n\t\u00e9\ud83c\udf89""#) == .string("a\"b\\c/d\n\té🎉"))
        #expect(try serialize(.string("a\"b\\c\n\u{01}é/")) == #""a\"b\\c\n\u0001é/""#)
        let text = "tab\t, quote \", control \u{1F}, emoji 🎉"
        #expect(try parse(serialize(.string(text))) == .string(text))
    }

    @Test(arguments: [
        "", " ", "{", "[1,", "{\"a\"}", "{\"a\":}", "{a:1}", "01", "1.", "-", "+1", ".5", "1e", "tru", "nul",
        "\"abc", "\"a\u{01}b\"", "[1] x", "\"\\x\"", "\"\\u12\"", "NaN", "Infinity", "\"\\ud800\"", "1e400",
    ])
    func invalidJSONIsRefused(text: String) {
        #expect(throws: DecodingError.self) { try parse(text) }
        #expect(throws: ResponseError.self) { try IncomingContent.decode(Array(text.utf8)) }
    }

    @Test func invalidUTF8IsRefused() {
        for bytes: [UInt8] in [[0x22, 0xFF, 0xFE, 0x22], [0x22, 0xC3, 0x22], [0xEF, 0xBB, 0xBF, 0x7B, 0x7D]] {
            #expect(throws: DecodingError.self) { try JSONCoding.decode(JSONValue.self, from: bytes) }
            let error = #expect(throws: ResponseError.self) { try IncomingContent.decode(bytes) }
            #expect(error?.code == .parseError)
        }
    }

    @Test func nestingIsBounded() throws {
        for depth in [10_000, 100_000] {
            let deep = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            #expect(throws: DecodingError.self) { try parse(deep) }
            let error = #expect(throws: ResponseError.self) { try IncomingContent.decode(Array(deep.utf8)) }
            #expect(error?.code == .parseError)
        }
        let fine = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        _ = try parse(fine)
    }

    @Test func deepNestingIsDecodedOffTheMainThread() async throws {
        // Requests are decoded on the cooperative pool, whose threads have
        // small stacks: the deepest nesting Foundation accepts must fit.
        let deep = String(repeating: "[", count: 511) + String(repeating: "]", count: 511)
        let value = try await Task.detached { try JSONCoding.decode(JSONValue.self, from: Array(deep.utf8)) }.value
        #expect(value.arrayValue?.count == 1)
    }

    @Test func objectsAreWrittenWithSortedKeys() throws {
        let value = try parse(#"{"b": [1, 2.5, null, true], "a": {"z": "y"}}"#)
        #expect(try serialize(value) == #"{"a":{"z":"y"},"b":[1,2.5,null,true]}"#)
        #expect(try parse(serialize(value)) == value)
    }

    struct Sample: Codable, Equatable {
        var name: String
        var count: Int
        var ratio: Double?
        var tags: [String]
        var nested: Nested?

        struct Nested: Codable, Equatable {
            var flag: Bool
        }
    }

    @Test func codableRoundTrip() throws {
        let sample = Sample(name: "x", count: 3, ratio: 0.5, tags: ["a"], nested: .init(flag: true))
        let json = try JSONCoding.jsonValue(of: sample)
        #expect(json == ["name": "x", "count": 3, "ratio": 0.5, "tags": ["a"], "nested": ["flag": true]])
        #expect(try JSONCoding.decode(Sample.self, from: json) == sample)
        // nil optionals are left out.
        let bare = try JSONCoding.jsonValue(of: Sample(name: "y", count: 0, ratio: nil, tags: [], nested: nil))
        #expect(bare == ["name": "y", "count": 0, "tags": []])
    }

    @Test func decodingErrorsNameTheField() throws {
        let missing = #expect(throws: DecodingError.self) {
            try JSONCoding.decode(Sample.self, from: ["name": "x", "tags": []])
        }
        #expect(ResponseError(decoding: missing!).message == "Invalid params: count: missing field")
        let mistyped = #expect(throws: DecodingError.self) {
            try JSONCoding.decode(Sample.self, from: ["name": "x", "count": 1, "tags": ["a", 2]])
        }
        let error = ResponseError(decoding: mistyped!)
        #expect(error.code == .invalidParams)
        #expect(error.message == "Invalid params: tags[1]: expected a string")
        #expect(error.data == ["field": "tags[1]"])
        let nested = #expect(throws: DecodingError.self) {
            try JSONCoding.decode(Sample.self, from: ["name": "x", "count": 1, "tags": [], "nested": [:]])
        }
        #expect(ResponseError(decoding: nested!).message == "Invalid params: nested.flag: missing field")
        let null = #expect(throws: DecodingError.self) {
            try JSONCoding.decode(Sample.self, from: ["name": nil, "count": 1, "tags": []])
        }
        #expect(ResponseError(decoding: null!).message == "Invalid params: name: must not be null")
        let notObject = #expect(throws: DecodingError.self) {
            try JSONCoding.decode(Sample.self, from: ["x"])
        }
        #expect(ResponseError(decoding: notObject!).message == "Invalid params: expected an object")
    }

    @Test func numbersThatDoNotFitAnIntegerAreRefused() throws {
        // Foundation does not say where; the error still says what.
        for count: JSONValue in [1.5, 1e30] {
            let error = #expect(throws: DecodingError.self) {
                try JSONCoding.decode(Sample.self, from: ["name": "x", "count": count, "tags": []])
            }
            let response = ResponseError(decoding: error!)
            #expect(response.code == .invalidParams)
            #expect(response.message.contains("not an integer"))
        }
        // An integral double fits.
        #expect(try JSONCoding.decode(Sample.self, from: ["name": "x", "count": 2.0, "tags": []]).count == 2)
    }
}
