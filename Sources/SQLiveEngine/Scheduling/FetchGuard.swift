import GRDB
import GRDBSQLite
import SQLiveLocks

/// Stops one live query's fetch, and only that one: when nobody wants it
/// any more, when it has run past the refresh's time budget, or — on the
/// connection the live queries share — when it has run long enough to
/// hold the others back.
///
/// SQLite asks the guard every `CancellationWatch.instructions`
/// virtual-machine instructions through the connection's progress handler,
/// which is installed for this fetch's statement and removed as soon as it
/// ends: a stop never reaches the next query's statement on the same
/// connection (unlike `sqlite3_interrupt`, which stops whatever runs). A
/// stopped fetch throws `Stopped`, and the scheduler decides what follows
/// (`RefreshScheduler.settle`).
///
/// ```swift
/// let fetchGuard = FetchGuard(FetchGuard.Limits(budget: .seconds(5), ownLaneAfter: .milliseconds(100)))
/// let fetched = try fetchGuard.watching(db) { try LiveQueryFetcher.fetch(...) }
/// // elsewhere, at once: fetchGuard.cancel()
/// ```
final class FetchGuard: Sendable {
    /// Why a fetch was stopped.
    enum Stop: Sendable, Equatable {
        /// Nobody wants its result any more: unregistered, paused,
        /// replaced, or the database is closing.
        case unwanted
        /// It ran past `Limits.ownLaneAfter` on the shared connection: it
        /// continues on a connection of its own.
        case ownLane
        /// It ran past `Limits.budget`: too slow to keep live.
        case tooSlow
    }

    /// The error a stopped fetch throws.
    struct Stopped: Error, Sendable {
        var stop: Stop
    }

    /// How long a fetch may run, and where: the pure decision, over an
    /// elapsed time.
    struct Limits: Sendable, Equatable {
        /// The most one fetch may run (`nil`: as long as it takes).
        var budget: Duration?
        /// How long it may hold the shared connection before it moves to
        /// a connection of its own (`nil`: it stays where it is).
        var ownLaneAfter: Duration?

        /// Whether, and why, a fetch that has run this long must stop.
        func stop(unwanted: Bool, elapsed: Duration) -> Stop? {
            if unwanted { return .unwanted }
            if let budget, elapsed >= budget { return .tooSlow }
            if let ownLaneAfter, elapsed >= ownLaneAfter { return .ownLane }
            return nil
        }
    }

    let limits: Limits

    // Mutable State: guarded by the mutex. `unwanted` is set by the
    // scheduler (any thread); `startedAt` by the first `watching` call on
    // the connection's thread (a read a writer overtook runs again, and
    // its time goes on counting).
    private struct State {
        var unwanted = false
        var startedAt: ContinuousClock.Instant?
    }
    private let state = Locked(State())

    init(_ limits: Limits) {
        self.limits = limits
    }

    /// Stops the fetch at its next question (or before it starts).
    func cancel() {
        state.withLock { $0.unwanted = true }
    }

    var isCancelled: Bool {
        state.withLock { $0.unwanted }
    }

    /// Why the fetch must stop now, if it must.
    func currentStop() -> Stop? {
        let (unwanted, startedAt) = state.withLock { ($0.unwanted, $0.startedAt) }
        let elapsed = startedAt.map { ContinuousClock.now - $0 } ?? .zero
        return limits.stop(unwanted: unwanted, elapsed: elapsed)
    }

    /// Runs `body` on the connection with the progress handler asking this
    /// guard, and removes the handler after.
    ///
    /// - throws: `Stopped` when the guard stopped it (or had before it
    ///   began); otherwise what `body` throws.
    func watching<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        state.withLock { state in
            if state.startedAt == nil { state.startedAt = .now }
        }
        if let stop = currentStop() { throw Stopped(stop: stop) }
        guard let connection = db.sqliteConnection else { return try body() }
        sqlite3_progress_handler(
            connection, CancellationWatch.instructions,
            { context in
                guard let context else { return 0 }
                let fetchGuard = Unmanaged<FetchGuard>.fromOpaque(context).takeUnretainedValue()
                return fetchGuard.currentStop() == nil ? 0 : 1
            }, Unmanaged.passUnretained(self).toOpaque())
        defer { sqlite3_progress_handler(connection, 0, nil, nil) }
        do {
            return try body()
        } catch {
            // SQLite's interrupt, when this guard asked for it.
            if Self.isInterrupt(error), let stop = currentStop() { throw Stopped(stop: stop) }
            throw error
        }
    }

    private static func isInterrupt(_ error: any Error) -> Bool {
        if let error = error as? DatabaseError { return error.resultCode == .SQLITE_INTERRUPT }
        if let error = error as? SQLiveError { return error.sqliteFailure?.isInterrupted ?? false }
        return false
    }
}
