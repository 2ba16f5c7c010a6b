/// What a page written to the WAL says about the pages it points to, read
/// as SQLite's file format (§1.6) lays out b-tree and overflow pages.
///
/// Only what the page map needs: a b-tree page's kind, its children, and
/// the first overflow page of each cell that spills.
struct BTreePage {
    enum Kind: UInt8 {
        case interiorIndex = 2
        case interiorTable = 5
        case leafIndex = 10
        case leafTable = 13

        var isTable: Bool { self == .interiorTable || self == .leafTable }
        var isInterior: Bool { self == .interiorIndex || self == .interiorTable }
    }

    var kind: Kind
    /// The pages below this one (interior pages).
    var children: [UInt32] = []
    /// The first overflow page of each cell that does not fit.
    var overflows: [UInt32] = []
    /// The largest payload of its cells, in bytes.
    var largestPayload: UInt64 = 0

    /// Parses a b-tree page; `nil` when the bytes are not a well-formed one.
    ///
    /// - parameter page: the page's number (page 1 starts after the 100-byte database header).
    /// - parameter usableSize: the page size less the reserved bytes.
    /// - parameter pageCount: the database's size in pages: every pointer must lie within it.
    init?(_ bytes: UnsafeRawBufferPointer, page: UInt32, usableSize: Int, pageCount: UInt32) {
        let start = page == 1 ? 100 : 0
        guard bytes.count >= usableSize, usableSize >= 480, let kind = Kind(rawValue: bytes[start]) else { return nil }
        self.kind = kind
        let headerSize = kind.isInterior ? 12 : 8
        let cellCount = Int(bytes.bigEndianUInt16(at: start + 3))
        let pointers = start + headerSize
        let pointersEnd = pointers + 2 * cellCount
        guard pointersEnd <= usableSize else { return nil }
        let rawContent = Int(bytes.bigEndianUInt16(at: start + 5))
        let contentStart = rawContent == 0 ? 65536 : rawContent
        guard contentStart >= pointersEnd || cellCount == 0 else { return nil }
        func valid(_ page: UInt32) -> Bool { page >= 2 && page <= pageCount }
        if kind.isInterior {
            let right = bytes.bigEndianUInt32(at: start + 8)
            guard valid(right) else { return nil }
            children.reserveCapacity(cellCount + 1)
            children.append(right)
        }
        // Payload sizes kept on the page (§1.6): X, M, and K.
        let maxLocal = kind.isTable ? usableSize - 35 : (usableSize - 12) * 64 / 255 - 23
        let minLocal = (usableSize - 12) * 32 / 255 - 23
        for index in 0..<cellCount {
            var offset = Int(bytes.bigEndianUInt16(at: pointers + 2 * index))
            guard offset >= pointersEnd, offset + 4 <= usableSize else { return nil }
            if kind.isInterior {
                let child = bytes.bigEndianUInt32(at: offset)
                guard valid(child) else { return nil }
                children.append(child)
                offset += 4
                if kind == .interiorTable { continue }
            }
            guard let (payload, length) = Self.varint(bytes, at: offset, limit: usableSize) else { return nil }
            offset += length
            largestPayload = max(largestPayload, payload)
            if kind == .leafTable {
                guard let (_, rowidLength) = Self.varint(bytes, at: offset, limit: usableSize) else { return nil }
                offset += rowidLength
            }
            guard payload > UInt64(maxLocal) else {
                guard offset + Int(payload) <= usableSize else { return nil }
                continue
            }
            let size = Int(clamping: payload)
            let surplus = minLocal + (size - minLocal) % (usableSize - 4)
            let local = surplus <= maxLocal ? surplus : minLocal
            guard offset + local + 4 <= usableSize else { return nil }
            let overflow = bytes.bigEndianUInt32(at: offset + local)
            guard valid(overflow) else { return nil }
            overflows.append(overflow)
        }
    }

    /// A SQLite varint (1–9 bytes, big-endian, 7 bits a byte, 8 in the ninth).
    static func varint(_ bytes: UnsafeRawBufferPointer, at offset: Int, limit: Int) -> (UInt64, Int)? {
        var value: UInt64 = 0
        for index in 0..<9 {
            guard offset + index < limit else { return nil }
            let byte = bytes[offset + index]
            if index == 8 { return (value << 8 | UInt64(byte), 9) }
            value = value << 7 | UInt64(byte & 0x7F)
            if byte & 0x80 == 0 { return (value, index + 1) }
        }
        return nil
    }
}
