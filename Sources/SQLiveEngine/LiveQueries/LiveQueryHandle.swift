import Foundation
import SQLiveLocks
import Synchronization

/// A live query owned by the code that registered it: its work ends when
/// the handle is cancelled or released, as a GRDB `DatabaseCancellable`'s
/// does. `LiveDatabase.watch` is the one way to register a live query;
/// a `LiveQueryDirectory` gives handles names a front end can reach.
///
/// The engine keeps the query's state (its result, version, pauses); the
/// handle is how a front end reaches it, so a front end keeps handles, not
/// copies of results.
///
/// ```swift
/// let leaders = try await database.watch(
///     name: "leaders", LiveQueryDefinition(sql: "SELECT name, score FROM players ORDER BY score DESC"))
/// print(leaders.first.result.rows)
/// for await event in leaders.events { ... }   // this query's changes and errors, and file events
/// await leaders.cancel()                       // or let the handle go
/// ```
public final class LiveQueryHandle: Sendable {
    /// The registration, as the engine keys it.
    public let id: LiveQueryID
    /// What its events and infos call it (a label: two handles may share it).
    public let name: String
    /// The first result, version 1.
    ///
    /// A handle a `LiveQueryDirectory` registered keeps the first result's
    /// rows only until the directory has answered with them: its `first`
    /// then has the first version's columns, counts and tables, and no
    /// rows. The query as it stands is the directory's `current(name:)`;
    /// a copy of a large first result kept for the query's life would
    /// double what it holds.
    public var first: LiveQuerySnapshot { firstSnapshot.withLock { $0 } }
    private let firstSnapshot: Locked<LiveQuerySnapshot>
    /// This query's events from its registration on (changes and
    /// failures), and the database file's; it ends when the handle is
    /// cancelled or the database closed. One consumer iterates it.
    ///
    /// A handle a `LiveQueryDirectory` registered has none (the stream
    /// ends at once): its events go to the directory's `events()`, one
    /// stream for all of them, so that a notice is not offered to every
    /// query's stream.
    public let events: AsyncStream<LiveQueryEvent>

    private weak let database: LiveDatabase?
    private let finishEvents: @Sendable () -> Void
    /// Set once, by the first `cancel()` or by `deinit`.
    private let ended = Atomic<Bool>(false)

    init(
        id: LiveQueryID, name: String, first: LiveQuerySnapshot, events: AsyncStream<LiveQueryEvent>,
        finishEvents: @escaping @Sendable () -> Void, database: LiveDatabase
    ) {
        self.id = id
        self.name = name
        self.firstSnapshot = Locked(first)
        self.events = events
        self.finishEvents = finishEvents
        self.database = database
    }

    /// Lets go of the first result's rows (a directory's handle, once the
    /// directory has answered with them).
    func letGoOfFirstRows() {
        firstSnapshot.withLock { $0.result.rows = ResultRows() }
    }

    /// The scheduler that has the query now (the file may have been
    /// replaced and followed since it was registered).
    private func scheduler() throws(SQLiveError) -> RefreshScheduler<ContinuousClock> {
        guard !ended.load(ordering: .acquiring) else { throw .unknownLiveQuery(name) }
        guard let database else { throw .closed }
        return database.live.scheduler
    }

    /// The query's last delivery: its result, and the error that replaced
    /// it until the SQL runs again, if any.
    ///
    /// - throws: `SQLiveError.unknownLiveQuery` once cancelled, `.closed`.
    public func current() async throws(SQLiveError) -> (snapshot: LiveQuerySnapshot, error: SQLiveError?) {
        try await scheduler().current(id)
    }

    /// What `LiveQueryDirectory.list()` shows of it; nil once cancelled or closed.
    public func info() async -> LiveQueryInfo? {
        guard let database, let scheduler = try? scheduler() else { return nil }
        var info = await scheduler.infos([id])[id]
        if info?.precision != .rows { info?.precision = database.live.precision }
        return info
    }

