/// One statement seen by the statement trace.
///
/// With profiling on, `elapsed` and `rows` tell how long the statement took
/// and how many rows it returned, and `counters` what SQLite counted while
/// running it; without, they are `nil`.
public struct TraceEvent: Hashable, Sendable {
    /// Where a traced statement came from.
    public enum Origin: String, Hashable, Sendable {
        /// A statement the user ran (REPL, script, `query/execute`).
        case user
        /// A live query's refresh.
        case liveQuery
        /// sqlive's and GRDB's own bookkeeping (`BEGIN`, `COMMIT`, `PRAGMA`...).
        case housekeeping
    }

    public var sql: String
    public var elapsed: Duration?
    public var rows: Int?
    /// SQLite's counters (not for housekeeping statements, which GRDB runs).
    public var counters: StatementCounters?
    public var origin: Origin

    public init(
        sql: String, elapsed: Duration? = nil, rows: Int? = nil, counters: StatementCounters? = nil, origin: Origin
    ) {
        self.sql = sql
        self.elapsed = elapsed
        self.rows = rows
        self.counters = counters
        self.origin = origin
    }
}

/// What the statement trace reports.
public struct TraceSettings: Hashable, Sendable {
    /// Whether statements are traced at all.
    public var enabled: Bool
    /// Whether each traced statement carries its elapsed time and rows.
    public var profile: Bool
    /// Whether housekeeping statements (`BEGIN`, `COMMIT`, GRDB's pragmas)
    /// are traced too.
    public var includeHousekeeping: Bool

    public init(enabled: Bool = false, profile: Bool = false, includeHousekeeping: Bool = false) {
        self.enabled = enabled
        self.profile = profile
        self.includeHousekeeping = includeHousekeeping
    }

    /// No tracing.
    public static let off = TraceSettings()
}
