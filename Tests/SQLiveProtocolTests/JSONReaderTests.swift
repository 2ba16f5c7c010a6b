import Foundation
import SQLiveTestSupport
import Testing

@testable import SQLiveProtocol

@Suite("JSONReader")
struct JSONReaderTests {
    // MARK: Invalid input

    static let invalidTexts: [String] = [
        "", " ", "{", "[1,", "{\"a\"}", "{\"a\":}", "{a:1}", "01", "1.", "-", "+1", ".5", "1e", "tru", "nul",
        "\"abc", "\"a\u{01}b\"", "[1] x", "\"\\x\"", "\"\\u12\"", "NaN", "Infinity", "\"\\ud800\"", "1e400",
        // More of the same kind.
        "[1,]", "{\"a\":1,}", "[,1]", "{,}", "[1 2]", "{\"a\" 1}", "{\"a\":1 \"b\":2}", "-01", "1.e5", "1e+",
        "1E-", "-a", "00", "0x10", "1.5e", "truee", "nulll", "falsy", "True", "\"\\u12G4\"", "\"\\udc00\"",
        "\"\\ud800\\u0041\"", "\"\\ud800x\"", "\"\\ud800\\\"", "\"a\nb\"", "\"\t\"", "-1e400", "1e99999999999",
        "\u{0C}1", "1\u{0C}", "'a'", "[1]]", "{}}", "\"\\", "\"\\u", "[", "]", "}", ":", "nan", "-Infinity",
        "1.0.0", "--1", "- 1", "\u{A0}1", "[\"a\" \"b\"]",
    ]

    @Test("refuses invalid input", arguments: invalidTexts)
    func refusesInvalid(_ text: String) {
        #expect(throws: JSONSyntaxError.self) { try JSONReader.parse(text) }
    }