    /// Redefines the query in place: new SQL, parameters, row cap or
    /// delivery (`nil`: as it was); the version goes on from where it was.
    ///
    /// - throws: as `LiveDatabase.watch`, and `.unknownLiveQuery` once cancelled.
    public func update(
        sql: String? = nil, parameters: QueryParameters? = nil, maxRows: Int?? = nil,
        delivery: LiveQueryDelivery? = nil
    ) async throws(SQLiveError) -> LiveQuerySnapshot {
        if let sql {
            try SQLScript.checkText(sql)
            try LiveDatabase.checkKeepsConnections(sql)
        }
        if case .some(.some(let maxRows)) = maxRows, maxRows < 1 {
            throw .invalidParameters("maxRows must be 1 or more (it was \(maxRows))")
        }
        return try await scheduler().update(
            id, sql: sql, parameters: parameters, maxRows: maxRows, delivery: delivery)
    }

    /// Pauses the query: it does no work until resumed.
    public func pause() async throws(SQLiveError) {
        try await scheduler().pause(id)
    }

    /// Resumes a paused query; it refreshes once if anything changed meanwhile.
    public func resume() async throws(SQLiveError) {
        try await scheduler().resume(id)
    }

    /// Whether `cancel()` was called.
    public var isCancelled: Bool { ended.load(ordering: .acquiring) }

    /// Ends the live query now: no more work, no more events. Calling it
    /// again does nothing.
    public func cancel() async {
        guard !ended.exchange(true, ordering: .acquiringAndReleasing) else { return }
        finishEvents()
        // Through the releases, which a scheduler replaced meanwhile (the
        // file was) hands to its successor.
        guard let scheduler = database?.live.scheduler else { return }
        scheduler.release(id)
        await scheduler.serveReleases()
    }

    deinit {
        guard !ended.exchange(true, ordering: .acquiringAndReleasing) else { return }
        finishEvents()
        // The scheduler is an actor, which a deinit cannot wait for: its
        // run loop unregisters the query (gone already if the database
        // closed).
        database?.live.scheduler.release(id)
    }
}

extension LiveDatabase {
    /// Registers a live query owned by the returned handle, and reads its
    /// first result: its work ends when the handle is cancelled or
    /// released. The one way to register a live query; front ends that
    /// reach queries by name keep their handles in a `LiveQueryDirectory`.
    ///
    /// - parameter name: what its events call it (a label; not checked
    ///   for uniqueness: that is a directory's).
    /// - throws: `SQLiveError.invalidSQL` (a NUL byte, no statement),
    ///   `.invalidLiveQuery` (not one read-only statement),
    ///   `.invalidParameters` (a `maxRows` below 1), `.closed`, or `.sqlite`.
    public func watch(
        name: String, _ definition: LiveQueryDefinition, delivery: LiveQueryDelivery = .rows
    ) async throws(SQLiveError) -> LiveQueryHandle {
        try await watch(LiveQueryID.next(), name: name, definition, delivery: delivery)
    }

    /// `watch`, for a registration whose id was chosen before (a
    /// directory lists it from its first event on).
    ///
    /// - parameter ownEvents: whether the handle has a stream of its
    ///   events (a directory's handles do not: the directory's stream
    ///   carries them).
    func watch(
        _ id: LiveQueryID, name: String, _ definition: LiveQueryDefinition, delivery: LiveQueryDelivery = .rows,
        ownEvents: Bool = true
    ) async throws(SQLiveError) -> LiveQueryHandle {
        try Self.check(definition)
        // Subscribed before it is registered, so that no event is missed.
        let events: AsyncStream<LiveQueryEvent>
        let finish: @Sendable () -> Void
        if ownEvents {
            (events, finish) = self.events.subscription(flattening: { notice in notice.events(about: { $0 == id }) })
        } else {
            events = AsyncStream { $0.finish() }
            finish = {}
        }
        let first: LiveQuerySnapshot
        do {
            first = try await live.scheduler.register(id, name: name, definition: definition, delivery: delivery)
        } catch {
            finish()
            throw error
        }
        return LiveQueryHandle(id: id, name: name, first: first, events: events, finishEvents: finish, database: self)
    }
}
