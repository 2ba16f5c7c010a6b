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
    ///   `.invalidParameters`, or `.sqlite`.
    public func registerLiveQuery(name: String, _ definition: LiveQueryDefinition) async throws(SQLiveError)
        -> LiveQuerySnapshot
    {
        guard !name.allSatisfy(\.isWhitespace) else {
            throw .invalidLiveQueryName("a live query needs a name that is not blank")
        }
        try SQLScript.checkText(definition.sql)
        return try await live.scheduler.register(name: name, definition: definition)
    }

    /// Redefines a live query in place: new SQL or parameters, same name,
    /// and the version goes on from where it was.
    public func updateLiveQuery(name: String, sql: String? = nil, parameters: QueryParameters? = nil)
        async throws(SQLiveError) -> LiveQuerySnapshot
    {
        if let sql { try SQLScript.checkText(sql) }
        return try await live.scheduler.update(name: name, sql: sql, parameters: parameters)
    }

    /// Drops a live query; all its work stops at once.
    public func unregisterLiveQuery(name: String) async throws(SQLiveError) {
        try await live.scheduler.unregister(name: name)
    }

    /// Drops every live query.
    public func unregisterAllLiveQueries() async {
        await live.scheduler.unregisterAll()
    }

    /// Pauses a live query: it does no work until resumed.
    public func pauseLiveQuery(name: String) async throws(SQLiveError) {
        try await live.scheduler.pause(name: name)
    }

    /// Resumes a paused live query; it refreshes once if anything changed meanwhile.
    public func resumeLiveQuery(name: String) async throws(SQLiveError) {
        try await live.scheduler.resume(name: name)
    }

    /// The live queries, sorted by name.
    public func liveQueries() async -> [LiveQueryInfo] {
        await live.scheduler.list()
    }

    /// A stream of live-query events (changes, errors, file changes).
    ///
    /// Subscribe before registering to see every event; the stream ends
    /// when the database is closed.
    public func liveQueryEvents() -> AsyncStream<LiveQueryEvent> {
        live.events.subscribe()
    }
}
