import Foundation
import SQLiveEngine

/// How values look in the human-readable modes, and how wide they are on a terminal.
enum CellText {
    /// A REAL as sqlite3 prints it (`%!.15g`).
    static func real(_ value: Double) -> String {
        SQLValue.format(real: value)
    }

    /// A BLOB as an `X'...'` literal (its bytes are rarely printable).
    static func blobLiteral(_ blob: UnsafeRawBufferPointer) -> String {
        var output = OutputBuffer(capacity: blob.count * 2 + 3)
        output.append(blobLiteral: blob)
        return output.string
    }

    /// The text with control characters made visible, so that a grid cell
    /// stays on one line: a newline shows as `\n`, a tab as `\t`.
    static func singleLine(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                result += String(format: "\\x%02x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// The number of terminal columns the text takes: wide (CJK, emoji)
    /// characters take two, combining marks none.
    static func width(_ text: String) -> Int {
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return text.utf8.count }
        var total = 0
        for character in text { total += width(of: character) }
        return total
    }

    static func width(of character: Character) -> Int {
        var width = 0
        for scalar in character.unicodeScalars {
            let properties = scalar.properties
            if properties.generalCategory == .nonspacingMark || properties.generalCategory == .enclosingMark
                || scalar.value == 0x200D || (0xFE00...0xFE0F).contains(scalar.value)
            {
                continue
            }
            if isWide(scalar) || (properties.isEmojiPresentation && scalar.value > 0xFF) {
                width = max(width, 2)
            } else {
                width = max(width, 1)
            }
        }
        return width
    }

    private static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x2FFFD, 0x30000...0x3FFFD:
            true
        default:
            false
        }
    }

    /// The text cut to at most `limit` columns, ending with `…` when cut.
    static func truncate(_ text: String, toWidth limit: Int) -> String {
        guard width(text) > limit else { return text }
        guard limit > 1 else { return limit == 1 ? "…" : "" }
        var result = ""
        var used = 0
        for character in text {
            let w = width(of: character)
            if used + w > limit - 1 { break }
            result.append(character)
            used += w
        }
        return result + "…"
    }
}
