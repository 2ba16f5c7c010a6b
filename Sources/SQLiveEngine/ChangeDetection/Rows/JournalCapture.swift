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
final class JournalCapture: Sendable {
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
    // Mutable State: guarded by the mutex. The capture's thread and the
    // watcher's (`take`, `confirm`) both read the inotify descriptor and
    // open journals, always holding it, so every event is counted once.
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
        var finished = false
    }
    private let state = Condition(State())
    static let capacity = 64
    /// The database file's descriptor, the observer connection's own
    /// (`sqlive_observer_descriptor`): the change counter is read from it,
    /// with `pread` and no lock. Owned by that connection, never closed here.
    private let database: Int32
    /// The capture's own inotify instance on the directory (the journal's
    /// name created, deleted, moved); -1 when none could be made (then
    /// `take` always answers `nil`).
    private let inotify: Int32
    private let journalName: String
    private let wake: WakePipe?

    /// Starts watching; `database` is the descriptor the change counter is
    /// read from, open for longer than the capture (its owner calls `stop`
    /// before closing it).
    init(databasePath: String, database: Int32) {
        path = databasePath + "-journal"
        journalName = (path as NSString).lastPathComponent
        self.database = database
        let directory = (DatabaseLocation.resolvingSymbolicLinks(databasePath) as NSString).deletingLastPathComponent
        var inotify = database >= 0 ? inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) : -1
        let mask = UInt32(IN_CREATE) | UInt32(IN_MOVED_TO) | UInt32(IN_DELETE) | UInt32(IN_MOVED_FROM)
        if inotify >= 0, inotify_add_watch(inotify, directory.isEmpty ? "." : directory, mask) < 0 {
            close(inotify)
            inotify = -1
        }
        self.inotify = inotify
        wake = inotify >= 0 ? try? WakePipe() : nil
        state.withLock { state in
            guard inotify >= 0 else { return }
            process(&state)
            state.baseline = state.created - state.opened
        }
        guard inotify >= 0, let wake else {
            Log.monitor.debug("no inotify for \(path): rollback journals are not read")
            state.withLock { $0.finished = true }
            return
        }
        // The thread opens a journal as soon as it is created (a commit
        // can take less than a millisecond), and judges it as soon as it
        // is deleted, whatever the watcher's thread is doing.
        let watched = inotify
        let thread = Thread { [self] in
            var descriptors = [
                pollfd(fd: watched, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake.readDescriptor, events: Int16(POLLIN), revents: 0),
            ]
            while !state.withLock({ $0.stopped }) {
                let ready = poll(&descriptors, 2, 1000)
                if ready < 0 && errno != EINTR { break }
                if descriptors[0].revents != 0 { state.withLock { process(&$0) } }
            }
            state.withLock { $0.finished = true }
            state.broadcast()
        }
        thread.name = "sqlive journal capture"
        thread.start()
    }

    /// Stops the thread (waiting for it) and lets every journal go. Call it
    /// before the database's descriptor is closed.
    func stop() {
        state.withLock { $0.stopped = true }
        wake?.post()
        state.wait { $0.finished ? .done(()) : .wait }
        state.withLock { state in
            for journal in state.held { close(journal.descriptor) }
            state.held = []
        }
        if inotify >= 0 { close(inotify) }
    }

    /// Reads the queued events, judges the journals deleted, opens the
    /// journal if one is there that is not held yet.
    private func process(_ state: inout State) {
        drain(&state)
        judge(&state)
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
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
        // Its creation is queued by now (it was created before it was
        // opened): counted in the same pass as its opening.
        drain(&state)
        if state.held.count > Self.capacity {
            close(state.held.removeFirst().descriptor)
            state.lost = true
        }
    }

    /// Counts the journals created, from the queued events.
    private func drain(_ state: inout State) {
        let size = 4096
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let count = read(inotify, buffer, size)
            if count <= 0 { break }
            var offset = 0
            while offset < count {
                let event = (buffer + offset).assumingMemoryBound(to: inotify_event.self).pointee
                if event.mask & UInt32(IN_Q_OVERFLOW) != 0 { state.lost = true }
                if event.len > 0, event.mask & (UInt32(IN_CREATE) | UInt32(IN_MOVED_TO)) != 0 {
                    let name = String(
                        cString: (buffer + offset + MemoryLayout<inotify_event>.size).assumingMemoryBound(
                            to: CChar.self))
                    if name == journalName { state.created += 1 }
                }
                offset += MemoryLayout<inotify_event>.size + Int(event.len)
            }
        }
    }

    /// The change counter now (offset 24 of the database file).
    private func counter() -> UInt32? {
        var bytes = [UInt8](repeating: 0, count: 4)
        guard pread(database, &bytes, 4, 24) == 4 else { return nil }
        return UInt32(bytes[0]) << 24 | UInt32(bytes[1]) << 16 | UInt32(bytes[2]) << 8 | UInt32(bytes[3])
    }

    /// A deleted journal is a commit's when the change counter is now one
    /// past the one its saved page 1 holds (every commit journals page 1
    /// to move the counter), a rollback's when it is the same; anything
    /// else (a later commit came first) cannot be told.
    private func judge(_ state: inout State) {
        var now: UInt32??
        for index in state.held.indices where state.held[index].verdict == .pending {
            var status = stat()
            guard fstat(state.held[index].descriptor, &status) != 0 || status.st_nlink == 0 else { continue }
            if now == nil { now = .some(counter()) }
            guard let pages = JournalPages.read(state.held[index].descriptor, size: Int(status.st_size)),
                let before = pages.startCounter, let current = now ?? nil
            else {
                Log.monitor.debug("journal of \(status.st_size) bytes: unreadable, or no page 1")
                state.held[index].verdict = .unknown
                continue
            }
            if current != before &+ 1 && current != before {
                Log.monitor.debug("journal saved counter \(before), the file's is \(current): cannot tell")
            }
            state.held[index].verdict =
                current == before &+ 1 ? .committed(pages) : current == before ? .rolledBack : .unknown
        }
    }

    /// The journals of commits after `previous` finished since the last
    /// call (before a reading of the file); `nil` when one of them could
    /// not be judged. Journals of earlier commits (in the last reading
    /// already) are let go; journals still pending stay held. `confirm`
    /// tells, after the reading, whether none was missed.
    func take(after previous: UInt32) -> [JournalPages]? {
        state.withLock { state in
            guard inotify >= 0 else { return nil }
            process(&state)
            var committed: [JournalPages] = []
            var trusted = true
            var kept: [Held] = []
            for journal in state.held {
                switch journal.verdict {
                case .pending:
                    kept.append(journal)
                    continue
                case .committed(let pages):
                    // Began before the last reading's state: in it already.
                    if let start = pages.startCounter, start &- previous >= 1 << 31 { break }
                    committed.append(pages)
                case .rolledBack: break
                case .unknown: trusted = false
                }
                close(journal.descriptor)
            }
            state.held = kept
            return trusted ? committed : nil
        }
    }

    /// After a reading of the file: whether no journal was missed since the
    /// one before (the events queued now are read first: the kernel queues
    /// a creation as the journal is created, so every journal whose commit
    /// the reading can hold is counted). A journal missed since the last
    /// confirmation also makes the next one fail: its commit may come after
    /// this reading.
    func confirm() -> Bool {
        state.withLock { state in
            guard inotify >= 0 else { return false }
            process(&state)
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
