/// An error thrown by ``JSONReader`` for input that is not strict JSON.
///
/// The message says what is wrong and, when it helps, where: `offset` is the
/// zero-based byte offset of the offending byte (the input's length when the
/// input ends too early).
///
/// ```swift
/// do {
///     _ = try JSONReader.parse("[1, x]")
/// } catch {
///     print(error)         // unexpected character 'x' at byte 4
///     print(error.offset)  // 4
/// }
/// ```
public struct JSONSyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, with the byte offset when it helps.
    public var message: String

    /// The zero-based byte offset of the error in the input.
    public var offset: Int

    /// Creates an error.
    public init(message: String, offset: Int) {
        self.message = message
        self.offset = offset
    }

    public var description: String { message }
}

extension JSONSyntaxError {
    static func unexpectedEnd(at offset: Int) -> Self {
        Self(message: "unexpected end of input", offset: offset)
    }

    static func invalidUTF8(at offset: Int) -> Self {
        Self(message: "invalid UTF-8 at byte \(offset)", offset: offset)
    }

    static var byteOrderMark: Self {
        Self(message: "unexpected byte order mark at byte 0", offset: 0)
    }

    static func tooDeep(at offset: Int) -> Self {
        Self(message: "nested deeper than \(JSONReader.maximumDepth) levels at byte \(offset)", offset: offset)
    }

    static func numberOutOfRange(at offset: Int) -> Self {
        Self(message: "number out of range at byte \(offset)", offset: offset)
    }

    static func invalidEscape(at offset: Int) -> Self {
        Self(message: "invalid escape sequence at byte \(offset)", offset: offset)
    }

    static func unpairedSurrogate(_ unit: UInt32, at offset: Int) -> Self {
        Self(message: "unpaired surrogate \\u\(hex4(unit)) at byte \(offset)", offset: offset)
    }

    static func controlCharacter(_ byte: UInt8, at offset: Int) -> Self {
        Self(
            message:
                "unescaped control character U+\(hex4(UInt32(byte), uppercase: true)) in a string at byte \(offset)",
            offset: offset)
    }

    /// An unexpected character, shown as itself when printable.
    static func unexpectedCharacter(_ shown: String, at offset: Int) -> Self {
        Self(message: "unexpected character \(shown) at byte \(offset)", offset: offset)
    }

    /// Four hexadecimal digits.
    static func hex4(_ value: UInt32, uppercase: Bool = false) -> String {
        let digits = String(value, radix: 16, uppercase: uppercase)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
