/// The request queue's ordering rule, as a table: where each kind of
/// request runs, and which earlier requests it waits for. `RequestQueue`
/// only keeps the books this table asks for; the rule is tested here
/// (`RequestQueueTests.orderingRuleTable`), apart from the threads.
enum OrderingRule {
    /// Where a request runs.
    enum Place: Equatable {
        /// The queue's serial lane, one after the other in arrival order.
        case lane
        /// A task of its own, beside the lane.
        case task
        /// A thread of its own, beside the lane and every task.
        case thread
    }

    static func place(of kind: Scheduling) -> Place {
        switch kind {
        case .serial, .liveQueryChange, .barrier: .lane
        case .concurrent: .task
        case .independent: .thread
        }
    }

    /// The kinds of earlier requests a request waits for, beyond the lane's
    /// own order (a lane request also waits for every lane request before
    /// it): a `liveQuery/list` sees the live queries registered before it,
    /// a `shutdown` runs after every request before it has ended, an
    /// agent's statement waits for `initialize` only.
    static func waitsFor(_ kind: Scheduling) -> Set<Scheduling> {
        switch kind {
        case .serial, .liveQueryChange: []
        case .concurrent: [.liveQueryChange, .barrier]
        case .barrier: [.concurrent, .independent]
        case .independent: [.barrier]
        }
    }

    /// The lane kinds whose last sequence a request of `kind` waits for
    /// (the books `RequestQueue` keeps for it).
    static func laneKindsWaitedFor(by kind: Scheduling) -> Set<Scheduling> {
        waitsFor(kind).filter { place(of: $0) == .lane }
    }

    /// Whether a request of `kind` waits for the requests off the lane
    /// that started before it.
    static func waitsForWorkOffTheLane(_ kind: Scheduling) -> Bool {
        waitsFor(kind).contains { place(of: $0) != .lane }
    }
}
