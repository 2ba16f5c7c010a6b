/// Reads the fields of CSV (RFC 4180) or tab-separated text one at a time,
/// as the sqlite3 shell's `.import` reads them.
///
/// A field is quoted when it starts with `"`: then separators and line
/// breaks are part of it, and `""` is one quote. A line ends with LF or
/// CRLF; a UTF-8 byte-order mark at the start is skipped. Malformed quoting
/// is read as sqlite3 reads it, with the same warnings (`unescaped "
/// character`, `unterminated "-quoted field`), each with the line where it
/// is. Bytes are kept as they are: text that is not UTF-8 is imported as is.
///
/// The input is pulled in chunks, so a file of any size is read in
/// constant memory.
///
/// ```swift
/// var reader = DelimitedTextReader(bytes: Array("a,\"b,c\"\n".utf8))
/// reader.readField()   // true: field == "a", terminator == .column
/// reader.readField()   // true: field == "b,c", terminator == .row
/// reader.readField()   // false: terminator == .end
/// ```
struct DelimitedTextReader {
    /// What ended the last field.
    enum Terminator: Equatable {
        /// A column separator: more fields follow on the row.
        case column
        /// A line break: the row ends.
        case row
        /// The end of the input.
        case end
    }

    /// A problem in the text, at a line; reading goes on.
    struct Warning: Equatable {
        var line: Int
        var message: String
    }

    /// The column separator: `,`, a tab, `|`, 0x1F…
    let separator: UInt8
    /// The row separator: a line feed, 0x1E…
    let rowSeparator: UInt8
    /// Whether `"` quotes fields (and a byte-order mark and the CR before a
    /// line feed are dropped): sqlite3's CSV reader; without, its ASCII
    /// reader, which takes every byte as it is.
    let quoting: Bool
    /// The last field's bytes.
    private(set) var field: [UInt8] = []
    /// What ended the last field.
    private(set) var terminator = Terminator.row
    /// The line the reader is on (1-based): where the next field starts.
    private(set) var line = 1

    /// Fills a buffer with the next bytes of the input; returns how many (0 at the end).
    private let fill: (UnsafeMutableRawBufferPointer) -> Int
    private let warn: (Warning) -> Void
    private var chunk: [UInt8]
    private var position = 0
    private var count = 0
    private var ended = false
    private var started = false

    private static let quote = UInt8(ascii: "\"")
    private static let carriageReturn = UInt8(ascii: "\r")
    /// The end of the input, as a byte that is not one.
    private static let endOfInput: Int32 = -1

    /// - parameter fill: Reads the next bytes of the input into the buffer,
    ///   returning how many (0 at the end).
    /// - parameter warn: Receives the warnings, as they are found.
    init(
        separator: UInt8 = UInt8(ascii: ","), rowSeparator: UInt8 = UInt8(ascii: "\n"), quoting: Bool = true,
        chunkSize: Int = 1 << 18,
        fill: @escaping (UnsafeMutableRawBufferPointer) -> Int, warn: @escaping (Warning) -> Void = { _ in }
    ) {
        self.separator = separator
        self.rowSeparator = rowSeparator
        self.quoting = quoting
        self.fill = fill
        self.warn = warn
        chunk = Array(repeating: 0, count: max(chunkSize, 4))
    }

