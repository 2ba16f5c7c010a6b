import Foundation
import GRDB
import SQLiveLocks

/// An open SQLite database, with its live queries.
///
/// `LiveDatabase` is the engine's front door: it runs SQL, describes the
/// schema, explains queries, traces statements, and keeps live queries up
/// to date whoever writes the file.
///
/// The session's statements run on one connection (a GRDB
/// `DatabaseQueue`) in every journal mode, which is left as it is; live
/// queries read on a connection of their own.
///
/// ```swift
/// let database = try await LiveDatabase.open(.file("games.sqlite"))
/// let results = try await database.execute("SELECT title FROM games")
/// ```
public final class LiveDatabase: Sendable {
    /// Options that change how a database is opened and observed.
    public struct Options: Sendable {
        /// Open read-only: writes fail, and the file is never modified.
        public var readonly: Bool
        /// How long to wait for a lock held by another connection before
        /// failing with "database is locked".
        public var busyTimeout: Duration
        /// Live-query options: coalescing window, row cap, polling.
        public var liveQueries: LiveQueryOptions
        /// Called once with the session's own connection (its `sqlite3`
        /// handle) when it opens, and again when a replaced file is followed,
        /// before any statement runs there; never with a live query's, the
        /// checker's or any other connection. The REPL registers the sqlite3
        /// shell's SQL functions (`readfile`, `decimal`, …) this way.
        package var prepareSession: (@Sendable (OpaquePointer) -> Void)?

        public init(
            readonly: Bool = false,
            busyTimeout: Duration = .seconds(5),
            liveQueries: LiveQueryOptions = LiveQueryOptions()
        ) {
            self.readonly = readonly
            self.busyTimeout = busyTimeout
            self.liveQueries = liveQueries
        }
    }

    /// Where the database lives.
    public let location: DatabaseLocation
    /// The facts reported when the database was opened (or when the file
    /// it follows was replaced).
    public var info: DatabaseInfo { state.withLock { $0.core.info } }
    /// The session's connection, where user statements run: a GRDB
    /// `DatabaseQueue`.
    package var writer: any DatabaseWriter { state.withLock { $0.core.writer } }
    let tracer: StatementTracer
    /// The live-query machinery: registry, change monitors, scheduler.
    var live: LiveQueryCenter { state.withLock { $0.core.live } }
    /// Every live-query event, whichever center yields it: subscribers keep
    /// their stream when the file is replaced and followed.
    let events: Broadcaster<LiveQueryNotice>
    /// Live-query and trace events together, in the order they happened.
    let ordered: Broadcaster<SessionEvent>
    /// The session's live queries by name, for its front ends.
    public let directory: LiveQueryDirectory
    /// The change feed (`rowChanges(tables:)`): it outlives a followed file's watcher.
    let rowFeed: RowFeed
    let options: Options
    /// A dqlite database's link to its cluster (`nil` for a local one):
    /// statements run on its leader, and `location` is its mirror.
    let remote: DqliteRemote?

    /// The `dqlite://…` URL of a database opened from a dqlite cluster.
    public var remoteURL: String? { remote?.target.url }

    /// What one opened file gives: its facts, the session's connection and
    /// the live-query machinery over it.
    struct Core: Sendable {
        var info: DatabaseInfo
        var writer: any DatabaseWriter
        var live: LiveQueryCenter
    }

    // Mutable State: guarded by the mutex. `core` is replaced, whole, when
    // the file at `location` is replaced and followed; `following` is the
    // task that does it (at most one), awaited by `close`; `closed` stops
    // new ones.
    private struct State {
        var core: Core
        var following: Task<Void, Never>?
        /// A replacement reported while a follow was under way: followed next.
        var pending: DatabaseFileChange?
        var closed = false
        /// The refresh budget set since opening (`setRefreshBudget`), which
        /// a followed file's scheduler keeps too.
        var refreshBudget: Duration??
    }
    private let state: Locked<State>
    /// The clients' own connections (`makeClientConnection`), let go
    /// when the file is replaced and followed.
    let clients = Locked<[WeakClient]>([])

