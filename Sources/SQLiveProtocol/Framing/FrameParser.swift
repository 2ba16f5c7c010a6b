/// Splits a byte stream into Language Server Protocol frames.
///
/// A frame is a header, `Content-Length: N\r\n\r\n`, then N bytes of
/// content. The parser is a pure state machine: feed it bytes as they come,
/// in chunks of any size, and take the frames out with `next()`.
///
/// ```swift
/// var parser = FrameParser()
/// parser.append(chunk)
/// while let event = parser.next() {
///     switch event {
///     case .message(let content): handle(content)
///     case .malformed(let error): answer(error)
///     case .skipped(let count): log("\(count) bytes skipped")
///     }
/// }
/// ```
///
/// ## Tolerance and resynchronisation
///
/// Headers other than `Content-Length` (such as `Content-Type`) are
/// ignored, and header names are case-insensitive. The parser never gives
/// up on its input: after garbage, or a malformed header, it skips to the
/// next `Content-Length` header and goes on from there.
///
/// - A `Content-Length` above `maximumContentLength` is refused without
///   being buffered: the content that follows is scanned for the next header
///   and dropped.
/// - A frame whose content is cut short by a new header (a client that
///   announced more bytes than it sent) is reported as truncated, and the
///   new header is read: valid JSON content can never contain a header,
///   because a header holds a raw line break, which JSON only allows outside
///   strings, where the letters of `Content-Length` cannot appear. When the
///   announced content ends with what may be the start of such a header
///   (`...}Content-Le`), the parser waits for the next bytes to tell; valid
///   JSON never ends that way, so a valid message is never held back.
public struct FrameParser: Sendable {
    /// What the parser found in its input.
    public enum Event: Hashable, Sendable {
        /// The content of a complete frame.
        case message([UInt8])
        /// A frame that cannot be read; the parser has resynchronised.
        case malformed(FramingError)
        /// Bytes that were not part of any frame were dropped.
        case skipped(Int)
    }

    /// Why a frame cannot be read.
    public enum FramingError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The `Content-Length` value is not a number.
        case invalidContentLength(String)
        /// The header never ended: no blank line within `maximumHeaderLength` bytes.
        case headerTooLong
        /// The announced content is larger than the maximum.
        case contentTooLarge(length: Int, maximum: Int)
        /// A new header started before the announced content was complete.
        case truncatedContent(expected: Int, received: Int)