    /// A reader of bytes in memory.
    init(
        bytes: [UInt8], separator: UInt8 = UInt8(ascii: ","), chunkSize: Int = 1 << 18,
        warn: @escaping (Warning) -> Void = { _ in }
    ) {
        var offset = 0
        self.init(
            separator: separator, chunkSize: chunkSize,
            fill: { buffer in
                let count = min(buffer.count, bytes.count - offset)
                bytes.withUnsafeBytes { source in
                    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<offset + count]))
                }
                offset += count
                return count
            }, warn: warn)
    }

    /// Reads the next field into `field`; returns `false`, with the
    /// terminator `.end`, when the input has ended before it.
    @discardableResult
    mutating func readField() -> Bool {
        field.removeAll(keepingCapacity: true)
        var byte = next()
        if !started {
            started = true
            if quoting { byte = skipByteOrderMark(byte) }
        }
        if byte == Self.endOfInput {
            terminator = .end
            return false
        }
        if quoting && byte == Int32(Self.quote) {
            readQuoted()
        } else {
            readPlain(first: UInt8(truncatingIfNeeded: byte))
        }
        return true
    }

    /// A field not in quotes: up to the separator, the line break or the end.
    private mutating func readPlain(first: UInt8) {
        var byte = Int32(first)
        while true {
            if byte == Int32(separator) {
                terminator = .column
                return
            }
            if byte == Int32(rowSeparator) {
                line += 1
                if quoting && field.last == Self.carriageReturn { field.removeLast() }
                terminator = .row
                return
            }
            if byte == Self.endOfInput {
                terminator = .end
                return
            }
            field.append(UInt8(truncatingIfNeeded: byte))
            // The rest of the field in the chunk, at once.
            let (separator, rowSeparator, start, limit) = (separator, rowSeparator, position, count)
            position = chunk.withUnsafeBufferPointer { bytes in
                var end = start
                while end < limit, bytes[end] != separator, bytes[end] != rowSeparator { end += 1 }
                if end > start { field.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<end])) }
                return end
            }
            byte = next()
        }
    }

    /// A field in quotes, read as the sqlite3 shell reads it: `""` is a
    /// quote; the field ends at a quote followed by the separator, a line
    /// break (CRLF too) or the end; a quote followed by anything else is
    /// kept, with a warning, and the field goes on.
    private mutating func readQuoted() {
        let start = line
        var previous: Int32 = 0
        var beforePrevious: Int32 = 0
        let quote = Int32(Self.quote)
        while true {
            let byte = next()
            if byte == Int32(rowSeparator) { line += 1 }
            if byte == quote && previous == quote {
                previous = 0
                continue
            }
            if previous == quote
                && (byte == Int32(separator) || byte == Int32(rowSeparator) || byte == Self.endOfInput)
                || (byte == Int32(rowSeparator) && previous == Int32(Self.carriageReturn) && beforePrevious == quote)
            {
                // Drop the closing quote (and the CR after it).
                while let last = field.popLast(), last != Self.quote {}
                terminator = byte == Int32(separator) ? .column : byte == Self.endOfInput ? .end : .row
                return
            }
            if previous == quote && byte != Int32(Self.carriageReturn) {
                warn(Warning(line: line, message: "unescaped \" character"))
            }
            if byte == Self.endOfInput {
                warn(Warning(line: start, message: "unterminated \"-quoted field"))
                terminator = .end
                return
            }
            field.append(UInt8(truncatingIfNeeded: byte))
            beforePrevious = previous
            previous = byte
        }
    }

    /// Skips a UTF-8 byte-order mark at the start of the input.
    private mutating func skipByteOrderMark(_ first: Int32) -> Int32 {
        guard first == 0xEF else { return first }
        // The chunk holds at least 4 bytes: look ahead without consuming.
        if position + 2 > count { refillKeeping() }
        guard position + 2 <= count, chunk[position] == 0xBB, chunk[position + 1] == 0xBF else { return first }
        position += 2
        return next()
    }

    /// The next byte, or `endOfInput`.
    @inline(__always)
    private mutating func next() -> Int32 {
        if position == count {
            guard refill() else { return Self.endOfInput }
        }
        defer { position += 1 }
        return Int32(chunk[position])
    }

    /// Reads the next chunk; false at the end of the input.
    private mutating func refill() -> Bool {
        guard !ended else { return false }
        position = 0
        count = chunk.withUnsafeMutableBytes { fill($0) }
        if count <= 0 {
            count = 0
            ended = true
            return false
        }
        return true
    }

    /// Moves the unread bytes to the start of the chunk and reads more after them.
    private mutating func refillKeeping() {
        guard !ended else { return }
        let unread = count - position
        chunk.withUnsafeMutableBytes { bytes in
            bytes.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[position..<count]))
        }
        position = 0
        count = unread
        while count < chunk.count, !ended {
            let read = chunk.withUnsafeMutableBytes { fill(UnsafeMutableRawBufferPointer(rebasing: $0[count...])) }
            if read <= 0 { ended = true } else { count += read }
        }
    }
}
