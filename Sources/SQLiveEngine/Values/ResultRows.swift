import Foundation
import GRDBSQLite

/// A result's rows, kept compactly: each value encoded in a few bytes
/// (`RowEncoding`), rows in chunks of up to about 32 KiB that results and
/// the live query state they came from share (copy on write, chunk by
/// chunk). A row is built as `[SQLValue]` when it is read.
///
/// A million rows of two integers take about 10 MB here, where arrays of
/// `SQLValue` took about 100 bytes a row.
///
/// Rows compare as SQLite stores them: text by its bytes (two texts that
/// differ only in their Unicode normalisation differ here, as they do in
/// SQLite), an INTEGER never equal to a REAL.
public struct ResultRows: RandomAccessCollection, Hashable, Sendable, ExpressibleByArrayLiteral,
    CustomStringConvertible
{
    public typealias Element = [SQLValue]
    public typealias Index = Int

    let chunks: [RowChunk]
    /// The index of each chunk's first row.
    let starts: [Int]
    /// Values before each row in its chunk's entries (a kept state's rowid and sort key).
    let skip: Int
    public let count: Int

    init(chunks: [RowChunk], starts: [Int], skip: Int, count: Int) {
        self.chunks = chunks
        self.starts = starts
        self.skip = skip
        self.count = count
    }

    public init() {
        self.init(chunks: [], starts: [], skip: 0, count: 0)
    }

    public init<S: Sequence>(_ rows: S) where S.Element == [SQLValue] {
        var builder = ResultRowsBuilder()
        for row in rows { builder.append(row) }
        self = builder.rows
    }

    public init(arrayLiteral rows: [SQLValue]...) {
        self.init(rows)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }
    public func index(after i: Int) -> Int { i + 1 }
    public func index(before i: Int) -> Int { i - 1 }

    public subscript(position: Int) -> [SQLValue] {
        precondition(position >= 0 && position < count, "row index out of range")
        let (chunk, entry) = locate(position)
        return chunks[chunk].row(entry, skip: skip)
    }

    /// The chunk holding a row, and its entry there.
    func locate(_ position: Int) -> (chunk: Int, entry: Int) {
        Self.locate(position, in: starts)
    }

    /// The chunk holding an entry, by the chunks' first entries, and the entry there.
    static func locate(_ position: Int, in starts: [Int]) -> (chunk: Int, entry: Int) {
        var low = 0
        var high = starts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= position { low = middle } else { high = middle - 1 }
        }
        return (low, position - starts[low])
    }

    public struct Iterator: IteratorProtocol {
        let rows: ResultRows
        var chunk = 0
        var entry = 0
        var remaining: Int

        public mutating func next() -> [SQLValue]? {
            guard remaining > 0 else { return nil }
            while entry >= rows.chunks[chunk].count {
                chunk += 1
                entry = 0
            }
            remaining -= 1
            defer { entry += 1 }
            return rows.chunks[chunk].row(entry, skip: rows.skip)
        }
    }

    public func makeIterator() -> Iterator {
        Iterator(rows: self, remaining: count)
    }

    /// Each row's encoded bytes, in order (without the entries' leading values).
    func forEachEncodedRow(_ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        var remaining = count
        for chunk in chunks where remaining > 0 {
            let entries = Swift.min(chunk.count, remaining)
            remaining -= entries
            chunk.bytes.withUnsafeBufferPointer { bytes in
                for entry in 0..<entries {
                    let range = chunk.rowRange(entry, skip: skip, in: bytes)
                    body(UnsafeBufferPointer(rebasing: bytes[range]))
                }
            }
        }
    }

    public static func == (a: ResultRows, b: ResultRows) -> Bool {
        guard a.count == b.count else { return false }
        if a.skip == b.skip, a.starts == b.starts, zip(a.chunks, b.chunks).allSatisfy({ $0 === $1 }) { return true }
        return a.commonPrefix(with: b) == a.count
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        forEachEncodedRow { row in
            hasher.combine(row.count)
            hasher.combine(bytes: UnsafeRawBufferPointer(row))
        }
    }

    public var description: String { Array(self).description }

    /// Whether entry `ae` of `x` (past `askip` values) and entry `be` of `y` hold the same row bytes.
    private static func rowsEqual(_ x: RowChunk, _ ae: Int, _ askip: Int, _ y: RowChunk, _ be: Int, _ bskip: Int)
        -> Bool
    {
        if x === y, ae == be, askip == bskip { return true }
        return x.bytes.withUnsafeBufferPointer { xb in
            y.bytes.withUnsafeBufferPointer { yb in
                xb[x.rowRange(ae, skip: askip, in: xb)].elementsEqual(yb[y.rowRange(be, skip: bskip, in: yb)])
            }
        }
    }

    /// A row's encoded bytes: equal for two rows exactly when SQLite's
    /// values are (text by its bytes, INTEGER apart from REAL, -0.0 apart
    /// from 0.0), which `[SQLValue]`'s `==` is not.
    func encodedRow(_ position: Int) -> [UInt8] {
        precondition(position >= 0 && position < count, "row index out of range")
        let (chunk, entry) = locate(position)
        return chunks[chunk].bytes.withUnsafeBufferPointer { bytes in
            Array(bytes[chunks[chunk].rowRange(entry, skip: skip, in: bytes)])
        }
    }

    /// How many first rows the two have equal: one walk over both (chunks
    /// both share at the same rows are passed over whole).
    func commonPrefix(with other: ResultRows) -> Int {
        let limit = Swift.min(count, other.count)
        var position = 0
        var (ac, ae, bc, be) = (0, 0, 0, 0)
        while position < limit {
            while ae >= chunks[ac].count { (ac, ae) = (ac + 1, 0) }
            while be >= other.chunks[bc].count { (bc, be) = (bc + 1, 0) }
            let (x, y) = (chunks[ac], other.chunks[bc])
            if x === y, ae == be, skip == other.skip {
                let same = Swift.min(x.count - ae, limit - position)
                position += same
                ae += same
                be += same
                continue
            }
            guard Self.rowsEqual(x, ae, skip, y, be, other.skip) else { break }
            position += 1
            ae += 1
            be += 1
        }
        return position
    }

    /// How many last rows the two have equal, at most `limit`: one walk
    /// back over both.
    func commonSuffix(with other: ResultRows, limit: Int) -> Int {
        guard limit > 0 else { return 0 }
        var (ac, ae) = locate(count - 1)
        var (bc, be) = other.locate(other.count - 1)
        var length = 0
        while length < limit {
            let (x, y) = (chunks[ac], other.chunks[bc])
            if x === y, ae == be, skip == other.skip {
                // The chunk's rows up to these are the same on both sides.
                let same = Swift.min(ae + 1, limit - length)
                length += same
                ae -= same
                be -= same
            } else {
                guard Self.rowsEqual(x, ae, skip, y, be, other.skip) else { break }
                length += 1
                ae -= 1
                be -= 1
            }
            if length >= limit { break }
            while ae < 0 {
                ac -= 1
                ae = chunks[ac].count - 1
            }
            while be < 0 {
                bc -= 1
                be = other.chunks[bc].count - 1
            }
        }
        return length
    }

    /// What the rows weigh printed (`SQLValue.printedByteCount`, and two
    /// bytes a row), without building them.
    public var printedByteCount: Int {
        var total = 0
        var remaining = count
        for chunk in chunks where remaining > 0 {
            if chunk.count <= remaining {
                total += chunk.printed
                remaining -= chunk.count
                continue
            }
            let entries = Swift.min(chunk.count, remaining)
            remaining -= entries
            chunk.bytes.withUnsafeBufferPointer { bytes in
                for entry in 0..<entries {
                    total += RowEncoding.printedByteCount(row: bytes[chunk.rowRange(entry, skip: skip, in: bytes)])
                }
            }
        }
        return total
    }
}

