import Foundation

/// What a live query asks: one read-only SQL statement and its parameters,
/// and how many of its rows to hold.
///
/// Two live queries with equal definitions share one evaluation.
public struct LiveQueryDefinition: Hashable, Sendable {
    public var sql: String
    public var parameters: QueryParameters
    /// The most rows held and delivered (`nil`: the database's
    /// `LiveQueryOptions.rowCap`, 10,000 by default); the rows past it are
    /// counted in `LiveQueryResult.total`.
    public var maxRows: Int?

    public init(sql: String, parameters: QueryParameters = .none, maxRows: Int? = nil) {
        self.sql = sql
        self.parameters = parameters
        self.maxRows = maxRows
    }
}

/// What a live query's change events carry besides its result.
public enum LiveQueryDelivery: String, Hashable, Sendable {
    /// The result.
    case rows
    /// The result, with the rows added and removed (`LiveQueryChange.diff`).
    case rowsAndDiff
    /// What changed (`LiveQueryChange.changes`), for front ends that send
    /// only that after the first full result.
    case changesOnly
}

/// A live query's result: columns and rows, cut at the row cap.
public struct LiveQueryResult: Hashable, Sendable {
    public var columns: [String]
    /// The rows, kept compactly (`ResultRows`): a kept live query's
    /// results share them with its state, chunk by chunk.
    public var rows: ResultRows
    /// Whether rows past the row cap were left out.
    public var truncated: Bool
    /// How many rows the query really has: `rows.count`, or more when
    /// `truncated` (the rows past the cap are counted, never kept).
    public var total: Int

    public init(columns: [String], rows: ResultRows, truncated: Bool = false, total: Int? = nil) {
        self.columns = columns
        self.rows = rows
        self.truncated = truncated
        self.total = max(total ?? rows.count, rows.count)
    }

    public init(columns: [String], rows: [[SQLValue]], truncated: Bool = false, total: Int? = nil) {
        self.init(columns: columns, rows: ResultRows(rows), truncated: truncated, total: total)
    }
}

/// Why a live query was refreshed.
public enum ChangeCause: String, Hashable, Sendable {
    /// A commit made by this process through sqlive.
    case local
    /// A commit made by another connection or process.
    case external
}

/// A live query as it stands: the answer to registering or redefining it.
public struct LiveQuerySnapshot: Hashable, Sendable {
    public var name: String
    public var version: Int
    public var result: LiveQueryResult
    /// The tables the query reads.
    public var tables: [String]

    public init(name: String, version: Int, result: LiveQueryResult, tables: [String]) {
        self.name = name
        self.version = version
        self.result = result
        self.tables = tables
    }
}

/// A live query's result changed.
public struct LiveQueryChange: Hashable, Sendable {
    public var name: String
    /// Strictly increasing per live query; the first result is version 1.
    public var version: Int
    public var result: LiveQueryResult
    /// The result delivered before this one.
    public var previous: LiveQueryResult
    /// The cause of the latest change this update covers.
    public var cause: ChangeCause
    /// How many change notifications this update covers.
    public var coalesced: Int
    /// How long the refresh took.
    public var elapsed: Duration
    /// The tables the changes this update covers wrote (lowercased,
    /// sorted), when every one of them is known: sqlive's own commits,
    /// and other processes' commits read from the WAL. `nil` when any
    /// change's tables are unknown (a rollback, a schema change, a commit
    /// to a database not in WAL mode…).
    public var tables: [String]?
    /// What the query asked its events to carry.
    public var delivery: LiveQueryDelivery
    /// With `.changesOnly`: what changed since `previous`, keyed by the
    /// query's rowid or primary key when it returns one. `nil` when the
    /// columns changed (the result is new as a whole) or not asked.
    public var changes: RowChanges?

    public init(
        name: String, version: Int, result: LiveQueryResult, previous: LiveQueryResult, cause: ChangeCause,
        coalesced: Int, elapsed: Duration, tables: [String]? = nil, delivery: LiveQueryDelivery = .rows,
        changes: RowChanges? = nil
    ) {
        self.name = name
        self.version = version
        self.result = result
        self.previous = previous
        self.cause = cause
        self.coalesced = coalesced
        self.elapsed = elapsed
        self.tables = tables
        self.delivery = delivery
        self.changes = changes
    }