    static let invalidBytes: [[UInt8]] = [
        [0x22, 0xFF, 0xFE, 0x22],
        [0x22, 0xC3, 0x22],
        [0xEF, 0xBB, 0xBF, 0x7B, 0x7D],
        [0x22, 0xC0, 0x80, 0x22],  // overlong NUL
        [0x22, 0xC1, 0xBF, 0x22],  // overlong
        [0x22, 0xE0, 0x80, 0xAF, 0x22],  // overlong slash
        [0x22, 0xF0, 0x80, 0x80, 0xAF, 0x22],  // overlong slash
        [0x22, 0xED, 0xA0, 0x80, 0x22],  // a surrogate in UTF-8
        [0x22, 0xED, 0xBF, 0xBF, 0x22],  // a surrogate in UTF-8
        [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // above U+10FFFF
        [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22],
        [0x22, 0x80, 0x22],  // a lone continuation byte
        [0x22, 0xE2, 0x82, 0x22],  // truncated
        [0x22, 0xF0, 0x9F, 0x8E],  // truncated at the end
        [0x22, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0xFF, 0x22],  // after a word of ASCII
        [0xFF],
        [0x5B, 0xC3, 0xA9, 0x5D],  // a valid character out of a string
        [0x22, 0x5C, 0x75, 0x30, 0x30, 0x30, 0x30, 0xFF, 0x22],  // after an escape
    ]

    @Test("refuses invalid bytes", arguments: invalidBytes)
    func refusesInvalidBytes(_ bytes: [UInt8]) {
        #expect(throws: JSONSyntaxError.self) { try JSONReader.parse(bytes) }
    }

    @Test("describes errors with their offsets")
    func messages() {
        func message(_ bytes: [UInt8]) -> String? {
            do {
                _ = try JSONReader.parse(bytes)
                return nil
            } catch {
                return error.description
            }
        }
        func message(_ text: String) -> String? { message(Array(text.utf8)) }
        #expect(message("") == "unexpected end of input")
        #expect(message("[1,") == "unexpected end of input")
        #expect(message("[1] x") == "unexpected character 'x' at byte 4")
        #expect(message("01") == "unexpected character '1' at byte 1")
        #expect(message("\"\\ud800\"") == "unpaired surrogate \\ud800 at byte 1")
        #expect(message("[\"\\udc00\"]") == "unpaired surrogate \\udc00 at byte 2")
        #expect(message("1e400") == "number out of range at byte 0")
        #expect(message("[1, -1e400]") == "number out of range at byte 4")
        #expect(message("\"a\u{01}b\"") == "unescaped control character U+0001 in a string at byte 2")
        #expect(message("\"\\x\"") == "invalid escape sequence at byte 1")
        #expect(message("\"\\u12\"") == "invalid escape sequence at byte 1")
        #expect(message("[é]") == "unexpected character 'é' at byte 1")
        #expect(message("\u{0C}") == "unexpected character U+000C at byte 0")
        #expect(message([0x22, 0xFF, 0xFE, 0x22]) == "invalid UTF-8 at byte 1")
        #expect(message([0x22, 0x61, 0x62, 0x63, 0xC3, 0x22]) == "invalid UTF-8 at byte 4")
        #expect(message([0xEF, 0xBB, 0xBF, 0x7B, 0x7D]) == "unexpected byte order mark at byte 0")
        #expect(message(String(repeating: "[", count: 600)) == "nested deeper than 512 levels at byte 512")

        let error = #expect(throws: JSONSyntaxError.self) { try JSONReader.parse("[1] x") }
        #expect(error?.offset == 4)
        #expect(error?.message == "unexpected character 'x' at byte 4")
    }

    // MARK: Nesting

    @Test("parses 512 nested arrays, refuses 513 and 600 without crashing")
    func nesting() throws {
        let deepest = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        var value = try JSONReader.parse(deepest)
        var depth = 0
        while case .array(let elements) = value {
            depth += 1
            value = elements.first ?? .null
        }
        #expect(depth == 512)

        for count in [513, 600, 100_000] {
            let text = String(repeating: "[", count: count) + String(repeating: "]", count: count)
            #expect(throws: JSONSyntaxError.self) { try JSONReader.parse(text) }
        }
        let objects = String(repeating: "{\"a\":", count: 513) + "1" + String(repeating: "}", count: 513)
        #expect(throws: JSONSyntaxError.self) { try JSONReader.parse(objects) }
        let mixed = String(repeating: "{\"a\":[", count: 256) + "1" + String(repeating: "]}", count: 256)
        #expect(try JSONReader.parse(mixed) != .null)
    }

    // MARK: Numbers

    @Test("keeps integers exact and other numbers doubles")
    func numbers() throws {
        #expect(try JSONReader.parse("9223372036854775807") == .integer(.max))
        #expect(try JSONReader.parse("-9223372036854775808") == .integer(.min))
        #expect(try JSONReader.parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
        #expect(try JSONReader.parse("-9223372036854775809") == .double(-9.223_372_036_854_775_808e18))
        #expect(try JSONReader.parse("18446744073709551616") == .double(18_446_744_073_709_551_616))
        #expect(try JSONReader.parse("123456789012345678901234567890") == .double(1.2345678901234568e29))
        #expect(try JSONReader.parse("0") == .integer(0))
        #expect(try JSONReader.parse("-0") == .integer(0))
        #expect(try JSONReader.parse("42") == .integer(42))
        #expect(try JSONReader.parse("-42") == .integer(-42))
        #expect(try JSONReader.parse("1.0") == .double(1.0))
        #expect(try JSONReader.parse("1e2") == .double(100))
        #expect(try JSONReader.parse("1E+2") == .double(100))
        #expect(try JSONReader.parse("0.5") == .double(0.5))
        #expect(try JSONReader.parse("-0.25e-2") == .double(-0.0025))
        #expect(try JSONReader.parse("1e-400") == .double(0))
        #expect(try JSONReader.parse("1.7976931348623157e308") == .double(.greatestFiniteMagnitude))
        #expect(try JSONReader.parse("4.9e-324") == .double(.leastNonzeroMagnitude))
        guard case .double(let negativeZero) = try JSONReader.parse("-0.0") else {
            Issue.record("-0.0 is not a double")
            return
        }
        #expect(negativeZero == 0 && negativeZero.sign == .minus)
    }

    static let numberTexts: [String] = [
        "0.1", "0.2", "0.3", "1.1", "3.141592653589793", "2.718281828459045", "1e23", "8.41e21",
        "5e-324", "2.2250738585072011e-308", "2.2250738585072014e-308", "9007199254740993.0",
        "9007199254740992.5", "0.000000000000000000000000000001", "123456789012345678.5", "1e22", "1e-22",
        "4.35", "0.1e1", "100000000000000000000000",
        "179769313486231570814527423731704356798070567525844996598917"
            + "4768031572607800285387605895586327668781715404589535143824642343213268894641827684675467035375169860499"
            + "1057021.5e-100", "0.00000000000000000000000000000000000000000000000000000000000000000000001e69",
        "7.038531e-26", "1.00000000000000011102230246251565404236316680908203125",
        "1.00000000000000011102230246251565404236316680908203124", "2.5e-7", "12345678901234567890e-20",
    ]

    @Test("rounds doubles correctly", arguments: numberTexts)
    func rounding(_ text: String) throws {
        let expected = try #require(Double(text))
        #expect(try JSONReader.parse(text) == .double(expected))
    }

    @Test("reads random doubles back exactly")
    func randomDoubles() throws {
        var generator = SeededRandom(seed: 42)
        for _ in 0..<20_000 {
            let double = Double(bitPattern: generator.next())
            guard double.isFinite else { continue }
            let text = "\(double)"
            #expect(try JSONReader.parse(text) == .double(double), "\(text)")
            // And as digits with an exponent, as Double(String) reads them.
            let mantissa = generator.next() % 100_000_000_000_000_000
            let exponent = Int(generator.next() % 60) - 30
            let other = "\(mantissa).\(generator.next() % 1000)e\(exponent)"
            #expect(try JSONReader.parse(other) == .double(Double(other)!), "\(other)")
        }
    }

    // MARK: Strings

    @Test("unescapes strings")
    func strings() throws {
        let text = #""a\"b\\c\/d\n\t\u00e9\ud83c\udf89""#
        #expect(try JSONReader.parse(text) == .string("a\"b\\c/d\n\té🎉"))
        #expect(try JSONReader.parse(#""\b\f\r\u0000\u001F\uFFFF""#) == .string("\u{08}\u{0C}\r\u{00}\u{1F}\u{FFFF}"))
        #expect(try JSONReader.parse(#""\uD83D\uDE00""#) == .string("😀"))
        #expect(try JSONReader.parse(#""""#) == .string(""))
        #expect(try JSONReader.parse("\"é🎉\u{7F}\u{2028}日本\"") == .string("é🎉\u{7F}\u{2028}日本"))
        #expect(try JSONReader.parse([0x22, 0xF4, 0x8F, 0xBF, 0xBF, 0x22]) == .string("\u{10FFFF}"))
        #expect(try JSONReader.parse([0x22, 0xEF, 0xBB, 0xBF, 0x22]) == .string("\u{FEFF}"))
    }

    @Test("reads strings as Foundation does")
    func randomStrings() throws {
        let pieces = [
            "a", "bcdefgh", "\\\"", "\\\\", "\\/", "\\n", "\\u00e9", "\\ud83c\\udf89", "é", "🎉", "日本", " ", "\\t",
            "0123456789abcdef",
        ]
        var generator = SeededRandom(seed: 7)
        for _ in 0..<2_000 {
            var body = ""
            for _ in 0..<Int(generator.next() % 12) { body += pieces[Int(generator.next() % UInt64(pieces.count))] }
            let text = "[\"\(body)\"]"
            let expected = try JSONDecoder().decode([String].self, from: Data(text.utf8))
            #expect(try JSONReader.parse(text) == .array([.string(expected[0])]), "\(text)")
        }
    }

    // MARK: Documents

    @Test("parses documents")
    func documents() throws {
        let text = """
             {"jsonrpc": "2.0", "id": 123, "method": "query/execute",
            \t"params": {"sql": "SELECT 1", "params": [1, 2.5, "x", true, false, null, [], {}]}}\r\n
            """
        let expected: JSONValue = [
            "jsonrpc": "2.0", "id": 123, "method": "query/execute",
            "params": ["sql": "SELECT 1", "params": [1, 2.5, "x", true, false, nil, [], [:]]],
        ]
        #expect(try JSONReader.parse(text) == expected)
        #expect(try JSONReader.parse(" \t\n\r1 \n") == .integer(1))
        #expect(try JSONReader.parse("true") == .bool(true))
        #expect(try JSONReader.parse("false") == .bool(false))
        #expect(try JSONReader.parse("null") == .null)
        #expect(try JSONReader.parse(Data("[1]".utf8)) == [1])
        #expect(try JSONReader.parse(Array("[1]".utf8)) == [1])
    }

    @Test("keeps the last of duplicate keys")
    func duplicateKeys() throws {
        #expect(try JSONReader.parse(#"{"a": 1, "b": 2, "a": 3}"#) == ["a": 3, "b": 2])
    }

    @Test("parses what it writes")
    func roundTrip() throws {
        let values: [JSONValue] = [
            nil, true, false, 0, -1, .integer(.max), .integer(.min), 0.5, -1.25e-300, 1e300, "", "a\"b\\c/d\n\té🎉",
            "\u{0}\u{1F}\u{7F}", [], [:], [1, [2, [3, [:]]]], ["a": ["b": ["c": nil]], "é": "ü", "": 1],
        ]
        for value in values {
            var writer = JSONWriter()
            writer.write(value)
            #expect(try JSONReader.parse(writer.bytes) == value)
        }
        let texts = [
            #"{"a":[1,2.5,"x",true,false,null],"b":{"c":{}},"d":[]}"#, #"[-0.5,1e+300,"\u0001"]"#,
        ]
        for text in texts {
            let value = try JSONReader.parse(text)
            #expect(value.description == text)
        }
    }
}

@Suite("JSONReader against Foundation")
struct JSONReaderFuzzTests {
    static let seeds: [String] = [
        #"{"jsonrpc":"2.0","id":123,"method":"query/execute","params":{"sql":"SELECT 1","params":[1,-2.5e3,null]}}"#,
        #"[true,false,null,"a\"b\\c\/d\n\u00e9\ud83c\udf89",0,-0,0.5,1e2,1E-2,{"":[]}]"#,
        #"{"é":"日本","k":[{"a":{}},[[]],"\t"]}"#,
        "  [ 1 , 2 ]\n",
    ]