/// Builds `ResultRows` a row at a time (from values, or straight from a
/// statement's columns).
struct ResultRowsBuilder {
    private var store = RowStore(leading: 0)

    mutating func append(_ row: [SQLValue]) {
        store.append { bytes in
            for value in row { RowEncoding.append(value, to: &bytes) }
        }
    }

    /// The statement's current row, columns `0..<columnCount`.
    mutating func append(statement: OpaquePointer, columnCount: Int) {
        store.append { bytes in
            for column in 0..<Int32(columnCount) { RowEncoding.append(column: column, of: statement, to: &bytes) }
        }
    }

    var count: Int { store.count }
    var rows: ResultRows { store.rows(prefix: store.count) }
}

/// Entries in order, in chunks shared with the `ResultRows` taken from
/// them: each entry `leading` values (a kept state's rowid and sort key)
/// then its row's values. Editing a chunk that a result still holds copies
/// that chunk only.
struct RowStore: Sendable {
    private(set) var chunks: [RowChunk] = []
    /// The index of each chunk's first entry.
    private(set) var starts: [Int] = []
    private(set) var count = 0
    /// Values before each entry's row.
    let leading: Int

    /// A chunk is closed to appends past this many bytes or entries, and
    /// split in two past twice as many.
    static let chunkBytes = 32 * 1024
    static let chunkEntries = 1024

