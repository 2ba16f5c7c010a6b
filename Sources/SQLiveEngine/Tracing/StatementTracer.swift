import Foundation
import GRDB
import GRDBSQLite
import SQLiveLocks

/// Delivers traced statements to subscribers.
///
/// sqlive's own execution paths report the statements they run with their
/// time and row count (`record(_:)`); GRDB's trace, installed on every
/// connection, reports the housekeeping statements sqlive does not run
/// itself. Subscribers receive events through `events()`.
final class StatementTracer: Sendable {
    // Mutable State
    //
    // Guarded by the mutex: settings and subscribers are read on every
    // database thread (each traced statement) and written by front ends.
    //
    // `sessionTraced` tells whether GRDB's trace is on the session
    // connection (every connection gets it when it opens); it is only
    // changed on that connection's queue, by `matchSessionTrace(on:)`.
    private struct State {
        var settings = TraceSettings.off
        var subscribers: [UUID: AsyncStream<TraceEvent>.Continuation] = [:]
        var sessionTraced = true
        /// SQLite's own trace on the session connection (the sqlite3
        /// shell's `.trace FILE`), which replaces GRDB's there.
        var shellTrace: ShellTrace?
    }
    private let state = Locked(State())
    /// Where every event also goes, in the same call (the database's one
    /// ordered stream of live and trace events).
    private let relay: (@Sendable (TraceEvent) -> Void)?

    init(relay: (@Sendable (TraceEvent) -> Void)? = nil) {
        self.relay = relay
    }

    var settings: TraceSettings {
        get { state.withLock { $0.settings } }
        set { state.withLock { $0.settings = newValue } }
    }

    /// Whether user and live-query statements should be reported.
    var isEnabled: Bool { state.withLock { $0.settings.enabled } }

    /// A stream of traced statements, until the tracer is finished.
    func events() -> AsyncStream<TraceEvent> {
        let (stream, continuation) = AsyncStream<TraceEvent>.makeStream(bufferingPolicy: .bufferingNewest(10_000))
        let id = UUID()
        state.withLock { $0.subscribers[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Reports a statement run by sqlive itself.
    ///
    /// Without profiling, the time, rows and counters are dropped.
    func record(
        sql: String, elapsed: Duration, rows: Int, counters: StatementCounters? = nil, origin: TraceEvent.Origin
    ) {
        // Nothing copied when nobody listens: every live-query read passes here.
        let listening = state.withLock { state in
            state.settings.enabled && (!state.subscribers.isEmpty || relay != nil)
                ? (state.settings, Array(state.subscribers.values)) : nil
        }
        guard let (settings, subscribers) = listening else { return }
        let event =
            settings.profile
            ? TraceEvent(sql: sql, elapsed: elapsed, rows: rows, counters: counters, origin: origin)
            : TraceEvent(sql: sql, origin: origin)
        relay?(event)
        for subscriber in subscribers { subscriber.yield(event) }
    }

    /// Installs GRDB's trace on a connection, for housekeeping statements.
    ///
    /// Statements sqlive runs itself are reported by `record`; this trace
    /// only passes on the statements it did not run (GRDB's `BEGIN`,
    /// `COMMIT`, `PRAGMA query_only`...), and only when housekeeping is on.
    func install(on db: Database) {
        db.trace(options: .profile) { [weak self] event in
            guard let self, case .profile(let statement, let duration) = event else { return }
            let settings = self.settings
            guard settings.enabled, settings.includeHousekeeping else { return }
            let sql = statement.sql
            guard Self.isHousekeeping(sql) else { return }
            self.record(
                sql: sql, elapsed: .nanoseconds(Int64(duration * 1e9)), rows: 0, origin: .housekeeping)
        }
    }

    /// Puts GRDB's trace on the session connection, or takes it off, as the
    /// settings ask; call it on that connection's queue, before running
    /// statements there.
    ///
    /// The trace only reports housekeeping statements, so it stays off
    /// while nobody traces them: SQLite would time every statement it
    /// reports to a profile trace, and call it, for nothing (a bulk insert
    /// of a million rows a million times). It is switched only when the
    /// settings change, not for every script.
    func matchSessionTrace(on db: Database) {
        let switchTo = state.withLock { state -> Bool? in
            guard state.shellTrace == nil else { return nil }
            let wanted = state.settings.enabled && state.settings.includeHousekeeping
            guard wanted != state.sessionTraced else { return nil }
            state.sessionTraced = wanted
            return wanted
        }
        switch switchTo {
        case true?: install(on: db)
        case false?: db.trace(options: [], nil)
        case nil: break
        }
    }

    /// Puts SQLite's own trace on the session connection, or takes it off
    /// and gives GRDB's back as the settings ask; on that connection's queue.
    func setShellTrace(_ trace: ShellTrace?, on db: Database) {
        guard let connection = db.sqliteConnection else { return }
        state.withLock { state in
            state.shellTrace = trace
            // Either way, GRDB's trace is no longer on the connection.
            state.sessionTraced = false
        }
        if let trace {
            trace.install(on: connection)
        } else {
            sqlite3_trace_v2(connection, 0, nil, nil)
            matchSessionTrace(on: db)
        }
    }

    /// Whether a statement is bookkeeping rather than a user's query.
    ///
    /// GRDB's trace sees every statement of a connection; the ones sqlive
    /// runs for users and live queries are already reported by `record`,
    /// so only transaction control and pragmas pass here. (A `BEGIN` or
    /// `PRAGMA` the user types is thus reported twice when housekeeping is
    /// on: once as theirs, once as housekeeping.)
    static func isHousekeeping(_ sql: String) -> Bool {
        let head = sql.prefix(32).uppercased()
        return ["BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE", "PRAGMA"].contains {
            head.hasPrefix($0)
        }
    }

    /// Ends every subscriber's stream.
    func finish() {
        let subscribers = state.withLock { state in
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}
