/// Splits a dot-command into arguments, as the sqlite3 shell (3.40.1) does.
///
/// Arguments are separated by blanks. `'...'` groups an argument taken as it
/// is; `"..."` groups one in which a backslash escapes the next character;
/// a quote left open runs to the end of the line. Unquoted and
/// double-quoted arguments then have their backslash escapes resolved
/// (`\t`, `\n`, `\\`, octal `\NNN`…; `resolve_backslashes`). Each token
/// remembers where it ends, so that a command like `.watch NAME SQL` can
/// take the rest of the line verbatim.
struct CommandLineTokens {
    struct Token: Hashable {
        /// The argument without its quotes, escapes resolved (but in
        /// single quotes).
        var text: String
        /// The index just past the token in the line.
        var end: String.Index
        /// The quote it was in, if any.
        var quote: Character?
    }

    var tokens: [Token] = []

    /// Tokens of `line` from `start` (after a dot-command's `.`).
    init(_ line: String, from start: String.Index? = nil) {
        let utf8 = line.utf8
        var index = start ?? utf8.startIndex
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) }
        while index < utf8.endIndex {
            while index < utf8.endIndex, isSpace(utf8[index]) { index = utf8.index(after: index) }
            guard index < utf8.endIndex else { break }
            var bytes: [UInt8] = []
            let first = utf8[index]
            var quote: Character?
            if first == UInt8(ascii: "'") || first == UInt8(ascii: "\"") {
                index = utf8.index(after: index)
                while index < utf8.endIndex, utf8[index] != first {
                    if first == UInt8(ascii: "\""), utf8[index] == UInt8(ascii: "\\"),
                        utf8.index(after: index) < utf8.endIndex
                    {
                        bytes.append(utf8[index])
                        index = utf8.index(after: index)
                    }
                    bytes.append(utf8[index])
                    index = utf8.index(after: index)
                }
                if index < utf8.endIndex { index = utf8.index(after: index) }
                quote = Character(Unicode.Scalar(first))
                if first == UInt8(ascii: "\"") { bytes = Self.resolvingBackslashes(bytes) }
            } else {
                while index < utf8.endIndex, !isSpace(utf8[index]) {
                    bytes.append(utf8[index])
                    index = utf8.index(after: index)
                }
                bytes = Self.resolvingBackslashes(bytes)
            }
            tokens.append(Token(text: String(decoding: bytes, as: UTF8.self), end: index, quote: quote))
        }
    }

    /// The shell's `resolve_backslashes`: `\a \b \t \n \v \f \r \" \' \\`,
    /// octal `\NNN` (up to three digits); a backslash before any other
    /// character is dropped.
    static func resolvingBackslashes(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.contains(UInt8(ascii: "\\")) else { return bytes }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = 0
        func isOctal(_ i: Int) -> Bool { i < bytes.count && bytes[i] >= 0x30 && bytes[i] <= 0x37 }
        while index < bytes.count {
            var byte = bytes[index]
            if byte == UInt8(ascii: "\\") && index + 1 < bytes.count {
                index += 1
                byte = bytes[index]
                switch byte {
                case UInt8(ascii: "a"): byte = 0x07
                case UInt8(ascii: "b"): byte = 0x08
                case UInt8(ascii: "t"): byte = 0x09
                case UInt8(ascii: "n"): byte = 0x0A
                case UInt8(ascii: "v"): byte = 0x0B
                case UInt8(ascii: "f"): byte = 0x0C
                case UInt8(ascii: "r"): byte = 0x0D
                case 0x30...0x37:
                    var value = Int(byte - 0x30)
                    if isOctal(index + 1) {
                        index += 1
                        value = value << 3 + Int(bytes[index] - 0x30)
                        if isOctal(index + 1) {
                            index += 1
                            value = value << 3 + Int(bytes[index] - 0x30)
                        }
                    }
                    byte = UInt8(truncatingIfNeeded: value)
                default: break
                }
            }
            result.append(byte)
            index += 1
        }
        return result
    }
}
