import Foundation

/// Lists the live queries, sorted by name.
///
/// It never waits for a running query, so an editor can refresh its panel
/// at any time.
///
/// ```json
/// --> {"jsonrpc": "2.0", "id": 10, "method": "liveQuery/list"}
/// <-- {"jsonrpc": "2.0", "id": 10, "result": {"liveQueries": [{"name": "leaders",
///      "sql": "SELECT name, score FROM players", "tables": ["players"], "version": 3, "refreshes": 3,
///      "paused": false, ...}]}}
/// ```
public enum LiveQueryListRequest: RequestType {
    public static let method = "liveQuery/list"

    /// `{rows?}`: with `rows: true`, each live query's current result too
    /// (a client that joins a session's live queries: the live page of
    /// the REPL's `.web`).
    public struct Params: Codable, Sendable {
        public var rows: Bool?

        public init(rows: Bool? = nil) {
            self.rows = rows
        }

        /// Anything but an object (a Lua client's empty table is `[]`) reads
        /// as no params, as before `rows` was taken.
        public init(from decoder: any Decoder) throws {
            guard let container = try? decoder.container(keyedBy: CodingKeys.self) else {
                rows = nil
                return
            }
            rows = try container.decodeIfPresent(Bool.self, forKey: .rows)
        }
    }

    public struct Result: Codable, Sendable {
        public var liveQueries: [LiveQuery]

        public init(liveQueries: [LiveQuery]) {
            self.liveQueries = liveQueries
        }
    }

    public struct LiveQuery: Codable, Sendable {
        public var name: String
        public var sql: String
        public var params: RPCParameters?
        /// The tables the query reads.
        public var tables: [String]
        /// The tables and columns it reads, as in `games(id,title),players(*)`.
        public var region: String
        public var version: Int
        /// How many times its SQL ran.
        public var refreshes: Int
        public var paused: Bool
        /// When it last ran, in ISO 8601.
        public var lastRefresh: String?
        public var lastRefreshMs: Double?
        /// The last run of its SQL (its first fetch included): how long
        /// it took, and SQLite's counters for it.
        public var lastRunMs: Double?
        public var counters: ProfileCounters?
        /// The error of its last refresh, if it failed.
        public var error: ResponseError?
        /// What its notifications carry: `false`, `true` (with `diff`) or `"only"`.
        public var diff: DiffOption
        /// `"tables"` when other processes' commits are matched by table,
        /// `"all"` when each of them refreshes every live query.
        public var precision: String
        /// Whether it is read on the session's own connection (it reads
        /// temp tables or a database attached in memory), and so shows the
        /// session's uncommitted rows until `COMMIT` or `ROLLBACK`; other
        /// live queries show committed rows only.
        public var readsSession: Bool
        /// For a query kept from rows: how many times its kept state was
        /// found to differ from the query read whole at the same commit (a
        /// defect of sqlive's, healed when found); absent when none was.
        public var defects: Int?
        /// With `rows: true`: its current result, as `liveQuery/changed`
        /// carries it.
        public var columns: [String]?
        public var rows: RPCRows?
        public var truncated: Bool?
        public var total: Int?

        public init(
            name: String, sql: String, params: RPCParameters? = nil, tables: [String], region: String, version: Int,
            refreshes: Int, paused: Bool, lastRefresh: String? = nil, lastRefreshMs: Double? = nil,
            error: ResponseError? = nil, diff: DiffOption, precision: String, readsSession: Bool,
            lastRunMs: Double? = nil, counters: ProfileCounters? = nil
        ) {
            self.name = name
            self.sql = sql
            self.params = params
            self.tables = tables
            self.region = region
            self.version = version
            self.refreshes = refreshes
            self.paused = paused
            self.lastRefresh = lastRefresh
            self.lastRefreshMs = lastRefreshMs
            self.error = error
            self.diff = diff
            self.precision = precision
            self.readsSession = readsSession
            self.lastRunMs = lastRunMs
            self.counters = counters
        }
    }
}
