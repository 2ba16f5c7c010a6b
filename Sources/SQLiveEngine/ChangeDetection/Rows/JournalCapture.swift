import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Which pages a rollback-journal commit wrote, read from its journal.
///
/// In `journal_mode=DELETE` (SQLite's default) a writer saves each page it
/// is about to change into `DB-journal` (its page number, its old content,
/// a checksum), writes the database, and commits by deleting the journal.
/// Nothing of it is left for a watcher to read afterwards — unless the
/// watcher opened the journal while it existed: a descriptor keeps a
/// deleted file's content. So the watcher opens `DB-journal` as soon as the
/// directory's events say it is there (`look`), and at its next reading
/// (`take`) reads every journal that was deleted since: the pages the
/// commits changed are the journaled ones, and every page past the
/// smallest size the database had when one of them began (pages a commit
/// appended are not journaled).
///
/// That set is only trusted when it is complete, which two checks prove:
/// - **Every journal was caught.** The capture has an inotify descriptor of
///   its own on the directory, which counts the journals created; the
///   kernel queues that event as the journal is created, so a count read
///   after the reading's header counts every journal whose commit the
///   reading can contain. Between two readings, as many journals must have
///   been created as were caught and finished (`take`, `confirm`).
/// - **Each is one of the commits between the two readings.** Every commit
///   journals page 1 (it moves the header's change counter): a deleted
///   journal saved the counter its transaction began at, and the counter
///   right after its deletion tells a commit (one more) from a rollback (the
///   same) from "cannot tell" (a later commit came first). The caller
///   (`RollbackRowDeriver`) uses the journals only when the committed ones'
///   saved counters are exactly the commits between its two readings, each
///   once.
/// A journal missed (created and deleted between two looks), one that
/// cannot be judged or parsed, a journal mode that keeps its file
/// (`PERSIST`, `TRUNCATE`), a transaction that spans two readings: the
/// deriver reads every page of the tables, as it does without journals.
///
/// Opening and reading a journal takes no lock and writes nothing: the
/// writer neither waits nor notices (a descriptor does not keep a deleted
/// journal's name, so no one takes it for a hot journal).
///
/// Not thread-safe: confined to the watcher's thread.
final class JournalCapture {
    let path: String
    /// What a journal held turned out to be.
    enum Verdict: Equatable {
        /// Still in its directory: its transaction is under way (or the
        /// journal mode keeps the file).
        case pending
        /// Deleted by a commit: its pages.
        case committed(JournalPages)
        /// Deleted by a rollback: nothing changed.
        case rolledBack
        /// Deleted, but which of the two cannot be told (the file changed
        /// again before it was looked at, or the journal does not parse).
        case unknown
    }
    private struct Held {
        var descriptor: Int32
        var inode: ino_t
        var verdict: Verdict = .pending
    }
    /// Journals opened, in the order they were opened.
    private var held: [Held] = []
    /// Journals were let go unread (more than `capacity`), or the kernel
    /// dropped events: the window's journals cannot be trusted.
    private var lost = false
    static let capacity = 64
    /// Reads the database's change counter now (offset 24), with no lock.
    private let counter: () -> UInt32?
    /// The capture's own inotify instance on the directory (creations of
    /// the journal's name); -1 when none could be made (then `take` always
    /// answers `nil`).
    let descriptor: Int32
    private let journalName: String
    /// Journals created since the last `confirm`, and those finished
    /// (committed or rolled back) in the last `take`.
    private var created = 0
    private var taken = 0

    init(databasePath: String, counter: @escaping () -> UInt32?) {
        path = databasePath + "-journal"
        journalName = (path as NSString).lastPathComponent
        self.counter = counter
        let directory = (DatabaseLocation.resolvingSymbolicLinks(databasePath) as NSString).deletingLastPathComponent
        var descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        if descriptor >= 0,
            inotify_add_watch(descriptor, directory.isEmpty ? "." : directory, UInt32(IN_CREATE) | UInt32(IN_MOVED_TO))
                < 0
        {
            close(descriptor)
            descriptor = -1
        }
        self.descriptor = descriptor
        if descriptor < 0 { Log.monitor.debug("no inotify for \(path): rollback journals are not read") }
    }

    deinit {
        for journal in held { close(journal.descriptor) }
        if descriptor >= 0 { close(descriptor) }
    }

