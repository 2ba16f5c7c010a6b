/// What reading the WAL has cost so far, for the benchmark and the curious:
/// `LiveDatabase.walPrecisionStatistics()`.
public struct WALPrecisionStatistics: Hashable, Sendable {
    /// Readings of the log (one per data version change seen).
    public var readings = 0
    /// Commits read and applied to the page map.
    public var commits = 0
    /// Frames read (checked, and their pages applied).
    public var frames = 0
    /// CPU time spent reading frames and keeping the map, in nanoseconds
    /// (the watcher thread's own, whether or not it held a core throughout).
    public var readNanoseconds: Int64 = 0
    /// Readings answered "refresh everything" (a schema change, a lost
    /// tail, no map yet…).
    public var fallbacks = 0
    /// Maps built from `dbstat`, and the time they took (off the watcher's thread).
    public var mapBuilds = 0
    public var mapBuildNanoseconds: Int64 = 0
    /// Rollback-journal commits whose changed rows were read from the
    /// pages their journals named (`JournalCapture`), and those read from
    /// every page of the tables.
    public var rollbackJournalReadings = 0
    public var rollbackFullReadings = 0
    /// The same for the readings that tell which tables a rollback-journal
    /// commit changed (table precision, files of 16 MiB at most).
    public var rollbackTableJournalReadings = 0
    public var rollbackTableFullReadings = 0

    public init() {}

    /// What happened between two readings of the statistics.
    public static func - (a: Self, b: Self) -> Self {
        var difference = a
        difference.readings -= b.readings
        difference.commits -= b.commits
        difference.frames -= b.frames
        difference.readNanoseconds -= b.readNanoseconds
        difference.fallbacks -= b.fallbacks
        difference.mapBuilds -= b.mapBuilds
        difference.mapBuildNanoseconds -= b.mapBuildNanoseconds
        difference.rollbackJournalReadings -= b.rollbackJournalReadings
        difference.rollbackFullReadings -= b.rollbackFullReadings
        difference.rollbackTableJournalReadings -= b.rollbackTableJournalReadings
        difference.rollbackTableFullReadings -= b.rollbackTableFullReadings
        return difference
    }

    static func + (a: Self, b: Self) -> Self {
        var sum = a
        sum.readings += b.readings
        sum.commits += b.commits
        sum.frames += b.frames
        sum.readNanoseconds += b.readNanoseconds
        sum.fallbacks += b.fallbacks
        sum.mapBuilds += b.mapBuilds
        sum.mapBuildNanoseconds += b.mapBuildNanoseconds
        sum.rollbackJournalReadings += b.rollbackJournalReadings
        sum.rollbackFullReadings += b.rollbackFullReadings
        sum.rollbackTableJournalReadings += b.rollbackTableJournalReadings
        sum.rollbackTableFullReadings += b.rollbackTableFullReadings
        return sum
    }
}

extension Duration {
    /// The duration in whole nanoseconds.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
