/// Splits a dot-command into arguments, the way sqlite3 does.
///
/// Arguments are separated by white space; `'...'` and `"..."` group an
/// argument with spaces (inside double quotes, `\"` does not end it).
/// Each token remembers where it ends, so that a command like `.watch
/// NAME SQL` can take the rest of the line verbatim, and how it was
/// quoted: sqlite3 resolves backslash escapes (`\t`, `\n`, `\033`, …) in
/// unquoted and double-quoted arguments, not in single-quoted ones
/// (`resolved`).
struct CommandLineTokens {
    struct Token: Hashable {
        /// The argument without its quotes, escapes not resolved.
        var text: String
        /// The index just past the token in the line.
        var end: String.Index
        /// The quote it was in (`'` or `"`), if any.
        var quote: Character? = nil

        /// The argument as sqlite3's dot-commands read it: backslash escapes
        /// resolved, unless it was in single quotes.
        var resolved: String {
            quote == "'" ? text : CommandLineTokens.resolvingEscapes(text)
        }
    }

    var tokens: [Token] = []

    init(_ line: String) {
        var index = line.startIndex
        func isSpace(_ character: Character) -> Bool {
            character == " " || character == "\t" || character == "\n" || character == "\r"
                || character == "\r\n" || character == "\u{0B}" || character == "\u{0C}"
        }
        while index < line.endIndex {
            while index < line.endIndex, isSpace(line[index]) { index = line.index(after: index) }
            guard index < line.endIndex else { break }
            var text = ""
            var quote: Character?
            if line[index] == "'" || line[index] == "\"" {
                quote = line[index]
                index = line.index(after: index)
                while index < line.endIndex, line[index] != quote {
                    if quote == "\"" && line[index] == "\\" && line.index(after: index) < line.endIndex {
                        text.append(line[index])
                        index = line.index(after: index)
                    }
                    text.append(line[index])
                    index = line.index(after: index)
                }
                if index < line.endIndex { index = line.index(after: index) }
            } else {
                while index < line.endIndex, !isSpace(line[index]) {
                    text.append(line[index])
                    index = line.index(after: index)
                }
            }
            tokens.append(Token(text: text, end: index, quote: quote))
        }
    }

    /// C-style escapes, as sqlite3 resolves them in dot-command arguments:
    /// `\a \b \t \n \v \f \r` and `\NNN` (octal, up to three digits); a
    /// backslash before any other character is dropped (`\\` is `\`).
    static func resolvingEscapes(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "\\")) else { return text }
        let bytes = Array(text.utf8)
        var result: [UInt8] = []
        var index = 0
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
                case UInt8(ascii: "0")...UInt8(ascii: "7"):
                    var value = Int(byte - UInt8(ascii: "0"))
                    for _ in 0..<2 {
                        guard index + 1 < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(bytes[index + 1])
                        else { break }
                        index += 1
                        value = (value << 3) + Int(bytes[index] - UInt8(ascii: "0"))
                    }
                    byte = UInt8(truncatingIfNeeded: value)
                default: break
                }
            }
            result.append(byte)
            index += 1
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// An argument that these rules read back as exactly `text`: in double
    /// quotes, with `\\`, `\"` and every control character escaped (for
    /// callers that write dot-commands, such as the command line's options).
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let octal = String(scalar.value, radix: 8)
                result += "\\" + String(repeating: "0", count: 3 - octal.count) + octal
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