    /// Counts the journals created since the last drain.
    private func drain() {
        guard descriptor >= 0 else { return }
        let size = 4096
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let count = read(descriptor, buffer, size)
            if count <= 0 { break }
            var offset = 0
            while offset < count {
                let event = (buffer + offset).assumingMemoryBound(to: inotify_event.self).pointee
                if event.mask & UInt32(IN_Q_OVERFLOW) != 0 { lost = true }
                if event.len > 0 {
                    let name = String(
                        cString: (buffer + offset + MemoryLayout<inotify_event>.size).assumingMemoryBound(
                            to: CChar.self))
                    if name == journalName { created += 1 }
                }
                offset += MemoryLayout<inotify_event>.size + Int(event.len)
            }
        }
    }

    /// Judges the journals deleted since the last look, then opens the
    /// journal if one is there that is not held yet. Call it when the
    /// capture's descriptor is readable and at each of the directory's events.
    func look() {
        drain()
        judge()
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else { return }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG,
            !held.contains(where: { $0.inode == status.st_ino })
        else {
            close(descriptor)
            return
        }
        held.append(Held(descriptor: descriptor, inode: status.st_ino))
        if held.count > Self.capacity {
            close(held.removeFirst().descriptor)
            lost = true
        }
    }

    /// A deleted journal is a commit's when the change counter is now one
    /// past the one its saved page 1 holds (every commit journals page 1
    /// to move the counter), a rollback's when it is the same; anything
    /// else (a later commit came first) cannot be told.
    private func judge() {
        var now: UInt32??
        for index in held.indices where held[index].verdict == .pending {
            var status = stat()
            guard fstat(held[index].descriptor, &status) != 0 || status.st_nlink == 0 else { continue }
            if now == nil { now = .some(counter()) }
            guard let pages = JournalPages.read(held[index].descriptor, size: Int(status.st_size)),
                let before = pages.startCounter, let current = now ?? nil
            else {
                held[index].verdict = .unknown
                continue
            }
            held[index].verdict =
                current == before &+ 1 ? .committed(pages) : current == before ? .rolledBack : .unknown
        }
    }

    /// The commits' journals finished since the last call (before a
    /// reading of the file); `nil` when one could not be judged. Journals
    /// still pending stay held. `confirm` tells, after the reading, whether
    /// they were all the journals.
    func take() -> [JournalPages]? {
        look()
        var committed: [JournalPages] = []
        var trusted = descriptor >= 0
        var kept: [Held] = []
        taken = 0
        for journal in held {
            switch journal.verdict {
            case .pending:
                kept.append(journal)
                continue
            case .committed(let pages): committed.append(pages)
            case .rolledBack: break
            case .unknown: trusted = false
            }
            taken += 1
            close(journal.descriptor)
        }
        held = kept
        return trusted ? committed : nil
    }

    /// After a reading of the file: whether every journal created since the
    /// last confirmation is one `take` handed over (none was missed, none
    /// is still under way, no event was lost). Ends the window either way.
    func confirm() -> Bool {
        drain()
        defer {
            created = 0
            taken = 0
            lost = false
        }
        return descriptor >= 0 && !lost && created == taken
    }
}

/// The pages one journal saved, and the database's size when it began.
struct JournalPages: Equatable {
    var pages: Set<UInt32>
    /// The database's size in pages when the transaction began: pages past
    /// it were appended, not journaled.
    var originalPageCount: UInt32
    var pageSize: Int
    /// The change counter in the saved page 1: the database's before the
    /// commit (`nil` when page 1 is not in the journal).
    var startCounter: UInt32?

    static let magic: [UInt8] = [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]

    /// Parses a journal's segments (a header each, padded to the sector
    /// size, then its records: page number, page, checksum); `nil` when any
    /// part does not read as SQLite writes it.
    static func read(_ descriptor: Int32, size: Int) -> JournalPages? {
        guard size >= 28, size <= 1 << 30 else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, size, 0) }
        guard count == size else { return nil }
        return parse(bytes)
    }

    static func parse(_ bytes: [UInt8]) -> JournalPages? {
        func word(_ offset: Int) -> UInt32? {
            guard offset + 4 <= bytes.count else { return nil }
            return UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
                | UInt32(bytes[offset + 3])
        }
        var pages = Set<UInt32>()
        var startCounter: UInt32?
        var original: UInt32?
        var pageSize: Int?
        var offset = 0
        var first = true
        while offset + 28 <= bytes.count, Array(bytes[offset..<offset + 8]) == magic {
            guard var records = word(offset + 8), let segmentOriginal = word(offset + 16),
                let sector = word(offset + 20), let size = word(offset + 24),
                sector >= 512, sector <= 65536, sector & (sector - 1) == 0,
                size >= 512, size <= 65536, size & (size - 1) == 0
            else { return nil }
            if let pageSize, pageSize != Int(size) { return nil }
            pageSize = Int(size)
            original = min(original ?? segmentOriginal, segmentOriginal)
            let recordSize = Int(size) + 8
            let start = offset + Int(sector)
            // No count: every whole record to the end (synchronous=OFF, or
            // the first segment before its count was written).
            if records == 0xFFFF_FFFF || (records == 0 && first) {
                records = UInt32(max(0, bytes.count - start) / recordSize)
            }
            guard start + Int(records) * recordSize <= bytes.count else { return nil }
            for record in 0..<Int(records) {
                guard let page = word(start + record * recordSize), page >= 1 else { return nil }
                if page == 1, startCounter == nil { startCounter = word(start + record * recordSize + 4 + 24) }
                pages.insert(page)
            }
            first = false
            let end = start + Int(records) * recordSize
            // The next segment begins at the next sector boundary.
            offset = (end + Int(sector) - 1) / Int(sector) * Int(sector)
        }
        // A journal whose first header is missing or blanked (a rollback,
        // PERSIST's commit) tells nothing.
        guard let original, let pageSize else { return nil }
        return JournalPages(
            pages: pages, originalPageCount: original, pageSize: pageSize, startCounter: startCounter)
    }
}
