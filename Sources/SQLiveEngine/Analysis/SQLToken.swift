import GRDBSQLite

/// One token of SQL text, as SQLite's tokenizer reads it, with its place in
/// the text's UTF-8 bytes.
///
/// Editors need to know what is under the cursor and where each statement
/// starts and ends; the tokenizer gives both without a parser. Whitespace
/// is dropped; comments are kept, so that a statement's extent can skip
/// them.
///
/// ```swift
/// SQLToken.tokenize("SELECT \"a b\" FROM t; -- done").map(\.kind)
/// // [.word, .quotedName, .word, .word, .semicolon, .comment]
/// ```
public struct SQLToken: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        /// A bare word: a keyword or a name (`SELECT`, `players`).
        case word
        /// A name in double quotes, backquotes or brackets.
        case quotedName
        /// A string literal in single quotes (or a blob literal `x'..'`).
        case string
        case number
        /// `?`, `?1`, `:name`, `@name`, `$name`.
        case parameter
        case semicolon
        case dot
        case comma
        case openParenthesis
        case closeParenthesis
        /// Any other operator or punctuation (`=`, `<>`, `||`, `*`).
        case punctuation
        case comment
    }

    public var kind: Kind
    /// Where the token lies, in bytes of the text's UTF-8 form.
    public var range: Range<Int>

    public init(kind: Kind, range: Range<Int>) {
        self.kind = kind
        self.range = range
    }

    /// Whether the token can name a table, column or alias.
    public var isName: Bool { kind == .word || kind == .quotedName }

    /// Splits text into tokens. An unterminated literal or comment runs to
    /// the end of the text.
    public static func tokenize(_ text: String) -> [SQLToken] {
        tokenize(Array(text.utf8))
    }

    /// Whether a byte can be part of a bare name, as SQLite's tokenizer reads
    /// it: letters, digits, `_`, `$`, and any byte of a non-ASCII character.
    public static func isNameByte(_ byte: UInt8) -> Bool {
        byte >= 0x80 || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$")
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
    }

    /// Splits UTF-8 bytes into tokens.
    public static func tokenize(_ bytes: [UInt8]) -> [SQLToken] {
        var tokens: [SQLToken] = []
        forEach(in: bytes) { tokens.append($0) }
        return tokens
    }

    /// Hands each token of UTF-8 bytes to `body`, in order, without
    /// collecting them: the one lexer of the engine, also under
    /// `SQLScript`'s scan of every script that runs.
    static func forEach(in bytes: [UInt8], _ body: (SQLToken) -> Void) {
        var index = 0
        let count = bytes.count

        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        func isHexadecimal(_ start: Int) -> Bool {
            start + 1 < count && bytes[start] == UInt8(ascii: "0") && bytes[start + 1] | 0x20 == UInt8(ascii: "x")
        }
        func skip(past quote: UInt8) {
            index += 1
            while index < count {
                if bytes[index] == quote {
                    if quote != UInt8(ascii: "]"), index + 1 < count, bytes[index + 1] == quote {
                        index += 2
                        continue
                    }
                    index += 1
                    return
                }
                index += 1
            }
        }

        while index < count {
            let start = index
            let byte = bytes[index]
            let next: UInt8 = index + 1 < count ? bytes[index + 1] : 0
            let kind: Kind
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D, 0x0C:
                index += 1
                continue
            case UInt8(ascii: "-") where next == UInt8(ascii: "-"):
                while index < count, bytes[index] != 0x0A { index += 1 }
                kind = .comment
            case UInt8(ascii: "/") where next == UInt8(ascii: "*"):
                index += 2
                while index + 1 < count, !(bytes[index] == UInt8(ascii: "*") && bytes[index + 1] == UInt8(ascii: "/")) {
                    index += 1
                }
                index = min(index + 2, count)
                kind = .comment
            case UInt8(ascii: ";"):
                index += 1
                kind = .semicolon
            case UInt8(ascii: ","):
                index += 1
                kind = .comma
            case UInt8(ascii: "("):
                index += 1
                kind = .openParenthesis
            case UInt8(ascii: ")"):
                index += 1
                kind = .closeParenthesis
            case UInt8(ascii: "'"):
                skip(past: byte)
                kind = .string
            case UInt8(ascii: "x") where next == UInt8(ascii: "'"), UInt8(ascii: "X") where next == UInt8(ascii: "'"):
                index += 1
                skip(past: UInt8(ascii: "'"))
                kind = .string
            case UInt8(ascii: "\""), UInt8(ascii: "`"):
                skip(past: byte)
                kind = .quotedName
            case UInt8(ascii: "["):
                skip(past: UInt8(ascii: "]"))
                kind = .quotedName
            case UInt8(ascii: "."):
                if isDigit(next) {
                    index += 1
                    while index < count, isNameByte(bytes[index]) || bytes[index] == UInt8(ascii: ".") { index += 1 }
                    kind = .number
                } else {
                    index += 1
                    kind = .dot
                }
            case UInt8(ascii: "?"):
                index += 1
                while index < count, isDigit(bytes[index]) { index += 1 }
                kind = .parameter
            case UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "$"):
                index += 1
                while index < count, isNameByte(bytes[index]) || bytes[index] == UInt8(ascii: ":") { index += 1 }
                kind = index - start > 1 ? .parameter : .punctuation
            default:
                if isDigit(byte) {
                    // Digits, a fraction, an exponent with its sign, hex.
                    index += 1
                    while index < count {
                        let current = bytes[index]
                        if isNameByte(current) || current == UInt8(ascii: ".") {
                            index += 1
                        } else if current == UInt8(ascii: "+") || current == UInt8(ascii: "-"),
                            bytes[index - 1] | 0x20 == UInt8(ascii: "e"), !isHexadecimal(start)
                        {
                            index += 1
                        } else {
                            break
                        }
                    }
                    kind = .number
                } else if isNameByte(byte) {
                    while index < count, isNameByte(bytes[index]) { index += 1 }
                    kind = .word
                } else {
                    index += 1
                    // Two-character operators: <> <= >= != == || << >> ->
                    if index < count {
                        let pair = (byte, bytes[index])
                        switch pair {
                        case (UInt8(ascii: "<"), UInt8(ascii: ">")), (UInt8(ascii: "<"), UInt8(ascii: "=")),
                            (UInt8(ascii: ">"), UInt8(ascii: "=")), (UInt8(ascii: "!"), UInt8(ascii: "=")),
                            (UInt8(ascii: "="), UInt8(ascii: "=")), (UInt8(ascii: "|"), UInt8(ascii: "|")),
                            (UInt8(ascii: "<"), UInt8(ascii: "<")), (UInt8(ascii: ">"), UInt8(ascii: ">")),
                            (UInt8(ascii: "-"), UInt8(ascii: ">")):
                            index += 1
                            if pair == (UInt8(ascii: "-"), UInt8(ascii: ">")), index < count,
                                bytes[index] == UInt8(ascii: ">")
                            {
                                index += 1
                            }
                        default: break
                        }
                    }
                    kind = .punctuation
                }
            }
            body(SQLToken(kind: kind, range: start..<index))
        }
    }

    /// A name as SQL text: bare when it can be (ASCII letters, digits and
    /// `_`, not starting with a digit, not a keyword), else in double quotes.
    ///
    /// ```swift
    /// SQLToken.quoted("players")    // players
    /// SQLToken.quoted("my table")   // "my table"
    /// SQLToken.quoted("order")      // "order"
    /// ```
    public static func quoted(_ name: String) -> String {
        let isBare =
            !name.isEmpty && !keywords.contains(name.uppercased())
            && name.utf8.enumerated().allSatisfy { offset, byte in
                byte == UInt8(ascii: "_") || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
                    || (offset > 0 && byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            }
        return isBare ? name : doubleQuoted(name)
    }

    /// A name in double quotes, whatever it is, its quotes doubled (SQLite's
    /// `%w`), as the sqlite3 shell writes the names it makes up.
    ///
    /// ```swift
    /// SQLToken.doubleQuoted("players")   // "players"
    /// SQLToken.doubleQuoted("a\"b")      // "a""b"
    /// ```
    public static func doubleQuoted(_ name: String) -> String {
        // By scalar: a quote followed by a combining mark is one Character.
        var quoted = "\"".unicodeScalars
        for scalar in name.unicodeScalars {
            quoted.append(scalar)
            if scalar == "\"" { quoted.append(scalar) }
        }
        quoted.append("\"")
        return String(quoted)
    }

    /// The name a token spells: quotes removed and doubled quotes undone.
    public static func name(of token: SQLToken, in bytes: [UInt8]) -> String {
        let slice = bytes[token.range]
        guard token.kind == .quotedName, slice.count >= 2, let first = slice.first else {
            return String(decoding: slice, as: UTF8.self)
        }
        let close: UInt8 = first == UInt8(ascii: "[") ? UInt8(ascii: "]") : first
        var inner = Array(slice.dropFirst())
        if inner.last == close { inner.removeLast() }
        if close != UInt8(ascii: "]") {
            var unescaped: [UInt8] = []
            var index = 0
            while index < inner.count {
                unescaped.append(inner[index])
                if inner[index] == close, index + 1 < inner.count, inner[index + 1] == close { index += 1 }
                index += 1
            }
            inner = unescaped
        }
        return String(decoding: inner, as: UTF8.self)
    }

    /// SQLite's keywords, from the library itself, upper-cased.
    public static let keywords: Set<String> = {
        var keywords = Set<String>()
        for index in 0..<sqlite3_keyword_count() {
            var name: UnsafePointer<CChar>?
            var length: Int32 = 0
            guard sqlite3_keyword_name(index, &name, &length) == SQLITE_OK, let name else { continue }
            let bytes = UnsafeRawBufferPointer(start: name, count: Int(length))
            keywords.insert(String(decoding: bytes, as: UTF8.self).uppercased())
        }
        return keywords
    }()
}
