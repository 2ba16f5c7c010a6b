/// The rows one version of a b-tree page holds: each cell's key and its
/// whole payload, the part that spills read from its overflow pages
/// (fileformat2 §1.6).
///
/// A table (rowid) b-tree keeps rows on its leaves only; an index b-tree
/// — a `WITHOUT ROWID` table's rows are one — keeps entries on interior
/// pages too.
enum BTreeCells {
    struct Cell: Equatable {
        /// The rowid, for a table b-tree's leaf cell.
        var rowid: Int64?
        /// The record: a table row, or an index entry.
        var payload: [UInt8]
    }

    struct Page: Equatable {
        var isTable: Bool
        var cells: [Cell]
        /// Every overflow page the cells' payloads were read from.
        var overflowPages: [UInt32]
    }

    enum Failure: Error, Equatable {
        /// The bytes are not a well-formed b-tree page.
        case notBTree
        /// An overflow page could not be read (or is not what a chain needs).
        case overflowUnreadable(UInt32)
        /// A payload larger than `largestPayload`: not read, its rows unknown.
        case tooLarge
    }

    /// The largest payload read (16 MiB): a row past it is told unknown
    /// rather than copied (a 70 MB blob would cost three copies of it).
    static let largestPayload = 16 << 20
    /// How the feed says why a table's rows are unknown for that reason
    /// (a live query kept from rows then stops keeping it).
    static let tooLargeReason = "a row over 16 MiB is not read"

    /// Reads every cell of a page version.
    ///
    /// - parameter readPage: the bytes of another page of the same version
    ///   of the file (the overflow pages), `nil` when out of reach.
    static func read(
        _ bytes: UnsafeRawBufferPointer, page: UInt32, usableSize: Int, pageCount: UInt32,
        readPage: (UInt32) -> [UInt8]?
    ) -> Result<Page, Failure> {
        let start = page == 1 ? 100 : 0
        guard bytes.count >= usableSize, usableSize >= 480, let kind = BTreePage.Kind(rawValue: bytes[start]) else {
            return .failure(.notBTree)
        }
        var result = Page(isTable: kind.isTable, cells: [], overflowPages: [])
        // A table b-tree's interior cells are keys and child pointers only.
        if kind == .interiorTable { return .success(result) }
        let headerSize = kind.isInterior ? 12 : 8
        let cellCount = Int(bytes.bigEndianUInt16(at: start + 3))
        let pointers = start + headerSize
        guard pointers + 2 * cellCount <= usableSize else { return .failure(.notBTree) }
        let maxLocal = kind.isTable ? usableSize - 35 : (usableSize - 12) * 64 / 255 - 23
        let minLocal = (usableSize - 12) * 32 / 255 - 23
        result.cells.reserveCapacity(cellCount)
        for index in 0..<cellCount {
            var offset = Int(bytes.bigEndianUInt16(at: pointers + 2 * index))
            guard offset >= pointers + 2 * cellCount, offset < usableSize else { return .failure(.notBTree) }
            if kind.isInterior { offset += 4 }
            guard let (payloadSize, length) = BTreePage.varint(bytes, at: offset, limit: usableSize) else {
                return .failure(.notBTree)
            }
            offset += length
            var rowid: Int64?
            if kind == .leafTable {
                guard let (key, keyLength) = BTreePage.varint(bytes, at: offset, limit: usableSize) else {
                    return .failure(.notBTree)
                }
                rowid = Int64(bitPattern: key)
                offset += keyLength
            }
            guard payloadSize <= 0x7FFF_FFFF else { return .failure(.notBTree) }
            guard payloadSize <= largestPayload else { return .failure(.tooLarge) }
            let size = Int(payloadSize)
            if size <= maxLocal {
                guard offset + size <= usableSize else { return .failure(.notBTree) }
                result.cells.append(Cell(rowid: rowid, payload: Array(bytes[offset..<(offset + size)])))
                continue
            }
            let surplus = minLocal + (size - minLocal) % (usableSize - 4)
            let local = surplus <= maxLocal ? surplus : minLocal
            guard offset + local + 4 <= usableSize else { return .failure(.notBTree) }
            var payload = [UInt8]()
            payload.reserveCapacity(size)
            payload.append(contentsOf: bytes[offset..<(offset + local)])
            var next = bytes.bigEndianUInt32(at: offset + local)
            var left = size - local
            // A chain is as long as its payload needs, and no longer.
            var budget = left / (usableSize - 4) + 1
            while left > 0 {
                guard next >= 2, next <= pageCount, budget > 0, let overflow = readPage(next),
                    overflow.count >= usableSize
                else { return .failure(.overflowUnreadable(next)) }
                budget -= 1
                result.overflowPages.append(next)
                let take = min(left, usableSize - 4)
                payload.append(contentsOf: overflow[4..<(4 + take)])
                left -= take
                next = overflow.withUnsafeBytes { $0.bigEndianUInt32(at: 0) }
            }
            result.cells.append(Cell(rowid: rowid, payload: payload))
        }
        return .success(result)
    }
}
