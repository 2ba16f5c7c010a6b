import SQLiveTestSupport
import Testing

@testable import SQLiveProtocol

@Suite("Framing")
struct FrameParserTests {
    /// Feeds input in chunks of the given sizes (cycling), collecting events.
    func events(_ input: [UInt8], chunkSizes: [Int], parser: FrameParser = FrameParser())
        -> [FrameParser.Event]
    {
        var parser = parser
        var events: [FrameParser.Event] = []
        var offset = 0
        var chunk = 0
        while offset < input.count {
            let size = max(1, chunkSizes[chunk % chunkSizes.count])
            chunk += 1
            let end = min(input.count, offset + size)
            parser.append(input[offset..<end])
            offset = end
            while let event = parser.next() { events.append(event) }
        }
        return events
    }

    func frame(_ text: String) -> [UInt8] {
        MessageFraming.frame(Array(text.utf8))
    }

    func messages(_ events: [FrameParser.Event]) -> [String] {
        events.compactMap { event in
            if case .message(let content) = event { return String(decoding: content, as: UTF8.self) }
            return nil
        }
    }

    @Test func oneMessageAtOnce() {
        let input = frame(#"{"jsonrpc":"2.0","method":"exit"}"#)
        #expect(
            events(input, chunkSizes: [input.count]) == [.message(Array(#"{"jsonrpc":"2.0","method":"exit"}"#.utf8))])
    }

    @Test func oneByteAtATime() {
        let texts = [#"{"a":1}"#, #"{"b":"é ü 🎉"}"#, "[]", #"{"c":"Content-Length: 5"}"#]
        let input = texts.flatMap(frame)
        #expect(messages(events(input, chunkSizes: [1])) == texts)
    }

    @Test(arguments: [2, 3, 7, 13, 64, 1000])
    func arbitraryChunks(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let texts = (0..<50).map { index in
            #"{"index":\#(index),"text":"\#(String(repeating: "é", count: Int(random.next() % 100)))"}"#
        }
        let input = texts.flatMap(frame)
        let sizes = (0..<20).map { _ in Int(random.next() % 200) + 1 }
        #expect(messages(events(input, chunkSizes: sizes)) == texts)
    }

    @Test func countsBytesNotCharacters() {
        // "é" is two bytes in UTF-8: the length is 12, not 10.
        let text = #"{"x":"éé"}"#
        #expect(Array(text.utf8).count == 12)
        let input = Array("Content-Length: 12\r\n\r\n\(text)".utf8)
        #expect(messages(events(input, chunkSizes: [1])) == [text])
    }

    @Test func otherHeadersAreIgnored() {
        let input = Array(
            "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length:   2\r\nX-Other: 1\r\n\r\n{}"
                .utf8)
        #expect(messages(events(input, chunkSizes: [1])) == ["{}"])
        let reversed = Array("Content-Length: 2\r\nContent-Type: application/json\r\n\r\n[]".utf8)
        #expect(messages(events(reversed, chunkSizes: [5])) == ["[]"])
    }

    @Test func garbageBeforeAFrameIsSkipped() {
        let input = Array("garbage\u{01}\u{02} more garbage".utf8) + frame("{}")
        let result = events(input, chunkSizes: [3])
        #expect(messages(result) == ["{}"])
        #expect(result.contains { if case .skipped = $0 { true } else { false } })
    }

    @Test func invalidContentLengthResynchronises() {
        let input = Array("Content-Length: abc\r\n\r\n{\"lost\":1}".utf8) + frame("{\"kept\":2}")
        let result = events(input, chunkSizes: [1])
        #expect(result.contains(.malformed(.invalidContentLength("abc"))))
        #expect(messages(result) == ["{\"kept\":2}"])
    }

    /// Headers the plain fast path reads, and ones it leaves to the general
    /// path: both agree with what the general path alone decided.
    @Test(
        arguments: [
            ("Content-Length: 0002\r\n\r\n{}", ["{}"], nil),
            ("Content-Length:2 \r\n\r\n{}", ["{}"], nil),
            ("Content-Length :\t2\t\r\nX: y\r\n\r\n{}", ["{}"], nil),
            ("Content-Length: 9\r\nContent-Length: 2\r\n\r\n{}", ["{}"], nil),
            ("Content-Length: 2x\r\n\r\n{}", [], "2x"),
            ("Content-Length: 1234567890123456789\r\n\r\n{}", [], "1234567890123456789"),
            ("Content-Length: -2\r\n\r\n{}", [], "-2"),
        ] as [(String, [String], String?)])
    func headerValues(_ header: String, _ expected: [String], _ invalid: String?) {
        let input = Array(header.utf8) + frame("{\"next\":1}")
        let result = events(input, chunkSizes: [input.count])
        #expect(messages(result) == expected + ["{\"next\":1}"])
        if let invalid {
            #expect(result.contains(.malformed(.invalidContentLength(invalid))))
        }
    }

    @Test func missingContentLengthResynchronises() {
        let input = Array("Content-Type: text/plain\r\n\r\n{\"lost\":1}".utf8) + frame("{\"kept\":2}")
        #expect(messages(events(input, chunkSizes: [4])) == ["{\"kept\":2}"])
    }

    @Test func oversizedContentIsRefusedWithoutBuffering() {
        var parser = FrameParser(maximumContentLength: 1000)
        parser.append(Array("Content-Length: 999999999999\r\n\r\n".utf8))
        #expect(parser.next() == .malformed(.contentTooLarge(length: 999_999_999_999, maximum: 1000)))
        // The announced content streams through without being kept.
        for _ in 0..<100 {
            parser.append([UInt8](repeating: UInt8(ascii: "x"), count: 10_000))
            while let event = parser.next() {
                if case .message = event { Issue.record("unexpected message") }
            }
            #expect(parser.bufferedByteCount < 100)
        }
        parser.append(frame("{}"))
        var found: [FrameParser.Event] = []
        while let event = parser.next() { found.append(event) }
        #expect(messages(found) == ["{}"])
    }

    @Test func truncatedContentResynchronisesOnTheNextHeader() {
        // The first frame announces 100 bytes but holds 10.
        let input = Array("Content-Length: 100\r\n\r\n{\"short\":1".utf8) + frame("{\"kept\":2}")
        let result = events(input, chunkSizes: [1])
        #expect(result.contains { if case .malformed(.truncatedContent) = $0 { true } else { false } })
        #expect(messages(result) == ["{\"kept\":2}"])
    }

    @Test func aLengthThatOverlapsTheNextHeaderResynchronises() {
        // The first frame announces 5 bytes more than it holds: its content
        // would swallow the start of the next header.
        let input = Array("Content-Length: 15\r\n\r\n{\"short\":1}".utf8) + frame("{\"kept\":2}")
        for size in [1, 7, input.count] {
            #expect(messages(events(input, chunkSizes: [size])) == ["{\"kept\":2}"])
        }
    }

    @Test func truncatedJSONIsDeliveredAtOnce() {
        // Content that ends like the start of a header, but inside a word.
        var parser = FrameParser()
        parser.append(Array("Content-Length: 16\r\n\r\n{\"method\": \"exec".utf8))
        #expect(parser.next() == .message(Array("{\"method\": \"exec".utf8)))
    }

    @Test func headerWithoutEndIsDropped() {
        var parser = FrameParser(maximumHeaderLength: 64)
        parser.append(Array("Content-Length: 5".utf8) + [UInt8](repeating: UInt8(ascii: " "), count: 200))
        var result: [FrameParser.Event] = []
        while let event = parser.next() { result.append(event) }
        parser.append(frame("{}"))
        while let event = parser.next() { result.append(event) }
        #expect(result.contains(.malformed(.headerTooLong)))
        #expect(messages(result) == ["{}"])
    }

    @Test func theLastContentLengthOfAHeaderCounts() {
        // A header cut short, then a complete frame.
        let input = Array("Content-Length: 50\r\nContent-Length: 2\r\n\r\n{}".utf8)
        #expect(messages(events(input, chunkSizes: [1])) == ["{}"])
    }

    @Test func emptyContent() {
        let input = Array("Content-Length: 0\r\n\r\n".utf8) + frame("{}")
        #expect(events(input, chunkSizes: [1]) == [.message([]), .message(Array("{}".utf8))])
    }
}
