import CSQLiveSupport
import Foundation
import SQLiveLocks

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
/// deleted file's content. So the capture opens `DB-journal` as soon as the
/// directory's events say it was created, and at the next reading
/// (`take`) reads every journal that was deleted since: the pages the
/// commits changed are the journaled ones, and every page past the
/// smallest size the database had when one of them began (pages a commit
/// appended are not journaled).
///
/// The events come from the process's one inotify instance
/// (`DirectoryEvents`, with a journal handler): its reading thread opens a
/// journal the moment its creation is read, and notes the change counter
/// the moment its deletion is. `take` and `confirm` first `flush` the hub,
/// so every event the kernel queued before them has been handled.
///
/// That set is only trusted when it is complete, which two checks prove:
/// - **Every journal was caught.** The kernel queues a journal's creation
///   as it is created, so the creations counted after a reading's header
///   was read include every journal whose commit the reading can contain.
///   Between two readings, as many journals must have been created as
///   were opened (`confirm`).
/// - **Each is one of the commits between the two readings.** Every commit
///   journals page 1 (it moves the header's change counter): a deleted
///   journal saved the counter its transaction began at, and the counter
///   right after its deletion tells a commit (one more) from a rollback (the
///   same) from "cannot tell" (a later commit came first). The caller
///   (`RollbackRowDeriver`) uses the journals only when the committed ones'
///   saved counters are exactly the commits between its two readings, each
///   once.
/// A journal missed (created and deleted before its creation was read),
/// one that cannot be judged or parsed, a journal mode that keeps its file
/// (`PERSIST`, `TRUNCATE`), a transaction that spans two readings, no
/// inotify: the deriver reads every page of the tables, as it does without
/// journals.
///
/// Opening and reading a journal takes no lock and writes nothing: the
/// writer neither waits nor notices (a descriptor does not keep a deleted
/// journal's name, so no one takes it for a hot journal).
///
/// `take` and `confirm` are called by one thread (the watcher's); the
/// handler runs on the hub's reading thread; `State` is shared between
/// them under its mutex.
final class JournalCapture: Sendable {
    let path: String
    /// What a journal held turned out to be.
    enum Verdict: Equatable {
        /// Deleted by a commit: its pages.
        case committed(JournalPages)
        /// Deleted by a rollback: nothing changed.
        case rolledBack
        /// Deleted, but which of the two cannot be told (the file changed
        /// again before its deletion was read, or the journal does not parse).
        case unknown
    }
    private struct Held {
        var descriptor: Int32
        var inode: ino_t
        /// Deleted: the change counter read as its deletion was (`nil`
        /// inside when the file could not be read).
        var counterAfter: UInt32??
    }
    // Mutable State: guarded by the mutex (the hub's reading thread, in
    // `handle`, and the watcher's, in `take` and `confirm`).
    private struct State {
        /// Journals opened, in the order they were opened.
        var held: [Held] = []
        /// Journals were let go unread (more than `capacity`), or the
        /// kernel dropped events: the window's journals cannot be trusted.
        var lost = false
        /// Journals created (the directory's events), and journals opened,
        /// since the capture began; their difference, less `baseline` (a
        /// journal there before the capture, opened with no event), is the
        /// number of journals missed: created and deleted between two looks.
        var created = 0
        var opened = 0
        var baseline = 0
        /// The journals missed at the last `confirm`.
        var missedBefore = 0
        /// A journal was missed after the last reading's header was read:
        /// its commit may belong to the next reading.
        var poisoned = false
        var stopped = false
    }
    private let state = Locked(State())
    static let capacity = 64
    /// The database file's descriptor, the observer connection's own
    /// (`sqlive_observer_descriptor`): the change counter is read from it,
    /// with `pread` and no lock. Owned by that connection, never closed here.
    private let database: Int32
    /// The capture's subscription to the directory's events; `nil` when
    /// inotify was refused (then `take` always answers `nil`).
    private let events: DirectoryEvents.Subscription?
    private let handler = Handler()

    /// Starts watching; `database` is the descriptor the change counter is
    /// read from, open for longer than the capture (its owner calls `stop`
    /// before closing it).
    init(databasePath: String, database: Int32) {
        let resolved = DatabaseLocation.resolvingSymbolicLinks(databasePath)
        path = resolved + "-journal"
        self.database = database
        events = database >= 0 ? try? DirectoryEvents.journals.subscribe(to: resolved, journal: handler.handle) : nil
        guard let events else {
            Log.monitor.debug("no inotify for \(path): rollback journals are not read")
            return
        }
        handler.capture.withLock { $0 = self }
        // A journal there already is opened with no creation event: the
        // baseline of the missed count. One created meanwhile has its
        // creation queued before it could be opened: counted by the second
        // flush, in the same pass as its opening.
        events.flush()
        state.withLock { open(&$0) }
        events.flush()
        state.withLock { $0.baseline = $0.created - $0.opened }
    }

