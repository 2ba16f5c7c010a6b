import Foundation
import SQLiveEngine
import SQLiveProtocol

/// An open document's text, as UTF-8 bytes, with what turns LSP positions
/// into byte offsets and back.
///
/// Positions count lines from 0, and characters in the negotiated
/// encoding: UTF-16 code units (the LSP's default) or UTF-8 bytes. A
/// position past the end of its line means the end of the line; a line
/// past the end of the text, the end of the text, as the LSP asks.
struct TextDocument: Sendable {
    let uri: String
    private(set) var version: Int?
    private(set) var bytes: [UInt8]
    /// The byte offset where each line starts.
    private(set) var lineStarts: [Int]

    init(uri: String, version: Int?, text: String) {
        self.uri = uri
        self.version = version
        self.bytes = Array(text.utf8)
        self.lineStarts = Self.lineStarts(of: bytes)
    }

    /// The file the document is, for a `file:` URI.
    var filePath: String? {
        guard let url = URL(string: uri), url.isFileURL else { return nil }
        return url.path
    }

    /// The last component of the URI, for names (`queries.sql`).
    var fileName: String {
        if let filePath { return (filePath as NSString).lastPathComponent }
        return uri.split(separator: "/").last.map(String.init) ?? uri
    }

    /// Applies the edits of one `didChange`, in order.
    mutating func apply(
        _ changes: [DidChangeTextDocumentNotification.Change], version: Int?, encoding: PositionEncoding
    ) {
        for change in changes {
            if let range = change.range {
                let start = offset(of: range.start, encoding: encoding)
                let end = max(start, offset(of: range.end, encoding: encoding))
                bytes.replaceSubrange(start..<end, with: Array(change.text.utf8))
            } else {
                bytes = Array(change.text.utf8)
            }
            lineStarts = Self.lineStarts(of: bytes)
        }
        self.version = version
    }

    private static func lineStarts(of bytes: [UInt8]) -> [Int] {
        var starts = [0]
        for (index, byte) in bytes.enumerated() where byte == 0x0A {
            starts.append(index + 1)
        }
        return starts
    }

    /// The end of a line's content, before its `\n` (and `\r`).
    private func lineEnd(_ line: Int) -> Int {
        var end = line + 1 < lineStarts.count ? lineStarts[line + 1] - 1 : bytes.count
        if end > lineStarts[line], end - 1 < bytes.count, bytes[end - 1] == 0x0D { end -= 1 }
        return end
    }

    /// The byte offset of a position.
    func offset(of position: Position, encoding: PositionEncoding) -> Int {
        guard position.line >= 0 else { return 0 }
        guard position.line < lineStarts.count else { return bytes.count }
        let start = lineStarts[position.line]
        let end = lineEnd(position.line)
        var offset = start
        var units = 0
        while offset < end, units < position.character {
            let length = Self.sequenceLength(bytes[offset])
            units += Self.units(ofSequenceLength: length, encoding: encoding)
            offset = min(offset + length, end)
        }
        return offset
    }

    /// The position of a byte offset (clamped into the text).
    func position(of offset: Int, encoding: PositionEncoding) -> Position {
        let offset = min(max(0, offset), bytes.count)
        var low = 0
        var high = lineStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if lineStarts[middle] <= offset { low = middle } else { high = middle - 1 }
        }
        var index = lineStarts[low]
        var units = 0
        while index < offset {
            let length = Self.sequenceLength(bytes[index])
            units += Self.units(ofSequenceLength: length, encoding: encoding)
            index += length
        }
        return Position(line: low, character: units)
    }

    func range(of bytes: Range<Int>, encoding: PositionEncoding) -> TextRange {
        TextRange(
            start: position(of: bytes.lowerBound, encoding: encoding),
            end: position(of: bytes.upperBound, encoding: encoding))
    }

    /// The length of the UTF-8 sequence a byte starts (1 for a stray byte).
    private static func sequenceLength(_ byte: UInt8) -> Int {
        switch byte {
        case 0xF0...0xF7: 4
        case 0xE0...0xEF: 3
        case 0xC0...0xDF: 2
        default: 1
        }
    }

    /// How many units of the encoding a character of that many UTF-8 bytes takes.
    private static func units(ofSequenceLength length: Int, encoding: PositionEncoding) -> Int {
        switch encoding {
        case .utf8: length
        case .utf16: length == 4 ? 2 : 1
        case .utf32: 1
        }
    }

    /// The database a first line `-- sqlive: database=PATH` names, resolved
    /// against the document's directory; nil when there is none.
    var declaredDatabase: String? {
        let firstLine = bytes[0..<lineEnd(0)]
        let text = String(decoding: firstLine, as: UTF8.self).trimmingCharacters(in: .whitespaces)
        guard text.hasPrefix("--") else { return nil }
        let comment = text.dropFirst(2).trimmingCharacters(in: .whitespaces)
        guard comment.hasPrefix("sqlive:") else { return nil }
        let setting = comment.dropFirst("sqlive:".count).trimmingCharacters(in: .whitespaces)
        guard setting.hasPrefix("database=") else { return nil }
        let path = setting.dropFirst("database=".count).trimmingCharacters(in: .whitespaces)
        guard !path.isEmpty else { return nil }
        if path.hasPrefix("/") || path.hasPrefix("file:") || path == ":memory:" { return path }
        if path.hasPrefix("~/") { return NSString(string: path).expandingTildeInPath }
        guard let filePath else { return path }
        return URL(fileURLWithPath: filePath).deletingLastPathComponent().appendingPathComponent(path).standardized.path
    }
}
