/// The bytes of SQLite's write-ahead log and of its wal-index header, as
/// the file format (§4) and `wal.c` describe them.
///
/// ```text
///  -wal:  header (32 bytes, big-endian)        frame (24-byte header + page) …
///         magic version pageSize checkpoint     pageNumber commitSize salt-1 salt-2 checksum-1 checksum-2
///         salt-1 salt-2 checksum-1 checksum-2
///  -shm:  wal-index header, twice (48 bytes each, native byte order), then the checkpoint info
/// ```
///
/// Every frame's checksum runs over the header and every frame before it;
/// a frame is valid when its salts are the header's and its checksum is
/// the running one.
enum WALFormat {
    static let headerSize = 32
    static let frameHeaderSize = 24
    static let indexHeaderSize = 48

    /// The 32-byte header of the `-wal` file.
    struct Header: Equatable {
        var pageSize: Int
        /// Whether checksum words are read big-endian (magic `0x377f0683`).
        var bigEndianChecksum: Bool
        /// Salt-1 and salt-2 as stored (8 bytes, big-endian): a new value is a new generation of the log.
        var salt: UInt64
        /// The checksum of the header, the seed of frame 1's.
        var checksum: Checksum

        /// Parses and checks a header; `nil` when it is not a valid one.
        init?(_ bytes: UnsafeRawBufferPointer) {
            guard bytes.count >= WALFormat.headerSize else { return nil }
            let magic = bytes.bigEndianUInt32(at: 0)
            guard magic & 0xFFFF_FFFE == 0x377F_0682, bytes.bigEndianUInt32(at: 4) == 3_007_000 else { return nil }
            let pageSize = Int(bytes.bigEndianUInt32(at: 8))
            guard pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0 else { return nil }
            self.pageSize = pageSize
            bigEndianChecksum = magic & 1 == 1
            salt = bytes.bigEndianUInt64(at: 16)
            checksum = Checksum(bytes.bigEndianUInt32(at: 24), bytes.bigEndianUInt32(at: 28))
            let computed = Checksum.zero.adding(
                UnsafeRawBufferPointer(rebasing: bytes[0..<24]), bigEndian: bigEndianChecksum)
            guard computed == checksum else { return nil }
        }
    }

    /// A frame's 24-byte header.
    struct FrameHeader {
        var pageNumber: UInt32
        /// The database size in pages after the commit, on a commit frame; 0 otherwise.
        var commitSize: UInt32
        var salt: UInt64
        var checksum: Checksum

        init(_ bytes: UnsafeRawBufferPointer) {
            pageNumber = bytes.bigEndianUInt32(at: 0)
            commitSize = bytes.bigEndianUInt32(at: 4)
            salt = bytes.bigEndianUInt64(at: 8)
            checksum = Checksum(bytes.bigEndianUInt32(at: 16), bytes.bigEndianUInt32(at: 20))
        }
    }

    /// One copy of the wal-index header, at the start of `-shm`.
    struct IndexHeader: Equatable {
        /// Grows by one with each commit; survives WAL resets; back to 0
        /// only when the wal-index is rebuilt.
        var change: UInt32
        /// The last frame readers may use.
        var maxFrame: UInt32
        /// The database size in pages.
        var pageCount: UInt32
        /// The checksum of frame `maxFrame`.
        var frameChecksum: Checksum
        /// The salts of the log's current generation, as stored in the `-wal` header.
        var salt: UInt64
        var pageSize: Int
        var bigEndianChecksum: Bool

        /// Parses the two copies of the header (96 bytes); `nil` unless
        /// they agree, are initialized and pass their checksum.
        init?(copies bytes: UnsafeRawBufferPointer) {
            let size = WALFormat.indexHeaderSize
            guard bytes.count >= 2 * size,
                bytes[0..<size].elementsEqual(bytes[size..<(2 * size)]),
                bytes.load(fromByteOffset: 0, as: UInt32.self) == 3_007_000,
                bytes[12] != 0
            else { return nil }
            // Native byte order (this is a little-endian machine's file).
            let stored = Checksum(
                bytes.loadUnaligned(fromByteOffset: 40, as: UInt32.self),
                bytes.loadUnaligned(fromByteOffset: 44, as: UInt32.self))
            let computed = Checksum.zero.adding(UnsafeRawBufferPointer(rebasing: bytes[0..<40]), nativeOrder: true)
            guard stored == computed else { return nil }
            change = bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self)
            bigEndianChecksum = bytes[13] != 0
            let rawPageSize = Int(bytes.loadUnaligned(fromByteOffset: 14, as: UInt16.self))
            pageSize = (rawPageSize & 0xFF00) | ((rawPageSize & 1) << 16)
            maxFrame = bytes.loadUnaligned(fromByteOffset: 16, as: UInt32.self)
            pageCount = bytes.loadUnaligned(fromByteOffset: 20, as: UInt32.self)
            frameChecksum = Checksum(
                bytes.loadUnaligned(fromByteOffset: 24, as: UInt32.self),
                bytes.loadUnaligned(fromByteOffset: 28, as: UInt32.self))
            salt = bytes.bigEndianUInt64(at: 32)
        }
    }

    /// SQLite's WAL checksum: two 32-bit sums over pairs of words.
    struct Checksum: Equatable {
        var s1: UInt32
        var s2: UInt32

        init(_ s1: UInt32, _ s2: UInt32) {
            self.s1 = s1
            self.s2 = s2
        }

        static let zero = Checksum(0, 0)

        /// The checksum continued over `bytes` (a multiple of 8 bytes), reading words big- or little-endian.
        func adding(_ bytes: UnsafeRawBufferPointer, bigEndian: Bool) -> Checksum {
            adding(bytes, nativeOrder: bigEndian == (UInt32(1).bigEndian == 1))
        }

        func adding(_ bytes: UnsafeRawBufferPointer, nativeOrder: Bool) -> Checksum {
            var s1 = self.s1
            var s2 = self.s2
            var offset = 0
            let end = bytes.count & ~7
            if nativeOrder {
                while offset < end {
                    s1 &+= bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self) &+ s2
                    s2 &+= bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self) &+ s1
                    offset += 8
                }
            } else {
                while offset < end {
                    s1 &+= bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self).byteSwapped &+ s2
                    s2 &+= bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self).byteSwapped &+ s1
                    offset += 8
                }
            }
            return Checksum(s1, s2)
        }
    }
}

extension UnsafeRawBufferPointer {
    func bigEndianUInt32(at offset: Int) -> UInt32 {
        UInt32(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    func bigEndianUInt16(at offset: Int) -> UInt16 {
        UInt16(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    func bigEndianUInt64(at offset: Int) -> UInt64 {
        UInt64(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
}