    /// Passes the hub's events to the capture until `stop` (the hub's
    /// subscription holds the handler; the handler, the capture, until
    /// `stop` lets it go).
    private final class Handler: Sendable {
        let capture = Locked<JournalCapture?>(nil)
        var handle: @Sendable (DirectoryEvents.JournalEvent) -> Void {
            { event in self.capture.withLock { $0 }?.handle(event) }
        }
    }

    /// Stops the events and lets every journal go. Call it before the
    /// database's descriptor is closed.
    func stop() {
        events?.cancel()
        handler.capture.withLock { $0 = nil }
        state.withLock { state in
            state.stopped = true
            for journal in state.held { close(journal.descriptor) }
            state.held = []
        }
    }

    /// An event of the journal's name, on the hub's reading thread: a
    /// journal created is opened at once (a commit can take less than a
    /// millisecond), one deleted is judged by the counter now.
    private func handle(_ event: DirectoryEvents.JournalEvent) {
        state.withLock { state in
            guard !state.stopped else { return }
            switch event {
            case .created:
                state.created += 1
                open(&state)
            case .removed:
                noteDeletions(&state)
            case .lost:
                state.lost = true
            }
        }
    }

    /// Opens the journal if one is there that is not held yet.
    private func open(_ state: inout State) {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else { return }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, status.st_nlink > 0,
            !state.held.contains(where: { $0.inode == status.st_ino })
        else {
            close(descriptor)
            return
        }
        state.held.append(Held(descriptor: descriptor, inode: status.st_ino))
        state.opened += 1
        if state.held.count > Self.capacity {
            close(state.held.removeFirst().descriptor)
            state.lost = true
        }
    }

    /// Notes the counter for every held journal deleted since.
    private func noteDeletions(_ state: inout State) {
        var now: UInt32??
        for index in state.held.indices where state.held[index].counterAfter == nil {
            var status = stat()
            guard fstat(state.held[index].descriptor, &status) != 0 || status.st_nlink == 0 else { continue }
            if now == nil { now = .some(counter()) }
            state.held[index].counterAfter = now
        }
    }

    /// The change counter now (offset 24 of the database file).
    private func counter() -> UInt32? {
        var bytes = [UInt8](repeating: 0, count: 4)
        guard pread(database, &bytes, 4, 24) == 4 else { return nil }
        return UInt32(bytes[0]) << 24 | UInt32(bytes[1]) << 16 | UInt32(bytes[2]) << 8 | UInt32(bytes[3])
    }

    /// A deleted journal is a commit's when the change counter right after
    /// its deletion is one past the one its saved page 1 holds (every
    /// commit journals page 1 to move the counter), a rollback's when it is
    /// the same; anything else (a later commit came first) cannot be told.
    private static func verdict(_ journal: Held, after current: UInt32?) -> Verdict {
        var status = stat()
        guard fstat(journal.descriptor, &status) == 0,
            let pages = JournalPages.read(journal.descriptor, size: Int(status.st_size)),
            let before = pages.startCounter, let current
        else {
            Log.monitor.debug("journal of \(status.st_size) bytes: unreadable, or no page 1")
            return .unknown
        }
        if current == before &+ 1 { return .committed(pages) }
        if current == before { return .rolledBack }
        Log.monitor.debug("journal saved counter \(before), the file's is \(current): cannot tell")
        return .unknown
    }

    /// What `take` found.
    struct Taken {
        /// The journals of the commits finished since the last call; `nil`
        /// when one of them could not be judged.
        var journals: [JournalPages]?
        /// A journal in its directory holds a transaction's pages (its
        /// header is written): a commit may be under way, its database
        /// pages written, the journal not yet deleted.
        var underWay = false
        /// Transactions rolled back among them: one may have left unsaved
        /// writes to free-list leaves in the file (`JournalHistory`).
        var rollbacks = 0

        /// What two calls found together.
        func then(_ later: Taken) -> Taken {
            Taken(
                journals: journals.flatMap { first in later.journals.map { first + $0 } }, underWay: later.underWay,
                rollbacks: rollbacks + later.rollbacks)
        }
    }