    init(
        location: DatabaseLocation, tracer: StatementTracer, options: Options, events: Broadcaster<LiveQueryNotice>,
        ordered: Broadcaster<SessionEvent> = Broadcaster(), directory: LiveQueryDirectory = LiveQueryDirectory(),
        rowFeed: RowFeed = RowFeed(), remote: DqliteRemote? = nil, core: Core
    ) {
        self.rowFeed = rowFeed
        self.remote = remote
        self.location = location
        self.tracer = tracer
        self.options = options
        self.events = events
        self.ordered = ordered
        self.directory = directory
        state = Locked(State(core: core))
        directory.bind(to: self)
    }

    /// Another directory of live queries over this database, for a front
    /// end's session of its own (an MCP session over HTTP): its names are
    /// its own, its events are its own (`sessionEvents()` carries only
    /// `directory`'s), and a query it shares with another directory is
    /// still evaluated once.
    public func makeDirectory() -> LiveQueryDirectory {
        let directory = LiveQueryDirectory()
        directory.bind(to: self)
        return directory
    }

    /// A database, not kept alive (the watcher's word that the file was
    /// replaced reaches it through one).
    struct Weak: Sendable {
        weak var database: LiveDatabase?
    }

    /// Interrupts every statement the session is running.
    ///
    /// A statement interrupted this way fails with "interrupted"; the
    /// database stays usable. Live queries are read on a connection of
    /// their own and go on.
    public func interrupt() {
        writer.interrupt()
    }

    /// Sets how long a live query's refresh may run before it is stopped
    /// and the query fails "too slow to keep live" (`nil`: no limit), for
    /// the refreshes that start from now on; the option given at opening
    /// is `LiveQueryOptions.refreshBudget`.
    public func setRefreshBudget(_ budget: Duration?) async {
        let live = state.withLock { state in
            state.refreshBudget = .some(budget)
            return state.core.live
        }
        await live.scheduler.setBudget(budget)
    }

    /// The live queries' refresh budget now.
    public var refreshBudget: Duration? {
        state.withLock { $0.refreshBudget ?? options.liveQueries.refreshBudget }
    }

    /// The statement-trace settings.
    ///
    /// GRDB's trace on the session connection follows them soon after, and
    /// before the next statement runs there.
    public var traceSettings: TraceSettings {
        get { tracer.settings }
        set {
            tracer.settings = newValue
            let tracer = tracer
            writer.asyncWriteWithoutTransaction { db in tracer.matchSessionTrace(on: db) }
        }
    }

    /// A stream of traced statements; it ends when the database is closed.
    public func traceEvents() -> AsyncStream<TraceEvent> {
        tracer.events()
    }

    /// Live-query events (as `liveQueryEvents()`) and traced statements
    /// (as `traceEvents()`) in one stream, in the order they happened: a
    /// front end with one consumer shows a refresh's trace line before the
    /// change it delivered. It ends when the database is closed.
    public func sessionEvents() -> AsyncStream<SessionEvent> {
        ordered.subscribe()
    }

    /// Stops observing, drops every live query, and closes the connections.
    public func close() async {
        let following = state.withLock { state in
            state.closed = true
            return state.following
        }
        await following?.value
        let core = state.withLock { $0.core }
        await Self.shut(core)
        remote?.stop()
        tracer.finish()
        events.finish()
        ordered.finish()
        rowFeed.finish()
    }

    /// The change feed: each commit's changed rows, by any process or
    /// connection, in commit order, from now on — inserts, updates (old and
    /// new values) and deletes, derived from the pages the commit wrote
    /// (`WALRowDeriver`), or a table whose rows are unknown for a commit
    /// (never a guess). A commit that changed none of the tables is not
    /// sent. The stream ends when the database closes.
    ///
    /// - parameter tables: the tables to report (any case); `nil` or empty:
    ///   every table but SQLite's own `sqlite_…` tables.
    public func rowChanges(tables: [String]? = nil) -> AsyncStream<CommitRows> {
        rowFeed.subscribe(RowFeedFilter(tables: tables))
    }

    /// Stops a core's live queries and closes its session's connection.
    static func shut(_ core: Core) async {
        await core.live.shutdown()
        do {
            if let queue = core.writer as? DatabaseQueue {
                try queue.close()
            }
        } catch {
            // A connection still in use by a statement closes when it ends.
            Log.engine.warning("closing \(core.info.path): \(error)")
        }
    }

    // MARK: - Following a replaced file

