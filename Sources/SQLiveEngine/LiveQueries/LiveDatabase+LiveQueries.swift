import Foundation

extension LiveDatabase {
    /// What registering checks before it reads: SQL text, a row cap.
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

    /// How many refreshes used a result read at sqlive's own commit, on
    /// the session's connection (`LocalPrefetch`), since the file was opened.
    package var prefetchedRefreshCount: Int { live.prefetch.used }

    /// What reading other processes' commits from the WAL has cost so far.
    public func walPrecisionStatistics() -> WALPrecisionStatistics {
        live.walPrecisionStatistics
    }

    /// A stream that yields each time the schema may have changed, whoever
    /// changed it: sqlive's own statements or another process's commits.
    ///
    /// It is a live query of the engine's own, on `sqlite_schema`, so it
    /// has the live queries' guarantees (a burst of commits is coalesced,
    /// the last one is never missed) and no directory lists it. It stops
    /// when the stream is dropped or the database closed. Errors (a
    /// damaged file) yield too: the schema is worth reading again.
    public func schemaChanges() async throws(SQLiveError) -> AsyncStream<Void> {
        let watch = try await watch(
            name: "schema",
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