        public var description: String {
            switch self {
            case .invalidContentLength(let value):
                "invalid Content-Length header value '\(value)'"
            case .headerTooLong:
                "the message header does not end with an empty line"
            case .contentTooLarge(let length, let maximum):
                "message of \(length) bytes is larger than the maximum of \(maximum) bytes"
            case .truncatedContent(let expected, let received):
                "message content cut short: \(received) of \(expected) bytes before the next header"
            }
        }
    }

    private enum State: Sendable {
        /// Looking for a header.
        case header
        /// Reading content of known length; `scanned` bytes of it were
        /// already searched for a header.
        case content(length: Int, scanned: Int)
    }

    /// The largest content accepted (64 MiB by default).
    public let maximumContentLength: Int
    /// The longest header accepted, from `Content-Length` to the blank line.
    public let maximumHeaderLength: Int

    // Invariant: bytes before `start` are consumed; `buffer[start...]` is
    // the input not yet parsed.
    private var buffer: [UInt8] = []
    private var start = 0
    /// The most room kept for the next messages once a large one is parsed.
    static let keptCapacity = 1 << 20
    private var state = State.header
    /// Bytes skipped since the last event, reported as one `.skipped`.
    private var skippedCount = 0
    /// An event held back while a `.skipped` that came before it is returned.
    private var pendingEvent: Event?

    public init(maximumContentLength: Int = 64 << 20, maximumHeaderLength: Int = 4096) {
        self.maximumContentLength = maximumContentLength
        self.maximumHeaderLength = maximumHeaderLength
    }

    /// The number of input bytes held, waiting for the rest of a frame.
    public var bufferedByteCount: Int { buffer.count - start }

    /// Adds input bytes.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        if start > 0 && start >= buffer.count / 2 {
            if start == buffer.count && buffer.capacity > Self.keptCapacity {
                // All parsed: the room a large message needed is given back.
                buffer = []
            } else {
                buffer.removeFirst(start)
            }
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next event, or nil when more input is needed.
    public mutating func next() -> Event? {
        if let event = pendingEvent {
            pendingEvent = nil
            return event
        }
        let event = nextEvent()
        if skippedCount > 0 {
            defer { skippedCount = 0 }
            pendingEvent = event
            return .skipped(skippedCount)
        }
        return event
    }

    private mutating func nextEvent() -> Event? {
        while true {
            switch state {
            case .header:
                guard let step = nextHeader() else { return nil }
                switch step {
                case .continue: continue
                case .event(let event): return event
                }
            case .content(let length, let scanned):
                let available = buffer.count - start
                // A header that starts within the content means the client
                // sent less than it announced: valid JSON never holds one.
                let scanEnd = min(buffer.count, start + length + Self.headerLineLookahead)
                if let headerOffset = Self.findHeader(in: buffer, from: start + max(0, scanned - 64), to: scanEnd),
                    headerOffset < start + length
                {
                    let received = headerOffset - start
                    start = headerOffset
                    state = .header
                    return .malformed(.truncatedContent(expected: length, received: received))
                }
                if available >= length {
                    // The end of the content may be the start of a header
                    // line still on its way: wait for it to tell. Valid JSON
                    // never ends that way, so valid messages never wait.
                    if Self.hasIncompleteHeader(
                        in: buffer, from: max(start, buffer.count - Self.headerLineLookahead),
                        before: start + length)
                    {
                        state = .content(length: length, scanned: available)
                        return nil
                    }
                    let content = Array(buffer[start..<start + length])
                    start += length
                    state = .header
                    return .message(content)
                }
                state = .content(length: length, scanned: available)
                return nil
            }
        }
    }

    /// How far past the announced content a header line that starts within
    /// it is looked for.
    private static let headerLineLookahead = 128

    private enum HeaderStep {
        case `continue`
        case event(Event)
    }

    private static let token = Array("content-length".utf8)
    private static let blankLine: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A]

    /// Reads a header at the start of the pending input, skipping whatever
    /// precedes the next `Content-Length`.
    private mutating func nextHeader() -> HeaderStep? {
        guard let tokenOffset = Self.find(Self.token, caseInsensitive: true, in: buffer, from: start, to: buffer.count)
        else {
            // Keep a tail that may be the start of a cut token.
            let keep = min(buffer.count - start, Self.token.count - 1)
            skip(buffer.count - keep - start)
            return nil
        }
        skip(tokenOffset - start)
        guard
            let end = Self.find(
                Self.blankLine, caseInsensitive: false, in: buffer, from: start,
                to: min(buffer.count, start + maximumHeaderLength + Self.blankLine.count))
        else {
            if buffer.count - start >= maximumHeaderLength + Self.blankLine.count {
                skip(Self.token.count)
                return .event(.malformed(.headerTooLong))
            }
            return nil
        }
        let headerEnd = end + Self.blankLine.count
        // The usual header: one Content-Length line with a plain number.
        if let length = Self.plainContentLength(buffer[start..<end]), length <= maximumContentLength,
            Self.find(Self.token, caseInsensitive: true, in: buffer, from: start + 1, to: end) == nil
        {
            skip(headerEnd - start, counted: false)
            state = .content(length: length, scanned: 0)
            return .continue
        }
        // Of several Content-Length headers, the last one counts: an earlier
        // one belongs to a frame cut short.
        var tokens = [start]
        while let later = Self.find(Self.token, caseInsensitive: true, in: buffer, from: tokens.last! + 1, to: end) {
            tokens.append(later)
        }
        var value: String?
        for token in tokens.reversed() {
            value = Self.contentLengthValue(buffer[token..<end])
            if value != nil { break }
        }
        guard let value else {
            // "Content-Lengthy: 1": not our header at all; skip the token.
            skip(Self.token.count)
            return .continue
        }
        guard let length = Int(value), value.allSatisfy(\.isASCIIDigitCharacter), value.count <= 18 else {
            skip(headerEnd - start)
            return .event(.malformed(.invalidContentLength(value)))
        }
        skip(headerEnd - start, counted: false)
        if length > maximumContentLength {
            // The content is not buffered: it is scanned for the next header
            // like any garbage, and dropped.
            return .event(.malformed(.contentTooLarge(length: length, maximum: maximumContentLength)))
        }
        state = .content(length: length, scanned: 0)
        return .continue
    }

    /// The length of a `Content-Length: 123` line written plainly (blanks
    /// around the colon and the number, 1 to 18 digits), read from the bytes
    /// without making a string; nil for anything else, which the general
    /// path then reads or refuses.
    private static func plainContentLength(_ header: ArraySlice<UInt8>) -> Int? {
        var index = header.startIndex + token.count
        while index < header.endIndex, header[index] == 0x20 || header[index] == 0x09 { index += 1 }
        guard index < header.endIndex, header[index] == UInt8(ascii: ":") else { return nil }
        index += 1
        while index < header.endIndex, header[index] == 0x20 || header[index] == 0x09 { index += 1 }
        var length = 0
        var digits = 0
        while index < header.endIndex, header[index] >= 0x30, header[index] <= 0x39, digits < 18 {
            length = length * 10 + Int(header[index] - 0x30)
            digits += 1
            index += 1
        }
        while index < header.endIndex, header[index] == 0x20 || header[index] == 0x09 { index += 1 }
        // The line must end here, or with another header line after it.
        guard digits > 0, index == header.endIndex || header[index] == 0x0D || header[index] == 0x0A else {
            return nil
        }
        return length
    }

    /// The value of a `Content-Length: value` header line, or nil if the
    /// text is not such a line.
    private static func contentLengthValue(_ header: ArraySlice<UInt8>) -> String? {
        var index = header.startIndex + token.count
        while index < header.endIndex, header[index] == 0x20 || header[index] == 0x09 { index += 1 }
        guard index < header.endIndex, header[index] == UInt8(ascii: ":") else { return nil }
        index += 1
        var lineEnd = index
        while lineEnd < header.endIndex, header[lineEnd] != 0x0D, header[lineEnd] != 0x0A { lineEnd += 1 }
        let value = String(decoding: header[index..<lineEnd], as: UTF8.self)
        return value.trimmingASCIIWhitespace()
    }

    private mutating func skip(_ count: Int, counted: Bool = true) {
        guard count > 0 else { return }
        if counted {
            // Line breaks and spaces between frames are not worth a report.
            for byte in buffer[start..<start + count] where !(byte == 0x0D || byte == 0x0A || byte == 0x20) {
                skippedCount += 1
            }
        }
        start += count
    }

    /// The offset of a complete header line (`Content-Length: digits` then
    /// a line break) in a range, if any.
    static func findHeader(in bytes: [UInt8], from: Int, to: Int) -> Int? {
        var offset = max(from, 0)
        while let found = find(token, caseInsensitive: true, in: bytes, from: offset, to: to) {
            var index = found + token.count
            while index < to, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
            if index < to, bytes[index] == UInt8(ascii: ":") {
                index += 1
                while index < to, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
                let digitsStart = index
                while index < to, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
                if index > digitsStart, index + 1 < to, bytes[index] == 0x0D, bytes[index + 1] == 0x0A {
                    return found
                }
            }
            offset = found + 1
        }
        return nil
    }

    /// Whether a header line starts at an offset before `before`, and runs
    /// to the end of the bytes without being complete.
    static func hasIncompleteHeader(in bytes: [UInt8], from: Int, before: Int) -> Bool {
        var candidate = from
        while candidate < before {
            // A header starts a word: "...exec" ends a truncated message,
            // not a header.
            if lowercase(bytes[candidate]) == token[0], candidate == 0 || !isAlphanumeric(bytes[candidate - 1]),
                isIncompleteHeader(bytes, at: candidate)
            {
                return true
            }
            candidate += 1
        }
        return false
    }

    /// Whether `bytes[offset...]` is the start of `Content-Length: digits\r\n`
    /// that ends too soon.
    private static func isIncompleteHeader(_ bytes: [UInt8], at offset: Int) -> Bool {
        var index = offset
        for expected in token {
            guard index < bytes.count else { return true }
            guard lowercase(bytes[index]) == expected else { return false }
            index += 1
        }
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
        guard index < bytes.count else { return true }
        guard bytes[index] == UInt8(ascii: ":") else { return false }
        index += 1
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        guard index < bytes.count else { return true }
        guard bytes[index] == 0x0D else { return false }
        return index + 1 == bytes.count
    }

    /// The offset of a pattern in `bytes[from..<to]`; letters of the input
    /// are lowercased first when `caseInsensitive`.
    static func find(_ pattern: [UInt8], caseInsensitive: Bool, in bytes: [UInt8], from: Int, to: Int) -> Int? {
        guard let first = pattern.first, to - from >= pattern.count else { return nil }
        var offset = from
        let last = to - pattern.count
        while offset <= last {
            let byte = caseInsensitive ? lowercase(bytes[offset]) : bytes[offset]
            if byte == first {
                var matched = true
                for index in 1..<pattern.count {
                    let other = caseInsensitive ? lowercase(bytes[offset + index]) : bytes[offset + index]
                    if other != pattern[index] {
                        matched = false
                        break
                    }
                }
                if matched { return offset }
            }
            offset += 1
        }
        return nil
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        let lower = lowercase(byte)
        return (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(lower)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func lowercase(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}

extension String {
    fileprivate func trimmingASCIIWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}
