/// Reads the commits appended to a WAL since the last reading, and only
/// those, as the wal-index says they are committed.
///
/// It reads from where it stopped up to the wal-index's `mxFrame` — frames
/// past it may be uncommitted, half written or rewritten — checking every
/// frame's salts and the checksum chain, and counting commit frames
/// against the growth of the wal-index's change counter. On a new
/// generation of the log (a reset after a checkpoint: new salts) it reads
/// what is left of the old generation past its position, then the new one
/// from frame 1, and accepts only an exact count of commits. Anything it
/// cannot prove is `unprovable`: the caller refreshes everything, and the
/// reader starts again from the wal-index as it stands.
///
/// Not thread-safe: confined to the thread that owns the storage's connection.
struct WALCommitReader {
    /// The last frame read, and the wal-index state it matched.
    struct Position: Equatable {
        var salt: UInt64
        var frame: UInt32
        var checksum: WALFormat.Checksum
        var change: UInt32
        var pageSize: Int
        var bigEndianChecksum: Bool

        init(_ index: WALFormat.IndexHeader) {
            salt = index.salt
            frame = index.maxFrame
            checksum = index.frameChecksum
            change = index.change
            pageSize = index.pageSize
            bigEndianChecksum = index.bigEndianChecksum
        }

        init(_ snapshot: PageMap.Snapshot, pageSize: Int, bigEndianChecksum: Bool) {
            salt = snapshot.salt
            frame = snapshot.frame
            checksum = snapshot.frameChecksum
            change = snapshot.change
            self.pageSize = pageSize
            self.bigEndianChecksum = bigEndianChecksum
        }
    }

    /// What a reading met, in order.
    enum Event {
        /// A generation of the log begins (before its frame 1).
        case generation(salt: UInt64)
        /// A commit, ending at `frame` of generation `salt`.
        case commit(CommitPages, salt: UInt64, frame: UInt32)
    }

    enum Outcome: Equatable {
        /// Every commit since the last reading was read (`count` of them).
        case read(count: Int)
        /// What was read cannot be proven complete.
        case unprovable(String)
    }

    var position: Position?
    /// The most bytes of frames one reading reads: beyond, refreshing
    /// everything is cheaper than reading.
    var byteLimit: Int

    /// Buffers reused from one reading to the next.
    private var scratch: Scratch?

    private final class Scratch {
        let pageSize: Int
        let pages: CommitPages
        var frames: [UInt8]

        init(pageSize: Int) {
            self.pageSize = pageSize
            pages = CommitPages(pageSize: pageSize)
            frames = [UInt8](repeating: 0, count: (WALFormat.frameHeaderSize + pageSize) * 16)
        }
    }

    init(position: Position? = nil, byteLimit: Int = 64 << 20) {
        self.position = position
        self.byteLimit = byteLimit
    }

    /// Reads every commit after the position, up to the wal-index's
    /// `mxFrame`, or up to `target` (a position of the same generation).
    mutating func read(
        _ storage: WALStorage, upTo target: Position? = nil, _ body: (Event) -> Void
    ) -> Outcome {
        guard let index = storage.indexHeader() else {
            position = nil
            return .unprovable("the wal-index cannot be read")
        }
        guard let start = position else {
            position = Position(index)
            return .unprovable("the first reading of the WAL")
        }
        let end = target ?? Position(index)
        if end.change == start.change && end.salt == start.salt && end.frame == start.frame { return .read(count: 0) }
        if scratch?.pageSize != end.pageSize { scratch = Scratch(pageSize: end.pageSize) }
        let outcome = read(from: start, to: end, storage, scratch!, body)
        // Wherever the reading stopped, the next one starts from the wal-index.
        position = end
        return outcome
    }

