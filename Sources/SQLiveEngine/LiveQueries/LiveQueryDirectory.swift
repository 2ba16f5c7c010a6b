import SQLiveLocks

/// Live queries by name: the handles a front end reaches by the names its
/// user gave them (the REPL's `.watch NAME`, JSON-RPC's `liveQuery/*`,
/// MCP's `watch` tool), each registered with `LiveDatabase.watch`.
///
/// Every database has one (`LiveDatabase.directory`), shared by the front
/// ends of its session. It checks names (not blank, not taken), lists its
/// queries, and tells their events (`events()`, and the database's
/// `sessionEvents()`: its handles have no streams of their own); a handle
/// it does not hold (the schema watch, an editor's inline result) is no
/// one's business but its owner's.
public final class LiveQueryDirectory: Sendable {
    // Mutable State: guarded by the mutex; any task reaches it.
    //
    // Invariants
    // - A name is in `handles` or in `registering`, never both.
    // - `ids` holds the id of every handle in `handles`, and of every
    //   registration under way, chosen before it starts: its events are
    //   the directory's from the first.
    private struct State {
        var handles: [String: LiveQueryHandle] = [:]
        var registering: Set<String> = []
        var ids: Set<LiveQueryID> = []
        var database: LiveDatabase.Weak?
    }
    private let state = Locked(State())

    init() {}

    /// A directory bound to no database: it holds nothing, and registers
    /// nothing (`SQLiveError.closed`).
    public static let empty = LiveQueryDirectory()

    /// The database it registers with (once, as the database is made).
    func bind(to database: LiveDatabase) {
        state.withLock { $0.database = LiveDatabase.Weak(database: database) }
    }

    private func database() throws(SQLiveError) -> LiveDatabase {
        guard let database = state.withLock({ $0.database?.database }) else { throw .closed }
        return database
    }

    /// Whether an event about this registration is the directory's.
    func contains(_ id: LiveQueryID) -> Bool {
        state.withLock { $0.ids.contains(id) }
    }

    /// The handle of a live query, by name.
    public func handle(named name: String) -> LiveQueryHandle? {
        state.withLock { $0.handles[name] }
    }

    /// The names, sorted.
    public var names: [String] {
        state.withLock { $0.handles.keys.sorted() }
    }

    private func require(_ name: String) throws(SQLiveError) -> LiveQueryHandle {
        guard let handle = handle(named: name) else { throw .unknownLiveQuery(name) }
        return handle
    }

    /// Registers a live query under a name and answers with its first
    /// result, version 1. From then on each change of its result goes to
    /// `events()`, whoever wrote the database.
    ///
    /// ```swift
    /// let snapshot = try await database.directory.register(
    ///     name: "leaders",
    ///     LiveQueryDefinition(sql: "SELECT name, score FROM players ORDER BY score DESC"))
    /// ```
    ///
    /// - throws: `SQLiveError.liveQueryNameTaken`, `.invalidLiveQueryName`
    ///   (blank), and what `LiveDatabase.watch` throws.
    @discardableResult
    public func register(
        name: String, _ definition: LiveQueryDefinition, delivery: LiveQueryDelivery = .rows
    ) async throws(SQLiveError) -> LiveQuerySnapshot {
        guard !name.allSatisfy(\.isWhitespace) else {
            throw .invalidLiveQueryName("a live query needs a name that is not blank")
        }
        let database = try database()
        let id = LiveQueryID.next()
        let taken = state.withLock { state -> Bool in
            guard state.handles[name] == nil, !state.registering.contains(name) else { return true }
            state.registering.insert(name)
            state.ids.insert(id)
            return false
        }
        guard !taken else { throw .liveQueryNameTaken(name) }
        do {
            let handle = try await database.watch(id, name: name, definition, delivery: delivery, ownEvents: false)
            // Answered with, and not kept twice (before anyone can reach the handle).
            let first = handle.first
            handle.letGoOfFirstRows()
            state.withLock { state in
                state.registering.remove(name)
                state.handles[name] = handle
            }
            return first
        } catch {
            state.withLock { state in
                state.registering.remove(name)
                state.ids.remove(id)
            }
            throw error
        }
    }

    /// Redefines a live query in place: new SQL, parameters, row cap or
    /// delivery (`nil`: as it was), same name, and the version goes on from
    /// where it was.
    public func update(
        name: String, sql: String? = nil, parameters: QueryParameters? = nil, maxRows: Int?? = nil,
        delivery: LiveQueryDelivery? = nil
    ) async throws(SQLiveError) -> LiveQuerySnapshot {
        do {
            return try await require(name).update(
                sql: sql, parameters: parameters, maxRows: maxRows, delivery: delivery)
        } catch .closed where handle(named: name) == nil {
            // Unregistered while it was redefined.
            throw .unknownLiveQuery(name)
        }
    }

    /// Drops a live query; all its work stops at once.
    public func unregister(name: String) async throws(SQLiveError) {
        let handle = state.withLock { state -> LiveQueryHandle? in
            guard let handle = state.handles.removeValue(forKey: name) else { return nil }
            state.ids.remove(handle.id)
            return handle
        }
        guard let handle else { throw .unknownLiveQuery(name) }
        await handle.cancel()
    }

    /// Drops every live query of the directory.
    public func unregisterAll() async {
        let handles = state.withLock { state in
            defer { state.handles = [:] }
            for handle in state.handles.values { state.ids.remove(handle.id) }
            return Array(state.handles.values)
        }
        for handle in handles { await handle.cancel() }
    }

    /// Pauses a live query: it does no work until resumed.
    public func pause(name: String) async throws(SQLiveError) {
        try await require(name).pause()
    }

    /// Resumes a paused live query; it refreshes once if anything changed meanwhile.
    public func resume(name: String) async throws(SQLiveError) {
        try await require(name).resume()
    }

    /// The last delivery of a live query: its result, and the error that
    /// replaced it until the SQL runs again, if any.
    public func current(name: String) async throws(SQLiveError) -> (snapshot: LiveQuerySnapshot, error: SQLiveError?) {
        try await require(name).current()
    }

    /// The live queries, sorted by name.
    public func list() async -> [LiveQueryInfo] {
        guard let database = try? database() else { return [] }
        let handles = state.withLock { state in state.handles.sorted { $0.key < $1.key }.map(\.value) }
        let live = database.live
        // One visit to the scheduler for all of them.
        let infos = await live.scheduler.infos(handles.map(\.id))
        let precision = live.precision
        return handles.compactMap { handle in
            guard var info = infos[handle.id] else { return nil }
            if info.precision != .rows { info.precision = precision }
            return info
        }
    }

    /// The events of the directory's live queries (changes, errors) and of
    /// the database file, from now on; it ends when the database is closed.
    public func events() -> AsyncStream<LiveQueryEvent> {
        guard let database = try? database() else { return AsyncStream { $0.finish() } }
        return database.events.subscription(flattening: { [self] notice in notice.events(about: contains) }).stream
    }
}