    /// Called by the watcher's run loop when the file at `location` was
    /// replaced by another (an editor's save, `.backup` then `mv`, a
    /// migration that rebuilds the file): follows it in a task of its own.
    func fileWasReplaced(_ change: DatabaseFileChange) {
        state.withLock { state in
            guard !state.closed else { return }
            guard state.following == nil else {
                // Replaced again while following: follow once more after.
                state.pending = change
                return
            }
            state.following = Task { [weak self] in
                var next: DatabaseFileChange? = change
                while let change = next {
                    await self?.follow(change)
                    next = self?.state.withLock { state in
                        defer { state.pending = nil }
                        if state.pending == nil || state.closed { state.following = nil }
                        return state.closed ? nil : state.pending
                    }
                }
            }
        }
    }

    /// Opens the new file at the same path, moves every live query there
    /// (names, versions, paused or not, last deliveries), and closes the old
    /// file's connections. The queries are then read on the new file, and
    /// each delivers what differs, at its next version. When the new file
    /// cannot be opened, everything stays on the old one, and the event
    /// says so.
    func follow(_ change: DatabaseFileChange) async {
        let old = state.withLock { $0.core }
        let path = change.path
        // The new file may still be being written (a migration, the sqlite3
        // shell creating it): opening it now could fail that writer's
        // commit. Wait until it settles (`SettleWait`, 2 s at most).
        let clock = ContinuousClock()
        var settle = SettleWait(start: clock.now)
        while case .look(let after) = settle.next(SettleWait<ContinuousClock.Instant>.read(path), at: clock.now) {
            do {
                try await clock.sleep(for: after)
            } catch {
                break  // Cancelled: follow now.
            }
        }
        // A WAL file's `-shm` has the same name for the old file and the
        // new one: opened while the old connections still map it, SQLite
        // gives the new connections a second shared-memory node on the same
        // file, and closing the old node's descriptor then drops every POSIX
        // lock this process holds on it (the new node's too). Another
        // process then takes the file for the first and truncates it under
        // the new mapping: SIGBUS at the next wal-index read (the test
        // suite's crash). So the old connections close first; their live
        // queries wait in `moving` for the new ones.
        let shmPath = (location.filePath.map { DatabaseLocation.resolvingSymbolicLinks($0) } ?? path) + "-shm"
        var moving: [LiveQueryRegistry.Moved]?
        if FileManager.default.fileExists(atPath: shmPath) {
            moving = await old.live.scheduler.handOver()
            await Self.shut(old)
        }
        // The clients' own connections to the old file go too (each opens
        // again, on the new file, at its next statement).
        for client in clients.withLock({ $0.compactMap(\.client) }) { client.letGo() }
        let new: Core
        do {
            new = try await Self.openCore(
                location, options: options, tracer: tracer, events: events, rowFeed: rowFeed
            ) {
                [weak self] change in self?.fileWasReplaced(change)
            }
        } catch {
            events.yield(
                LiveQueryNotice(
                    .databaseFileChanged(
                        DatabaseFileChange(
                            path: path, reason: .replaced,
                            message: moving == nil
                                ? "\(path) was replaced by a file sqlive cannot open (\(error)); "
                                    + "the live queries go on reading the file it replaced"
                                : "\(path) was replaced by a file sqlive cannot open (\(error)); "
                                    + "its live queries ended with the file it replaced"))))
            return
        }
        // The old scheduler stops taking changes as it hands its queries
        // over; the new one has them all before anyone can reach it.
        let handed: [LiveQueryRegistry.Moved]
        if let moving {
            handed = moving
        } else {
            handed = await old.live.scheduler.handOver()
        }
        if let budget = state.withLock({ $0.refreshBudget }) { await new.live.scheduler.setBudget(budget) }
        await new.live.scheduler.adopt(handed)
        let adopted = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.core = new
            return true
        }
        guard adopted else {
            await Self.shut(new)
            return
        }
        // Handles released while their queries moved reached the old
        // scheduler, shut down: the new one, which every handle reaches
        // from now on, unregisters them.
        old.live.scheduler.handReleases(to: new.live.scheduler)
        await new.live.scheduler.serveReleases()
        events.yield(
            LiveQueryNotice(
                .databaseFileChanged(
                    DatabaseFileChange(
                        path: path, reason: .replaced,
                        message: "\(path) was replaced by another file: the live queries now read the new one"))))
        if moving == nil { await Self.shut(old) }
    }
}