    private func read(
        from start: Position, to end: Position, _ storage: WALStorage, _ scratch: Scratch,
        _ body: (Event) -> Void
    ) -> Outcome {
        guard end.change >= start.change else { return .unprovable("the wal-index was rebuilt") }
        let expected = Int(end.change - start.change)
        // A checkpoint that emptied the log, and no commit since: a new
        // generation, empty so far, when its salts are new.
        if expected == 0 && end.frame == 0 {
            if end.salt != start.salt { body(.generation(salt: end.salt)) }
            return .read(count: 0)
        }
        let pageSize = end.pageSize
        let frameSize = WALFormat.frameHeaderSize + pageSize
        let pages = scratch.pages
        var found = 0

        /// Reads frames `first…` of a generation until `last` (all must be
        /// valid), or while valid when `last` is nil; the checksum reached.
        func frames(
            salt: UInt64, from first: UInt32, through last: UInt32?, seed: WALFormat.Checksum,
            bigEndian: Bool, budget: inout Int
        ) -> (checksum: WALFormat.Checksum, frame: UInt32, failure: String?) {
            var checksum = seed
            var frame = first
            var lastValid = first - 1
            pages.removeAll()
            var committed = seed
            var committedFrame = first - 1
            while last.map({ frame <= $0 }) ?? true {
                let batch = Int(min(16, last.map { $0 - frame + 1 } ?? 16))
                budget -= batch * frameSize
                if budget < 0 { return (checksum, lastValid, "too many frames to read") }
                let offset = Int64(WALFormat.headerSize) + Int64(frame - 1) * Int64(frameSize)
                let ok = scratch.frames.withUnsafeMutableBytes {
                    storage.readWAL(
                        into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<(batch * frameSize)]), at: offset)
                }
                var stopped = !ok
                if ok {
                    scratch.frames.withUnsafeBytes { bytes in
                        for index in 0..<batch {
                            let frameBytes = UnsafeRawBufferPointer(
                                rebasing: bytes[(index * frameSize)..<((index + 1) * frameSize)])
                            let header = WALFormat.FrameHeader(frameBytes)
                            let sum =
                                checksum
                                .adding(UnsafeRawBufferPointer(rebasing: frameBytes[0..<8]), bigEndian: bigEndian)
                                .adding(
                                    UnsafeRawBufferPointer(rebasing: frameBytes[WALFormat.frameHeaderSize...]),
                                    bigEndian: bigEndian)
                            guard header.salt == salt, header.checksum == sum, header.pageNumber != 0 else {
                                stopped = true
                                return
                            }
                            checksum = sum
                            pages.add(
                                page: header.pageNumber, frame: frame,
                                UnsafeRawBufferPointer(rebasing: frameBytes[WALFormat.frameHeaderSize...]))
                            lastValid = frame
                            frame += 1
                            if header.commitSize != 0 {
                                pages.pageCount = header.commitSize
                                found += 1
                                body(.commit(pages, salt: salt, frame: lastValid))
                                pages.removeAll()
                                committed = checksum
                                committedFrame = lastValid
                            }
                        }
                    }
                }
                if stopped {
                    if last != nil { return (checksum, lastValid, "frame \(frame) fails its check") }
                    break
                }
            }
            // Frames after the last commit frame belong to no commit.
            return (committed, committedFrame, nil)
        }

        var budget = byteLimit
        if end.salt == start.salt {
            guard end.frame >= start.frame else { return .unprovable("the WAL went backwards") }
            guard let header = walHeader(storage), header.salt == end.salt else {
                return .unprovable("the WAL header does not match the wal-index")
            }
            let seed = start.frame == 0 ? header.checksum : start.checksum
            let result = frames(
                salt: end.salt, from: start.frame + 1, through: end.frame, seed: seed,
                bigEndian: header.bigEndianChecksum, budget: &budget)
            if let failure = result.failure { return .unprovable(failure) }
            guard end.frame == 0 || result.checksum == end.checksum else {
                return .unprovable("the checksum chain does not reach the wal-index's")
            }
        } else {
            // A new generation: the old one's unread tail (what the new one
            // has not overwritten yet), then the new one from frame 1.
            guard let header = walHeader(storage), header.salt == end.salt else {
                return .unprovable("the WAL header does not match the wal-index")
            }
            if start.frame > 0 {
                _ = frames(
                    salt: start.salt, from: start.frame + 1, through: nil, seed: start.checksum,
                    bigEndian: start.bigEndianChecksum, budget: &budget)
                if budget < 0 { return .unprovable("too many frames to read") }
            }
            body(.generation(salt: end.salt))
            let result = frames(
                salt: end.salt, from: 1, through: end.frame, seed: header.checksum,
                bigEndian: header.bigEndianChecksum, budget: &budget)
            if let failure = result.failure { return .unprovable(failure) }
            guard end.frame == 0 || result.checksum == end.checksum else {
                return .unprovable("the checksum chain does not reach the wal-index's")
            }
        }
        guard found == expected else {
            return .unprovable("\(found) commits read, the wal-index counts \(expected)")
        }
        return .read(count: found)
    }

    private func walHeader(_ storage: WALStorage) -> WALFormat.Header? {
        var bytes = [UInt8](repeating: 0, count: WALFormat.headerSize)
        let ok = bytes.withUnsafeMutableBytes { storage.readWAL(into: $0, at: 0) }
        guard ok else { return nil }
        return bytes.withUnsafeBytes { WALFormat.Header($0) }
    }
}
