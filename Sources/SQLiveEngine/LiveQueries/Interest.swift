import GRDB
import SQLiveLocks

/// What sqlive's own commits must report: the union of every live query's region.
///
/// The one place the interest lives. The `RefreshScheduler` widens it
/// whenever a live query's region grows, and narrows it after a refresh
/// when a region may have shrunk; the `ChangeRecorder` reads it on the
/// session's connection, for each statement, to decide which row events
/// to observe.
///
/// It may be larger than needed (after a query left or a region shrank),
/// never smaller: growing is published at once, shrinking after the next
/// refresh (`isStale`), because recomputing the union costs one union per
/// evaluation.
final class Interest: Sendable {
    // Mutable State: guarded by the mutex; written by the scheduler actor,
    // read on GRDB's writer queue.
    private struct State {
        var region = DatabaseRegion()
        var isStale = false
        var queryCount = 0
    }
    private let state = Locked(State())

    var region: DatabaseRegion { state.withLock { $0.region } }

    /// How many live queries exist or are being registered: the session's
    /// connection observes its commits only when there is one.
    var queryCount: Int {
        get { state.withLock { $0.queryCount } }
        set { state.withLock { $0.queryCount = newValue } }
    }

    /// Whether a kind of row event can modify a live query's result.
    func isModified(byEventsOfKind kind: DatabaseEventKind) -> Bool {
        state.withLock { $0.region.isModified(byEventsOfKind: kind) }
    }

    /// Adds a region, at once.
    func widen(with region: DatabaseRegion) {
        state.withLock { state in
            let widened = state.region.union(region)
            if widened != state.region { state.region = widened }
        }
    }

    /// Notes that a region shrank or a query left: the union may be larger than needed.
    func markStale() {
        state.withLock { $0.isStale = true }
    }

    /// Recomputes the union, if it may be larger than needed.
    func narrowIfStale(_ union: () -> DatabaseRegion) {
        guard state.withLock({ $0.isStale }) else { return }
        let region = union()
        state.withLock { state in
            state.region = region
            state.isStale = false
        }
    }
}