    init(leading: Int) {
        self.leading = leading
    }

    /// The first `count` entries' rows (holding only the chunks they are in:
    /// the kept rows past them are not pinned by the result).
    func rows(prefix: Int) -> ResultRows {
        let shown = min(prefix, count)
        guard shown > 0 else { return ResultRows(chunks: [], starts: [], skip: leading, count: 0) }
        let last = locate(shown - 1).chunk
        if last == chunks.count - 1 { return ResultRows(chunks: chunks, starts: starts, skip: leading, count: shown) }
        return ResultRows(
            chunks: Array(chunks[...last]), starts: Array(starts[...last]), skip: leading, count: shown)
    }

    /// Appends an entry whose encoding `encode` writes.
    mutating func append(_ encode: (inout [UInt8]) -> Void) {
        if chunks.isEmpty || chunks[chunks.count - 1].bytes.count >= Self.chunkBytes
            || chunks[chunks.count - 1].count >= Self.chunkEntries
        {
            if let full = chunks.indices.last, isKnownUniquelyReferenced(&chunks[full]) {
                // Closed: its arrays' spare capacity (up to half) let go
                // (not worth a copy when a result holds it).
                chunks[full].shrink()
            }
            chunks.append(RowChunk(printedSkip: leading))
            starts.append(count)
        }
        let last = chunks.count - 1
        unique(last)
        chunks[last].append(encode)
        count += 1
    }

    /// The entry's leading values.
    func leadingValues(at position: Int) -> [SQLValue] {
        let (chunk, entry) = locate(position)
        return chunks[chunk].values(entry, count: leading)
    }

    /// Every entry's first value that is an integer, in order (a kept state's rowids).
    func firstIntegers() -> [Int64] {
        var values: [Int64] = []
        values.reserveCapacity(count)
        for chunk in chunks {
            for entry in 0..<chunk.count { if let value = chunk.firstInteger(entry) { values.append(value) } }
        }
        return values
    }

    /// The entry's first value as an integer (a kept state's rowid).
    func firstInteger(at position: Int) -> Int64? {
        let (chunk, entry) = locate(position)
        return chunks[chunk].firstInteger(entry)
    }

    mutating func insert(at position: Int, _ encode: (inout [UInt8]) -> Void) {
        precondition(position >= 0 && position <= count)
        if position == count {
            append(encode)
            return
        }
        let (chunk, entry) = locate(position)
        unique(chunk)
        chunks[chunk].insert(at: entry, encode)
        for later in (chunk + 1)..<starts.count { starts[later] += 1 }
        count += 1
        if chunks[chunk].count > 1,
            chunks[chunk].bytes.count > 2 * Self.chunkBytes || chunks[chunk].count > 2 * Self.chunkEntries
        {
            let second = chunks[chunk].split()
            chunks.insert(second, at: chunk + 1)
            starts.insert(starts[chunk] + chunks[chunk].count, at: chunk + 1)
        }
    }

