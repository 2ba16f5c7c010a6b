import Foundation
import Synchronization

/// A live query owned by the code that registered it: its work ends when
/// the handle is cancelled or released, as a GRDB `DatabaseCancellable`'s
/// does.
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
    /// The live query's name, as `liveQueries()` lists it.
    public let name: String
    /// The first result, version 1.
    public let first: LiveQuerySnapshot
    /// This query's events from its registration on (changes and
    /// failures), and the database file's; it ends when the handle is
    /// cancelled or the database closed. One consumer iterates it.
    public let events: AsyncStream<LiveQueryEvent>

    private weak let database: LiveDatabase?
    /// This registration, among any of the same name before or after it.
    private let owner: UUID
    private let finishEvents: @Sendable () -> Void
    /// Set once, by the first `cancel()` or by `deinit`.
    private let ended = Atomic<Bool>(false)

    init(
        name: String, first: LiveQuerySnapshot, events: AsyncStream<LiveQueryEvent>,
        finishEvents: @escaping @Sendable () -> Void, database: LiveDatabase, owner: UUID
    ) {
        self.name = name
        self.owner = owner
        self.first = first
        self.events = events
        self.finishEvents = finishEvents
        self.database = database
    }

    /// The query's last delivery: its result, and the error that replaced
    /// it until the SQL runs again, if any.
    ///
    /// - throws: `SQLiveError.unknownLiveQuery` once cancelled, `.closed`.
    public func current() async throws(SQLiveError) -> (snapshot: LiveQuerySnapshot, error: SQLiveError?) {
        guard !ended.load(ordering: .acquiring) else { throw .unknownLiveQuery(name) }
        guard let database else { throw .closed }
        return try await database.live.scheduler.current(name: name)
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
        scheduler.release(name: name, owner: owner)
        await scheduler.serveReleases()
    }

    deinit {
        guard !ended.exchange(true, ordering: .acquiringAndReleasing) else { return }
        finishEvents()
        // The scheduler is an actor, which a deinit cannot wait for: its
        // run loop unregisters the query (gone already if the database
        // closed).
        database?.live.scheduler.release(name: name, owner: owner)
    }
}

extension LiveDatabase {
    /// Registers a live query owned by the returned handle: its work ends
    /// when the handle is cancelled or released.
    ///
    /// - throws: as `registerLiveQuery(name:_:)`.
    public func watch(
        name: String, _ definition: LiveQueryDefinition, delivery: LiveQueryDelivery = .rows
    ) async throws(SQLiveError) -> LiveQueryHandle {
        try Self.check(name: name, definition)
        return try await handle(name: name, definition, delivery: delivery)
    }

    /// Registers a live query that no list shows and no `liveQueryEvents()`
    /// subscriber sees: only its handle's events tell its changes (an
    /// editor's inline results).
    ///
    /// - throws: as `registerLiveQuery(name:_:)`.
    public func watchUnlisted(_ definition: LiveQueryDefinition) async throws(SQLiveError) -> LiveQueryHandle {
        try Self.check(definition)
        // A name no caller knows, so none can reach it by name.
        return try await handle(name: "unlisted-\(UUID().uuidString)", definition, visibility: .unlisted)
    }

    /// A handle on a new live query, its events subscribed before it is
    /// registered so that none is missed.
    func handle(
        name: String, _ definition: LiveQueryDefinition, delivery: LiveQueryDelivery = .rows,
        visibility: LiveQueryVisibility = .listed
    ) async throws(SQLiveError) -> LiveQueryHandle {
        let owner = UUID()
        let (events, finish) = events.subscription(flattening: { notice in
            notice.items.compactMap { item -> LiveQueryEvent? in
                let about = item.event.name
                return about == nil || about == name ? item.event : nil
            }
        })
        let first: LiveQuerySnapshot
        do {
            first = try await live.scheduler.register(
                name: name, definition: definition, delivery: delivery, visibility: visibility, owner: owner)
        } catch {
            finish()
            throw error
        }
        return LiveQueryHandle(
            name: name, first: first, events: events, finishEvents: finish, database: self, owner: owner)
    }

    /// The last delivery of a live query, by name.
    ///
    /// - throws: `SQLiveError.unknownLiveQuery`.
    public func currentLiveQuery(name: String) async throws(SQLiveError)
        -> (snapshot: LiveQuerySnapshot, error: SQLiveError?)
    {
        try await live.scheduler.requireListed(name)
        return try await live.scheduler.current(name: name)
    }
}
