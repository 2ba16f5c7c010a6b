/// Whether a write to the database file was a commit's, or something else
/// that changed the file (a restore, a tool writing pages in place): the
/// watcher's decision, as a pure value over an instant type.
///
/// A write with no data-version change explains nothing yet: a
/// rollback-journal commit writes its pages before a reading sees its
/// counter, so the write waits `settling` for a version change. A version
/// change explains the writes before it, and those in the `commitWrites`
/// after it (a commit writes the file after its counter too: its other
/// pages, a checkpoint). A write left unexplained after both means the
/// file changed outside a commit: every live query is read again.
struct WriteExplanation<Instant: InstantProtocol> where Instant.Duration == Duration {
    /// How long after a write to the database file a data version change
    /// may still come and explain it.
    static var settling: Duration { .milliseconds(8) }
    /// How long after a data version change writes to the database file
    /// are taken for that commit's.
    static var commitWrites: Duration { .milliseconds(50) }

    /// When the file was last written, while no version change explained it.
    private(set) var writtenAt: Instant?
    /// When a reading last found a new data version.
    private var versionChangedAt: Instant?

    /// The database file was written (an event named it, or its
    /// modification time moved).
    mutating func fileWasWritten(at now: Instant) {
        writtenAt = now
    }

    /// A reading found a new data version: it explains the writes so far.
    mutating func versionDidChange(at now: Instant) {
        versionChangedAt = now
        writtenAt = nil
    }

    /// A reading found the same data version: whether an unexplained write
    /// has now waited long enough to be told as a write outside a commit.
    mutating func versionUnchanged(at now: Instant) -> Bool {
        guard let written = writtenAt, written.duration(to: now) >= Self.settling else { return false }
        writtenAt = nil
        return versionChangedAt.map { changed in changed.duration(to: written) > Self.commitWrites } ?? true
    }
}