    mutating func remove(at position: Int) {
        precondition(position >= 0 && position < count)
        let (chunk, entry) = locate(position)
        unique(chunk)
        chunks[chunk].remove(at: entry)
        for later in (chunk + 1)..<starts.count { starts[later] -= 1 }
        count -= 1
        if chunks[chunk].count == 0 {
            chunks.remove(at: chunk)
            starts.remove(at: chunk)
        }
    }

    /// Keeps the first `kept` entries.
    mutating func truncate(to kept: Int) {
        guard kept < count else { return }
        if kept == 0 {
            self = RowStore(leading: leading)
            return
        }
        let (chunk, entry) = locate(kept)
        chunks.removeLast(chunks.count - chunk - 1)
        starts.removeLast(starts.count - chunk - 1)
        if entry == 0 {
            chunks.removeLast()
            starts.removeLast()
        } else {
            unique(chunk)
            chunks[chunk].truncate(to: entry)
        }
        count = kept
    }

    private func locate(_ position: Int) -> (chunk: Int, entry: Int) {
        ResultRows.locate(position, in: starts)
    }

    /// Copies the chunk first if anything else holds it.
    private mutating func unique(_ chunk: Int) {
        if !isKnownUniquelyReferenced(&chunks[chunk]) { chunks[chunk] = chunks[chunk].copy() }
    }
}

/// Entries' encoded bytes and where each ends.
///
/// Invariant (why `@unchecked Sendable` holds): a chunk is changed only by
/// the `RowStore` that holds the only reference to it
/// (`isKnownUniquelyReferenced`); once a `ResultRows` shares it, it is
/// copied before any change, so a chunk another thread can see never
/// changes.
final class RowChunk: @unchecked Sendable {
    private(set) var bytes: [UInt8] = []
    /// The end of each entry in `bytes`.
    private(set) var ends: [UInt32] = []
    /// What the entries' rows weigh printed, past `printedSkip` leading values each.
    private(set) var printed = 0
    let printedSkip: Int

    init(printedSkip: Int) {
        self.printedSkip = printedSkip
    }

    var count: Int { ends.count }

    func copy() -> RowChunk {
        let copy = RowChunk(printedSkip: printedSkip)
        copy.bytes = bytes
        copy.ends = ends
        copy.printed = printed
        return copy
    }

    @inline(__always)
    func start(_ entry: Int) -> Int { entry == 0 ? 0 : Int(ends[entry - 1]) }

    /// The bytes of an entry's row: past its `skip` leading values.
    func rowRange(_ entry: Int, skip: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        var at = start(entry)
        for _ in 0..<skip { RowEncoding.skip(bytes, at: &at) }
        return at..<Int(ends[entry])
    }

    func row(_ entry: Int, skip: Int) -> [SQLValue] {
        bytes.withUnsafeBufferPointer { bytes in
            var at = start(entry)
            let end = Int(ends[entry])
            for _ in 0..<skip { RowEncoding.skip(bytes, at: &at) }
            var values: [SQLValue] = []
            while at < end { values.append(RowEncoding.decode(bytes, at: &at)) }
            return values
        }
    }

    func values(_ entry: Int, count: Int) -> [SQLValue] {
        bytes.withUnsafeBufferPointer { bytes in
            var at = start(entry)
            return (0..<count).map { _ in RowEncoding.decode(bytes, at: &at) }
        }
    }

    func firstInteger(_ entry: Int) -> Int64? {
        bytes.withUnsafeBufferPointer { bytes in
            var at = start(entry)
            if case .integer(let value) = RowEncoding.decode(bytes, at: &at) { return value }
            return nil
        }
    }

    /// What an entry's row weighs printed.
    private func printedByteCount(entry: Int) -> Int {
        bytes.withUnsafeBufferPointer { bytes in
            RowEncoding.printedByteCount(row: bytes[rowRange(entry, skip: printedSkip, in: bytes)])
        }
    }