    /// The journals of commits after `previous` finished since the last
    /// call (before a reading of the file). Journals of earlier commits (in
    /// the last reading already) are let go; journals still in their
    /// directory stay held. `confirm` tells, after the reading, whether
    /// none was missed.
    func take(after previous: UInt32) -> Taken {
        guard let events else { return Taken(journals: nil) }
        events.flush()
        return state.withLock { state in
            var committed: [JournalPages] = []
            var rollbacks = 0
            var trusted = true
            var underWay = false
            var kept: [Held] = []
            for journal in state.held {
                guard let after = journal.counterAfter else {
                    kept.append(journal)
                    var magic = [UInt8](repeating: 0, count: 8)
                    if pread(journal.descriptor, &magic, 8, 0) == 8, magic == JournalPages.magic { underWay = true }
                    continue
                }
                switch Self.verdict(journal, after: after) {
                case .committed(let pages):
                    // Began before the last reading's state: in it already.
                    if let start = pages.startCounter, start &- previous >= 1 << 31 { break }
                    committed.append(pages)
                case .rolledBack: rollbacks += 1
                case .unknown: trusted = false
                }
                close(journal.descriptor)
            }
            state.held = kept
            return Taken(journals: trusted ? committed : nil, underWay: underWay, rollbacks: rollbacks)
        }
    }

    /// After a reading of the file: whether no journal was missed since the
    /// one before (the events queued now are handled first: the kernel
    /// queues a creation as the journal is created, so every journal whose
    /// commit the reading can hold is counted). A journal missed since the
    /// last confirmation also makes the next one fail: its commit may come
    /// after this reading.
    ///
    /// Journals deleted by the time the file's change counter was `read`
    /// (the reading's, when it succeeded) belong to it or to an earlier
    /// one: they are let go now, not at the next reading, which may be long
    /// after (a deleted journal's space stays taken while it is open).
    func confirm(read counter: UInt32?) -> Bool {
        guard let events else { return false }
        events.flush()
        return state.withLock { state in
            if let counter {
                state.held.removeAll { journal in
                    guard case .some(.some(let after)) = journal.counterAfter, counter &- after < 1 << 31 else {
                        return false
                    }
                    close(journal.descriptor)
                    return true
                }
            }
            let missed = state.created - state.opened - state.baseline
            let complete = !state.poisoned && !state.lost && missed == state.missedBefore
            if !complete {
                Log.monitor.debug(
                    "journals: \(missed - state.missedBefore) missed\(state.lost ? ", events lost" : "")\(state.poisoned ? ", one missed before" : ""): read whole"
                )
            }
            state.poisoned = missed != state.missedBefore || state.lost
            state.missedBefore = missed
            state.lost = false
            return complete
        }
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
    /// The saved pages' old contents, each where its record holds it in
    /// `data` (the journal's bytes), when every record's checksum held and
    /// the journal is at most `imageLimit` bytes; `nil` otherwise. Each
    /// page's first record: its content when the transaction began.
    var images: [UInt32: Int]?
    var data: [UInt8] = []

    /// The largest journal whose pages' old contents are kept.
    static let imageLimit = 32 << 20

    /// A saved page's content as the transaction found it (`nil`: not
    /// saved, or the images are not kept).
    func image(of page: UInt32) -> ArraySlice<UInt8>? {
        guard let offset = images?[page] else { return nil }
        return data[offset..<offset + pageSize]
    }

    static func == (a: JournalPages, b: JournalPages) -> Bool {
        a.pages == b.pages && a.originalPageCount == b.originalPageCount && a.pageSize == b.pageSize
            && a.startCounter == b.startCounter && a.images == b.images
            && (a.images == nil || a.data == b.data)
    }

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
        var images: [UInt32: Int]? = bytes.count <= imageLimit ? [:] : nil
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
            // Each record's checksum: the segment's nonce plus every 200th
            // byte of the page, from its end (pager.c, `pager_cksum`).
            let nonce = word(offset + 12) ?? 0
            for record in 0..<Int(records) {
                let at = start + record * recordSize
                guard let page = word(at), page >= 1 else { return nil }
                if page == 1, startCounter == nil { startCounter = word(at + 4 + 24) }
                if images != nil {
                    var sum = nonce
                    var index = Int(size) - 200
                    while index > 0 {
                        sum &+= UInt32(bytes[at + 4 + index])
                        index -= 200
                    }
                    if sum != word(at + 4 + Int(size)) {
                        images = nil
                    } else if images?[page] == nil {
                        images?[page] = at + 4
                    }
                }
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
            pages: pages, originalPageCount: original, pageSize: pageSize, startCounter: startCounter,
            images: images, data: images == nil ? [] : bytes)
    }
}
