import GRDB
import SQLiveLocks

/// What sqlive's own commits must report: every live query's region,
/// indexed by table.
///
/// The one place the interest lives. The `RefreshScheduler` sets an
/// evaluation's region whenever it is read (and removes it when the
/// evaluation goes); the `ChangeRecorder` reads it on the session's
/// connection, for each statement, to decide which row events to observe.
/// It is exact at all times, and asking it costs what the regions that
/// read the statement's table cost (`RegionIndex`), whatever the number of
/// live queries.
final class Interest: Sendable {
    // Mutable State: guarded by the mutex; written by the scheduler actor,
    // read on GRDB's writer queue.
    private struct State {
        var index = RegionIndex<LiveQueryDefinition>()
        var queryCount = 0
    }
    private let state = Locked(State())

    /// How many live queries exist or are being registered: the session's
    /// connection observes its commits only when there is one.
    var queryCount: Int {
        get { state.withLock { $0.queryCount } }
        set { state.withLock { $0.queryCount = newValue } }
    }

    /// Whether a kind of row event can modify a live query's result.
    func isModified(byEventsOfKind kind: DatabaseEventKind) -> Bool {
        state.withLock { $0.index.isModified(byEventsOfKind: kind) }
    }

    /// The evaluations whose regions events of these kinds can modify.
    func definitions(modifiedBy kinds: [DatabaseEventKind]) -> Set<LiveQueryDefinition> {
        state.withLock { state in Set(kinds.flatMap { state.index.keys(modifiedBy: $0) }) }
    }

    /// Sets what an evaluation reads.
    func set(_ definition: LiveQueryDefinition, region: DatabaseRegion, tables: [String]) {
        state.withLock { $0.index.set(definition, region: region, tables: tables) }
    }

    /// An evaluation is gone.
    func remove(_ definition: LiveQueryDefinition) {
        state.withLock { $0.index.remove(definition) }
    }

    func removeAll() {
        state.withLock { $0.index.removeAll() }
    }
}