    func append(_ encode: (inout [UInt8]) -> Void) {
        encode(&bytes)
        ends.append(UInt32(bytes.count))
        printed += printedByteCount(entry: count - 1)
    }

    func insert(at entry: Int, _ encode: (inout [UInt8]) -> Void) {
        var encoded: [UInt8] = []
        encode(&encoded)
        let at = start(entry)
        bytes.insert(contentsOf: encoded, at: at)
        let length = UInt32(encoded.count)
        for later in entry..<ends.count { ends[later] += length }
        ends.insert(UInt32(at) + length, at: entry)
        printed += printedByteCount(entry: entry)
    }

    func remove(at entry: Int) {
        let range = start(entry)..<Int(ends[entry])
        printed -= printedByteCount(entry: entry)
        bytes.removeSubrange(range)
        ends.remove(at: entry)
        let length = UInt32(range.count)
        for later in entry..<ends.count { ends[later] -= length }
    }

    func truncate(to kept: Int) {
        let end = start(kept)
        for entry in kept..<count { printed -= printedByteCount(entry: entry) }
        bytes.removeSubrange(end...)
        ends.removeSubrange(kept...)
    }

    /// Its arrays at their sizes (appends double their capacity).
    func shrink() {
        if bytes.capacity > bytes.count { bytes = bytes.withUnsafeBufferPointer { Array($0) } }
        if ends.capacity > ends.count { ends = ends.withUnsafeBufferPointer { Array($0) } }
    }

    /// Moves the second half of the entries to a new chunk.
    func split() -> RowChunk {
        let half = count / 2
        let cut = start(half)
        let second = RowChunk(printedSkip: printedSkip)
        second.bytes = Array(bytes[cut...])
        second.ends = ends[half...].map { $0 - UInt32(cut) }
        second.printed = (0..<second.count).reduce(0) { $0 + second.printedByteCount(entry: $1) }
        bytes.removeSubrange(cut...)
        ends.removeSubrange(half...)
        printed -= second.printed
        return second
    }
}

/// How `ResultRows` encode a value: a header varint (LEB128) whose low
/// three bits are the kind and whose rest is the payload (an integer,
/// zigzag-encoded) or the length (text, blob), then the bytes.
enum RowEncoding {
    private static let null: UInt64 = 0
    private static let smallInteger: UInt64 = 1
    private static let wideInteger: UInt64 = 2
    private static let real: UInt64 = 3
    private static let text: UInt64 = 4
    private static let blob: UInt64 = 5

    @inline(__always)
    static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    @inline(__always)
    static func readVarint(_ bytes: UnsafeBufferPointer<UInt8>, at: inout Int) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = bytes[at]
            at += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    @inline(__always)
    static func appendInteger(_ value: Int64, to bytes: inout [UInt8]) {
        let zigzag = UInt64(bitPattern: (value << 1) ^ (value >> 63))
        if zigzag < 1 << 58 {
            appendVarint(zigzag << 3 | smallInteger, to: &bytes)
        } else {
            bytes.append(UInt8(wideInteger))
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }
    }

    @inline(__always)
    static func appendReal(_ value: Double, to bytes: inout [UInt8]) {
        bytes.append(UInt8(real))
        withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
    }

    static func appendBytes(_ kind: UInt64, _ source: UnsafeRawBufferPointer, to bytes: inout [UInt8]) {
        appendVarint(UInt64(source.count) << 3 | kind, to: &bytes)
        bytes.append(contentsOf: source)
    }

    static func append(_ value: SQLValue, to bytes: inout [UInt8]) {
        switch value {
        case .null: bytes.append(UInt8(null))
        case .integer(let value): appendInteger(value, to: &bytes)
        case .real(let value): appendReal(value, to: &bytes)
        case .text(var text):
            text.withUTF8 { appendBytes(Self.text, UnsafeRawBufferPointer($0), to: &bytes) }
        case .blob(let data):
            data.withUnsafeBytes { appendBytes(blob, $0, to: &bytes) }
        }
    }