    /// Decodes with Foundation, as a JSON value, or nil when it refuses.
    static func foundation(_ bytes: [UInt8]) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))
    }

    @Test("accepts what Foundation accepts, with the same values")
    func mutations() throws {
        var generator = SeededRandom(seed: 2024)
        let alphabet = Array(#"{}[]",:\/"0123456789.-+eEtrufalsn u"#.utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xA9, 0xFF]
        var accepted = 0
        for _ in 0..<20_000 {
            var bytes = Array(Self.seeds[Int(generator.next() % UInt64(Self.seeds.count))].utf8)
            for _ in 0...(generator.next() % 3) {
                let position = Int(generator.next() % UInt64(bytes.count + 1))
                let byte = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                switch generator.next() % 3 {
                case 0: bytes.insert(byte, at: position)
                case 1: if position < bytes.count { bytes.remove(at: position) }
                default: if position < bytes.count { bytes[position] = byte }
                }
            }
            let ours = try? JSONReader.parse(bytes)
            let theirs = Self.foundation(bytes)
            let text = String(decoding: bytes, as: UTF8.self)
            if ours == nil && theirs != nil && Self.hasTrailingComma(text) {
                // Foundation accepts trailing commas, which RFC 8259 does not allow.
                continue
            }
            #expect((ours == nil) == (theirs == nil), "\(text) \(bytes)")
            if let ours, let theirs {
                accepted += 1
                // Foundation reads integral numbers as integers: compare the text.
                #expect(Self.normalized(ours) == Self.normalized(theirs), "\(text)")
            }
        }
        #expect(accepted > 1_000)
    }

    /// Whether a comma is followed by a closing bracket or brace, outside strings.
    static func hasTrailingComma(_ text: String) -> Bool {
        text.replacing(/"(\\.|[^"\\])*"/, with: "\"\"").contains(/,[ \t\n\r]*[\]}]/)
    }

    /// A value with every integral double made an integer, as Foundation reads it.
    static func normalized(_ value: JSONValue) -> JSONValue {
        switch value {
        case .double(let double):
            if let integer = Int64(exactly: double) { return .integer(integer) }
            return value
        case .array(let elements): return .array(elements.map(normalized))
        case .object(let members): return .object(members.mapValues(normalized))
        default: return value
        }
    }
}
