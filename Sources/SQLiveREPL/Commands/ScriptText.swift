/// Script input as it was read: bytes, not yet text.
///
/// Scripts come from files, pipes and the terminal as bytes, and the
/// session keeps them so until it runs them: a NUL byte or bytes that are
/// not UTF-8 must neither end the input nor be replaced on the way to
/// SQLite. `decoded(firstLine:)` either returns the text exactly as
/// written, or refuses it, saying where the offending byte is.
///
/// ```swift
/// let text: ScriptText = "SELECT 1;"
/// try ScriptText(bytes: [0x53, 0x00]).decoded(firstLine: 3)
/// // Refused (line 3): "a NUL byte at column 2: the statement was not run"
/// ```
struct ScriptText: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// Why input cannot run, and on which line of the script.
    struct Refused: Error, Hashable, Sendable, CustomStringConvertible {
        var line: Int
        var description: String
    }

    var bytes: [UInt8]

    init(bytes: some Sequence<UInt8>) {
        self.bytes = Array(bytes)
    }

    init(_ string: String) {
        bytes = Array(string.utf8)
    }

    init(stringLiteral value: String) {
        self.init(value)
    }

    var isEmpty: Bool { bytes.isEmpty }

    /// The text, with any byte that is not UTF-8 shown as U+FFFD: for
    /// display and completion, never for running.
    var description: String { String(decoding: bytes, as: UTF8.self) }

    /// The text exactly as written, or `Refused` for a NUL byte or bytes
    /// that are not UTF-8.
    ///
    /// - parameter firstLine: The script line the text starts on.
    /// - parameter what: What the text is, for the message.
    func decoded(firstLine: Int, what: String = "statement") throws(Refused) -> String {
        // Almost always: UTF-8 without NUL, checked by the standard library's fast validation.
        if !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) { return text }
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let scalar):
                if scalar.count == 1 && scalar.first == 0 {
                    throw refusal(at: offset, firstLine: firstLine, "a NUL byte", what: what)
                }
                offset += scalar.count
            case .error(let length):
                let shown = bytes[offset..<offset + length].map { "0x" + String($0, radix: 16, uppercase: true) }
                throw refusal(
                    at: offset, firstLine: firstLine,
                    "a byte that is not UTF-8 (\(shown.joined(separator: " ")))", what: what,
                    hint: "; convert the script to UTF-8 (iconv -f LATIN1 -t UTF-8), "
                        + "or write such text as a blob: CAST(X'\(bytes[offset..<offset + length].hex)' AS TEXT)")
            case .emptyInput:
                // Valid UTF-8 without NUL: the bytes make a String as they are.
                return String(decoding: bytes, as: UTF8.self)
            }
        }
    }

    private func refusal(
        at offset: Int, firstLine: Int, _ found: String, what: String, hint: String = ""
    ) -> Refused {
        let before = bytes[..<offset]
        let line = firstLine + before.count { $0 == 0x0A }
        let lineStart = before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
        let column = String(decoding: bytes[lineStart..<offset], as: UTF8.self).count + 1
        return Refused(
            line: line, description: "\(found) at column \(column): the \(what) was not run\(hint)")
    }
}

extension ArraySlice<UInt8> {
    fileprivate var hex: String {
        map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }
}