    /// The rows added and removed since the previous result.
    public var diff: RowDiff { RowDiff(from: previous.rows, to: result.rows) }
}

/// What the live-query engine tells its subscribers.
public enum LiveQueryEvent: Hashable, Sendable {
    /// A live query's result changed.
    case changed(LiveQueryChange)
    /// A live query failed (its table was dropped, say). It recovers by
    /// itself when its SQL runs again.
    case failed(name: String, error: SQLiveError)
    /// The database file was deleted, replaced, damaged or repaired.
    case databaseFileChanged(DatabaseFileChange)

    /// The live query this event is about, if any.
    public var name: String? {
        switch self {
        case .changed(let change): change.name
        case .failed(let name, _): name
        case .databaseFileChanged: nil
        }
    }
}

/// A live query's description, for `.watches` and `liveQuery/list`.
public struct LiveQueryInfo: Hashable, Sendable {
    public var name: String
    public var definition: LiveQueryDefinition
    /// The tables the query reads.
    public var tables: [String]
    /// The tables and columns the query reads, as in `games(id,title),players(*)`.
    public var region: String
    public var version: Int
    /// How many times the query's SQL ran since it was registered.
    public var refreshes: Int
    public var lastRefresh: Date?
    public var lastRefreshDuration: Duration?
    public var paused: Bool
    /// The error of the last refresh, if it failed.
    public var error: SQLiveError?
    /// Whether the query is read on the session's own connection (it reads
    /// temp tables or a database attached in memory), and so shows the
    /// session's uncommitted rows until `COMMIT` or `ROLLBACK`. Other live
    /// queries show committed data only.
    public var readsSession: Bool
    /// How other writers' commits are matched to this query.
    public var precision: ExternalPrecision
    /// What its change events carry.
    public var delivery: LiveQueryDelivery
    /// The last time its SQL ran (the first fetch included; shared by live
    /// queries with the same SQL): how long it took and SQLite's counters.
    public var lastRun: Run?
    /// How many times its state kept from rows was found to differ from the
    /// query read whole at the same commit (`LiveQueryOptions.keptAuditEvery`):
    /// a defect, healed by the whole read. 0 when none was found.
    public var defects: Int = 0

    /// One run of a live query's SQL.
    public struct Run: Hashable, Sendable {
        public var elapsed: Duration
        public var counters: StatementCounters

        public init(elapsed: Duration, counters: StatementCounters) {
            self.elapsed = elapsed
            self.counters = counters
        }
    }

    public init(
        name: String, definition: LiveQueryDefinition, tables: [String], region: String, version: Int,
        refreshes: Int, lastRefresh: Date?, lastRefreshDuration: Duration?, paused: Bool, error: SQLiveError?,
        readsSession: Bool = false, precision: ExternalPrecision = .all, delivery: LiveQueryDelivery = .rows,
        lastRun: Run? = nil
    ) {
        self.name = name
        self.definition = definition
        self.tables = tables
        self.region = region
        self.version = version
        self.refreshes = refreshes
        self.lastRefresh = lastRefresh
        self.lastRefreshDuration = lastRefreshDuration
        self.paused = paused
        self.error = error
        self.readsSession = readsSession
        self.precision = precision
        self.delivery = delivery
        self.lastRun = lastRun
    }
}

/// How a commit by another connection or process is matched to live queries.
public enum ExternalPrecision: String, Hashable, Sendable {
    /// By the rows it changed: the query is kept from them, not run again
    /// (`MaintainedPlan`'s shapes, over one table of a watched file).
    case rows
    /// By the tables it changed: only the queries that read them refresh.
    case tables
    /// Not matched: every live query refreshes (unchanged results are not
    /// re-sent). Today's behaviour for every database.
    case all
}

/// One event of a database's session, live or traced (`LiveDatabase.sessionEvents()`).
public enum SessionEvent: Sendable {
    case live(LiveQueryEvent)
    /// The changes one commit caused, read from one snapshot: a front end
    /// shows them together, as one state of the database, never one
    /// without the others (two live queries over two tables that a
    /// transaction moved a value between).
    case liveBatch([LiveQueryEvent])
    case trace(TraceEvent)
}
