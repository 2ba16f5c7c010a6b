import Foundation

/// How live queries are scheduled and how other writers are detected.
public struct LiveQueryOptions: Sendable {
    /// How changes made by other connections and processes are noticed.
    public enum ExternalDetection: Sendable, Equatable {
        /// inotify on the database's directory, falling back to polling
        /// when inotify is unavailable or runs out of watches.
        case automatic
        /// Poll `PRAGMA data_version` at this interval.
        case polling(Duration)
        /// Do not look for other writers (sqlive's own writes are still seen).
        case disabled
    }

    /// After a refresh, further changes wait this long and are then handled
    /// by one refresh.
    public var coalescingWindow: Duration
    /// The most rows a live query delivers; a longer result is truncated
    /// and says so.
    public var rowCap: Int
    public var externalDetection: ExternalDetection
    /// The interval of the polling fallback.
    public var pollingInterval: Duration
    /// A slow poll that runs even with inotify, to catch anything missed.
    public var safetyPollInterval: Duration
    /// Whether other processes' commits are matched by table, read from
    /// the WAL (`precision: "tables"`); otherwise each one refreshes every
    /// live query. On by default; the benchmark turns it off to compare.
    public var walPrecision: Bool
    /// The most bytes of values a live query's result may hold (`nil`: no
    /// limit): a front end that sends results in messages of bounded size
    /// sets it, and a result past it fails with
    /// `SQLiveError.resultTooLarge`, read no further.
    public var resultByteCap: Int?
    /// Live queries whose last read took less than this are read at
    /// sqlive's own commits, on the session's connection, in WAL mode
    /// (`LocalPrefetch`): the session's statement waits for them, as a
    /// GRDB writer waits for its observations. `nil`: every refresh reads
    /// on the live queries' own connection (the benchmark and tests
    /// compare).
    public var readAtCommitLimit: Duration?
    /// The most one live query's refresh may run (30 s by default; `nil`:
    /// no limit). A refresh that runs longer is stopped, the query reports
    /// `SQLiveError.tooSlowToKeepLive`, and it waits for the next change of
    /// what it reads. Its first read, when it is registered, has the same
    /// budget.
    public var refreshBudget: Duration?
    /// How long one live query may hold the connection the others share
    /// before it is stopped there and read on a connection of its own
    /// (100 ms by default; `nil`: never), so that a slow query never holds
    /// back the others' updates. It goes back when a read there takes
    /// less than half of this.
    public var ownConnectionAfter: Duration?
    /// Whether live queries of the shapes `MaintainedPlan` allows are kept
    /// from the rows each commit changed instead of run again
    /// (`precision: "rows"`). On by default; the benchmark and the tests
    /// turn it off to compare. `SQLIVE_MAINTAIN=0` in the environment turns
    /// it off too.
    public var maintainsFromRows: Bool
    /// After how many commits applied from rows a kept live query is
    /// checked: its base is read again whole by SQLite, beside the kept
    /// state, and replaces it; a state found different from it at the same
    /// position is a defect, logged and counted (`LiveQueryInfo.defects`).
    /// A kept result that went wrong is right again within this many commits.
    public var keptAuditEvery: Int

    public init(
        coalescingWindow: Duration = .milliseconds(15),
        rowCap: Int = 10_000,
        externalDetection: ExternalDetection = .automatic,
        pollingInterval: Duration = .milliseconds(100),
        safetyPollInterval: Duration = .seconds(2),
        walPrecision: Bool = true,
        resultByteCap: Int? = nil,
        readAtCommitLimit: Duration? = .microseconds(500),
        refreshBudget: Duration? = .seconds(30),
        ownConnectionAfter: Duration? = .milliseconds(100),
        maintainsFromRows: Bool = ProcessInfo.processInfo.environment["SQLIVE_MAINTAIN"] != "0",
        keptAuditEvery: Int = 256
    ) {
        self.maintainsFromRows = maintainsFromRows
        self.keptAuditEvery = max(1, keptAuditEvery)
        self.refreshBudget = refreshBudget
        self.ownConnectionAfter = ownConnectionAfter
        self.readAtCommitLimit = readAtCommitLimit
        self.resultByteCap = resultByteCap
        self.coalescingWindow = coalescingWindow
        self.rowCap = rowCap
        self.externalDetection = externalDetection
        self.pollingInterval = pollingInterval
        self.safetyPollInterval = safetyPollInterval
        self.walPrecision = walPrecision
    }
}
