import SQLiveEngine

/// Bytes of output, appended to by renderers and written out in chunks.
///
/// Renderers append bytes, never build strings: a value read from SQLite
/// goes from its column to the buffer with one copy, which is what keeps a
/// million-row result as fast to print as in the C shell.
///
/// ```swift
/// var output = OutputBuffer()
/// output.append("id=")
/// output.append(integer: 42)
/// output.string   // "id=42"
/// ```
public struct OutputBuffer {
    /// The bytes appended so far.
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    /// The number of bytes appended.
    public var count: Int { bytes.count }

    /// Whether nothing was appended.
    public var isEmpty: Bool { bytes.isEmpty }

    /// The bytes as text (invalid UTF-8 is repaired).
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    public mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    public mutating func append(byte: UInt8) {
        bytes.append(byte)
    }

    public mutating func append(_ buffer: UnsafeBufferPointer<UInt8>) {
        bytes.append(contentsOf: buffer)
    }

    public mutating func append(_ bytes: [UInt8]) {
        self.bytes.append(contentsOf: bytes)
    }

    public mutating func append(contentsOf other: OutputBuffer) {
        bytes.append(contentsOf: other.bytes)
    }

    /// Appends the same byte `count` times.
    public mutating func append(repeating byte: UInt8, count: Int) {
        guard count > 0 else { return }
        bytes.append(contentsOf: repeatElement(byte, count: count))
    }

    /// Appends an integer's decimal digits.
    public mutating func append(integer value: Int64) {
        if value >= 0 && value < 10 {
            bytes.append(UInt8(ascii: "0") &+ UInt8(value))
            return
        }
        SQLiteText.withDigits(of: value) { bytes.append(contentsOf: $0) }
    }

    /// Appends a REAL as the sqlite3 shell prints it (`%!.15g`).
    public mutating func append(real value: Double) {
        SQLValue.withFormatted(real: value) { bytes.append(contentsOf: $0) }
    }

    /// Appends bytes as an `X'...'` literal, as sqlite3 shows a BLOB.
    public mutating func append(blobLiteral blob: UnsafeRawBufferPointer) {
        let digits: StaticString = "0123456789abcdef"
        append("X'")
        digits.withUTF8Buffer { digits in
            for byte in blob {
                bytes.append(digits[Int(byte >> 4)])
                bytes.append(digits[Int(byte & 0xF)])
            }
        }
        bytes.append(UInt8(ascii: "'"))
    }

    /// Drops what was appended after the first `count` bytes.
    public mutating func truncate(to count: Int) {
        bytes.removeLast(bytes.count - count)
    }

    /// Empties the buffer, keeping its capacity.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
    }
}
