/// Text with escape sequences, measured and cut as the terminal shows it.
enum TerminalText {
    /// The columns the text takes on the screen: escape sequences take none.
    static func width(_ text: String) -> Int {
        var width = 0
        var escape = EscapeScanner()
        for character in text where !escape.consume(character) {
            width += CellText.width(of: character)
        }
        return width
    }

    /// The text cut to at most `limit` columns, ending with `…` when cut
    /// (and with a reset when it held escape sequences, so that no colour
    /// runs on). Escape sequences are kept whole.
    static func clip(_ text: String, toWidth limit: Int) -> String {
        guard width(text) > limit else { return text }
        var result = ""
        var used = 0
        var sawEscape = false
        var escape = EscapeScanner()
        for character in text {
            if escape.consume(character) {
                sawEscape = true
                result.append(character)
                continue
            }
            let width = CellText.width(of: character)
            if used + width > limit - 1 { break }
            result.append(character)
            used += width
        }
        if limit >= 1 { result += "…" }
        return sawEscape ? result + ANSI.reset : result
    }

    /// Recognises CSI sequences (`ESC [ ... final`) and two-character
    /// escapes (`ESC 7`) one character at a time.
    private struct EscapeScanner {
        enum State { case text, escape, csi }
        var state = State.text

        /// Whether the character belongs to an escape sequence.
        mutating func consume(_ character: Character) -> Bool {
            switch state {
            case .text:
                guard character == "\u{1B}" else { return false }
                state = .escape
            case .escape:
                state = character == "[" ? .csi : .text
            case .csi:
                if let ascii = character.asciiValue, (0x40...0x7E).contains(ascii) { state = .text }
            }
            return true
        }
    }
}