    /// A statement's column, as `SQLValue.row(of:columnCount:)` reads it.
    static func append(column: Int32, of statement: OpaquePointer, to bytes: inout [UInt8]) {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: appendInteger(sqlite3_column_int64(statement, column), to: &bytes)
        case SQLITE_FLOAT: appendReal(sqlite3_column_double(statement, column), to: &bytes)
        case SQLITE_TEXT:
            let start = sqlite3_column_text(statement, column)
            let count = Int(sqlite3_column_bytes(statement, column))
            let raw = UnsafeBufferPointer(start: start, count: start == nil ? 0 : count)
            if raw.contains(where: { $0 >= 0x80 }) {
                // Stored as the String it reads as (`SQLValue.row(of:)`):
                // text that is not valid UTF-8 is repaired the same way
                // whichever path encodes it, so equal rows have equal bytes.
                var repaired = String(decoding: raw, as: UTF8.self)
                if !repaired.utf8.elementsEqual(raw) {
                    repaired.withUTF8 { appendBytes(text, UnsafeRawBufferPointer($0), to: &bytes) }
                    return
                }
            }
            appendBytes(text, UnsafeRawBufferPointer(raw), to: &bytes)
        case SQLITE_BLOB:
            let start = sqlite3_column_blob(statement, column)
            let count = Int(sqlite3_column_bytes(statement, column))
            appendBytes(blob, UnsafeRawBufferPointer(start: start, count: start == nil ? 0 : count), to: &bytes)
        default: bytes.append(UInt8(null))
        }
    }

    static func decode(_ bytes: UnsafeBufferPointer<UInt8>, at: inout Int) -> SQLValue {
        let header = readVarint(bytes, at: &at)
        switch header & 7 {
        case smallInteger:
            let zigzag = header >> 3
            return .integer(Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1))
        case wideInteger:
            defer { at += 8 }
            return .integer(Int64(littleEndian: load(bytes, at)))
        case real:
            defer { at += 8 }
            return .real(Double(bitPattern: UInt64(littleEndian: load(bytes, at))))
        case text:
            let count = Int(header >> 3)
            defer { at += count }
            return .text(String(decoding: UnsafeBufferPointer(rebasing: bytes[at..<(at + count)]), as: UTF8.self))
        case blob:
            let count = Int(header >> 3)
            defer { at += count }
            return .blob(Data(UnsafeBufferPointer(rebasing: bytes[at..<(at + count)])))
        default:
            return .null
        }
    }

    @inline(__always)
    private static func load<T: FixedWidthInteger>(_ bytes: UnsafeBufferPointer<UInt8>, _ at: Int) -> T {
        UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[at..<(at + MemoryLayout<T>.size)])).loadUnaligned(
            as: T.self)
    }

    static func skip(_ bytes: UnsafeBufferPointer<UInt8>, at: inout Int) {
        let header = readVarint(bytes, at: &at)
        switch header & 7 {
        case wideInteger, real: at += 8
        case text, blob: at += Int(header >> 3)
        default: break
        }
    }

    /// A row's `SQLValue.printedByteCount`s, and two bytes for the row
    /// (text and blobs weighed by their lengths, not built).
    static func printedByteCount(row: Slice<UnsafeBufferPointer<UInt8>>) -> Int {
        let bytes = UnsafeBufferPointer(rebasing: row)
        var at = 0
        var total = 2
        while at < bytes.count {
            let start = at
            let header = readVarint(bytes, at: &at)
            switch header & 7 {
            case text:
                total += SQLValue.printedByteCount(textBytes: Int(header >> 3))
                at += Int(header >> 3)
            case blob:
                total += SQLValue.printedByteCount(blobBytes: Int(header >> 3))
                at += Int(header >> 3)
            default:
                at = start
                total += decode(bytes, at: &at).printedByteCount
            }
        }
        return total
    }
}
