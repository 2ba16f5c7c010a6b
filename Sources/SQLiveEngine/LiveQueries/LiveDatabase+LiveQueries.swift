import Foundation

extension LiveDatabase {
    /// Registers a live query and answers with its first result, version 1.
    ///
    /// From then on, each change of its result is delivered to
    /// `liveQueryEvents()` subscribers, whoever wrote the database.
    ///
    /// ```swift
    /// let snapshot = try await database.registerLiveQuery(
    ///     name: "leaders",
    ///     LiveQueryDefinition(sql: "SELECT name, score FROM players ORDER BY score DESC"))
    /// ```
    ///
    /// - throws: `SQLiveError.liveQueryNameTaken`, `.invalidLiveQueryName`
    ///   (empty), `.invalidSQL` (a NUL byte, no statement),
    ///   `.invalidLiveQuery` (not one read-only statement),
    ///   `.invalidParameters` (a `maxRows` below 1), or `.sqlite`.
    public func registerLiveQuery(
        name: String, _ definition: LiveQueryDefinition, delivery: LiveQueryDelivery = .rows
    ) async throws(SQLiveError) -> LiveQuerySnapshot {
        try Self.check(name: name, definition)
        return try await live.scheduler.register(name: name, definition: definition, delivery: delivery)
    }

    /// What registering checks before it reads: a name, SQL text, a row cap.
    static func check(name: String, _ definition: LiveQueryDefinition) throws(SQLiveError) {
        guard !name.allSatisfy(\.isWhitespace) else {
            throw .invalidLiveQueryName("a live query needs a name that is not blank")
        }
        try check(definition)
    }

    static func check(_ definition: LiveQueryDefinition) throws(SQLiveError) {
        try SQLScript.checkText(definition.sql)
        try checkKeepsConnections(definition.sql)
        if let maxRows = definition.maxRows, maxRows < 1 {
            throw .invalidParameters("maxRows must be 1 or more (it was \(maxRows))")
        }
    }

    /// Refuses a live query that would change the connections it is
    /// prepared on (the session's, to find where it reads; the live
    /// queries' shared one): `ConnectionSetting`.
    static func checkKeepsConnections(_ sql: String) throws(SQLiveError) {
        if let pragma = ConnectionSetting.settingPragma(in: sql) {
            throw .invalidLiveQuery("a live query must only read: " + ConnectionSetting.refusal(pragma: pragma))
        }
    }

    /// Redefines a live query in place: new SQL, parameters, row cap or
    /// delivery (`nil`: as it was), same name, and the version goes on from
    /// where it was.
    public func updateLiveQuery(
        name: String, sql: String? = nil, parameters: QueryParameters? = nil, maxRows: Int?? = nil,
        delivery: LiveQueryDelivery? = nil
    ) async throws(SQLiveError) -> LiveQuerySnapshot {
        if let sql {
            try SQLScript.checkText(sql)
            try Self.checkKeepsConnections(sql)
        }
        if case .some(.some(let maxRows)) = maxRows, maxRows < 1 {
            throw .invalidParameters("maxRows must be 1 or more (it was \(maxRows))")
        }
        try await live.scheduler.requireListed(name)
        return try await live.scheduler.update(
            name: name, sql: sql, parameters: parameters, maxRows: maxRows, delivery: delivery)
    }

    /// Drops a live query; all its work stops at once.
    public func unregisterLiveQuery(name: String) async throws(SQLiveError) {
        try await live.scheduler.requireListed(name)
        try await live.scheduler.unregister(name: name)
    }

    /// Drops every live query registered by name (`registerLiveQuery`,
    /// `watch`). The engine's own (the schema watch) and the unlisted ones
    /// belong to their handles' owners, and stay.
    public func unregisterAllLiveQueries() async {
        await live.scheduler.unregisterListed()
    }

    /// Pauses a live query: it does no work until resumed.
    public func pauseLiveQuery(name: String) async throws(SQLiveError) {
        try await live.scheduler.requireListed(name)
        try await live.scheduler.pause(name: name)
    }

    /// Resumes a paused live query; it refreshes once if anything changed meanwhile.
    public func resumeLiveQuery(name: String) async throws(SQLiveError) {
        try await live.scheduler.requireListed(name)
        try await live.scheduler.resume(name: name)
    }

    /// How many refreshes used a result read at sqlive's own commit, on
    /// the session's connection (`LocalPrefetch`), since the file was opened.
    package var prefetchedRefreshCount: Int { live.prefetch.used }

    /// What reading other processes' commits from the WAL has cost so far.
    public func walPrecisionStatistics() -> WALPrecisionStatistics {
        live.walPrecisionStatistics
    }

    /// The live queries, sorted by name.
    public func liveQueries() async -> [LiveQueryInfo] {
        let precision = live.precision
        return await live.scheduler.list().map { info in
            var info = info
            info.precision = precision
            return info
        }
    }

    /// A stream of live-query events (changes, errors, file changes).
    ///
    /// Subscribe before registering to see every event; the stream ends
    /// when the database is closed.
    public func liveQueryEvents() -> AsyncStream<LiveQueryEvent> {
        events.subscription(flattening: { notice in notice.listedEvents }).stream
    }

    /// A stream that yields each time the schema may have changed, whoever
    /// changed it: sqlive's own statements or another process's commits.
    ///
    /// It is a live query of the engine's own, on `sqlite_schema`, so it
    /// has the live queries' guarantees (a burst of commits is coalesced,
    /// the last one is never missed) and is neither listed nor sent to
    /// `liveQueryEvents()`. It stops when the stream is dropped or the
    /// database closed. Errors (a damaged file) yield too: the schema is
    /// worth reading again.
    public func schemaChanges() async throws(SQLiveError) -> AsyncStream<Void> {
        let watch = try await watchUnlisted(
            LiveQueryDefinition(sql: "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY 1, 2"))
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        // The forwarder owns the handle: it ends when the events end (the
        // database closes) or when the stream is dropped, and the handle's
        // release ends the query.
        let forwarder = Task {
            for await event in watch.events where event.name != nil { continuation.yield() }
            continuation.finish()
            await watch.cancel()
        }
        continuation.onTermination = { _ in forwarder.cancel() }
        return stream
    }
}
