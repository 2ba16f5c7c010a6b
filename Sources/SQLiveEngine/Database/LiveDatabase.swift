import Foundation
import GRDB

/// An open SQLite database, with its live queries.
///
/// `LiveDatabase` is the engine's front door: it runs SQL, describes the
/// schema, explains queries, traces statements, and keeps live queries up
/// to date whoever writes the file.
///
/// A WAL database is read through a `DatabasePool`, so that reads never
/// wait for a writer; any other database through a `DatabaseQueue`, and
/// its journal mode is left as it is.
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
    /// The facts reported when the database was opened.
    public let info: DatabaseInfo
    /// The session's connection, where user statements run: GRDB's writer,
    /// a `DatabasePool` for WAL databases, a `DatabaseQueue` otherwise.
    package let writer: any DatabaseWriter
    let tracer: StatementTracer
    /// The live-query machinery: registry, change monitors, scheduler.
    let live: LiveQueryCenter

    init(
        location: DatabaseLocation, info: DatabaseInfo, writer: any DatabaseWriter, configuration: Configuration,
        tracer: StatementTracer, options: Options
    ) throws {
        self.location = location
        self.info = info
        self.writer = writer
        self.tracer = tracer
        self.live = try LiveQueryCenter(
            session: writer, location: location, configuration: configuration, tracer: tracer,
            options: options.liveQueries)
    }

    /// Interrupts every statement the session is running.
    ///
    /// A statement interrupted this way fails with "interrupted"; the
    /// database stays usable. Live queries are read on a connection of
    /// their own and go on.
    public func interrupt() {
        writer.interrupt()
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

    /// Stops observing, drops every live query, and closes the connections.
    public func close() async {
        await live.shutdown()
        tracer.finish()
        do {
            if let pool = writer as? DatabasePool {
                try pool.close()
            } else if let queue = writer as? DatabaseQueue {
                try queue.close()
            }
        } catch {
            // A connection still in use by a statement closes when it ends.
            Log.engine.warning("closing \(location): \(error)")
        }
    }
}
