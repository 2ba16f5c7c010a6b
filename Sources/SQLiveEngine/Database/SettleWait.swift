import Foundation

/// When to open a file that replaced the one a session had (to follow
/// it): once it has settled, so that opening it — whose first reads take
/// a shared lock in a rollback-journal mode — does not make the commit of
/// the process still writing it fail ("database is locked", for a writer
/// with no busy timeout, as the sqlite3 shell at its defaults).
///
/// A pure value over readings of the file and instants of a clock: it
/// says to open when the file has content, no rollback journal is under
/// way, and it has not changed for `quiet`; or, at the latest, after
/// `patience` (an app that never stops writing is followed anyway).
struct SettleWait<Instant: InstantProtocol> where Instant.Duration == Duration {
    /// What one look at the file found.
    struct Reading: Equatable {
        var size: Int64
        var modification: DataVersionProbe.Modification
        /// A rollback journal with content is there: a transaction is
        /// being written (DELETE, TRUNCATE or PERSIST mode).
        var journalBusy: Bool
    }

    enum Step: Equatable {
        case open
        /// Look again after this long.
        case look(after: Duration)
    }

    static var quiet: Duration { .milliseconds(25) }
    static var patience: Duration { .seconds(2) }
    static var interval: Duration { .milliseconds(5) }

    let start: Instant
    private var last: (reading: Reading, since: Instant)?

    init(start: Instant) {
        self.start = start
    }

    /// The next step, given a look at the file now (`nil`: it is not there).
    mutating func next(_ reading: Reading?, at now: Instant) -> Step {
        if start.duration(to: now) >= Self.patience { return .open }
        guard let reading, reading.size > 0, !reading.journalBusy else {
            last = nil
            return .look(after: Self.interval)
        }
        guard let last, last.reading == reading else {
            last = (reading, now)
            return .look(after: Self.interval)
        }
        return last.since.duration(to: now) >= Self.quiet ? .open : .look(after: Self.interval)
    }

    /// A look at the file at `path` and its rollback journal.
    static func read(_ path: String) -> Reading? {
        guard let file = DataVersionProbe.status(of: path) else { return nil }
        let journal = DataVersionProbe.status(of: path + "-journal")
        let journalBusy = (journal?.modification.size ?? 0) > 0 && !journalIsIdle(path)
        return Reading(size: file.modification.size, modification: file.modification, journalBusy: journalBusy)
    }

    /// Whether a journal with content is an idle one (PERSIST mode leaves
    /// its header zeroed after a commit): its first 28 bytes are zero.
    private static func journalIsIdle(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path + "-journal") else { return true }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: 28), !header.isEmpty else { return true }
        return header.allSatisfy { $0 == 0 }
    }
}
