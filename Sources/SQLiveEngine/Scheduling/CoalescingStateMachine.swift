/// What is known of a pending key's changes.
struct PendingChange: Equatable, Sendable {
    /// How many change notifications the key received.
    var events: Int
    /// The cause of the latest one.
    var cause: ChangeCause
    /// The tables the notifications wrote, lowercased; `nil` when any of them is unknown.
    var tables: Set<String>? = nil

    /// Adds the tables of another notification.
    mutating func merge(tables other: Set<String>?) {
        if let other, let current = tables {
            tables = current.union(other)
        } else {
            tables = nil
        }
    }
}

/// The decisions of the refresh scheduler, as a pure value.
///
/// It receives three inputs — changes, the end of a refresh, a timer — and
/// answers with what to do next. It holds no clock and starts no task: the
/// `RefreshScheduler` actor wraps it, and tests drive it with any instants.
///
/// The cycle is Mark → Refresh → Cool down:
///
/// - **Leading edge.** The first change after a quiet spell starts a
///   refresh at once.
/// - **Coalescing.** While a refresh runs, and for `window` after it ends,
///   changes only mark keys pending. When the window ends, one refresh
///   handles every pending key.
/// - **No starvation.** The window is counted from the end of a refresh,
///   not from the latest change, so a steady stream of changes cannot
///   postpone a refresh forever.
/// - **No stale final state.** A change is always followed by a refresh
///   that starts after it: a change that arrives during a refresh stays
///   pending for the next one.
struct CoalescingStateMachine<Key: Hashable & Sendable, Instant: InstantProtocol>: Sendable {
    typealias Pending = PendingChange

    enum Phase: Equatable, Sendable {
        /// No refresh runs and none is due.
        case idle
        /// A refresh runs.
        case refreshing
        /// A refresh ended; pending keys wait until the instant.
        case coolingDown(until: Instant)
    }

    enum Action: Equatable, Sendable {
        /// Nothing to do now.
        case none
        /// Refresh these keys now, then call `refreshDidFinish(at:)`.
        case refresh([Key: Pending])
        /// Call `timerDidFire(at:)` at this instant.
        case wake(at: Instant)
    }

    /// The cool-down after each refresh.
    var window: Instant.Duration

    // Mutable State
    //
    // `pending` only holds keys whose refresh has not started yet: a key
    // being refreshed right now and changed again is pending once more.
    private(set) var phase: Phase = .idle
    private(set) var pending: [Key: Pending] = [:]

    init(window: Instant.Duration) {
        self.window = window
    }

    /// Keys changed (`events` times, for changes counted elsewhere).
    ///
    /// - parameter keepsPendingCause: the cause is a presumption (a commit
    ///   the session was too busy to claim): a key already pending keeps
    ///   the cause it has.
    mutating func keysDidChange(
        _ keys: some Sequence<Key>, cause: ChangeCause, keepsPendingCause: Bool = false, events: Int = 1,
        tables: Set<String>? = nil, at now: Instant
    ) -> Action {
        keysDidChange(
            keys.map { ($0, events) }, cause: cause, keepsPendingCause: keepsPendingCause, tables: tables, at: now)
    }

    /// The same, with each key's count of notifications (0: marked, but
    /// not one more notification: one already counted the same change).
    mutating func keysDidChange(
        _ counted: [(Key, Int)], cause: ChangeCause, keepsPendingCause: Bool = false, tables: Set<String>? = nil,
        at now: Instant
    ) -> Action {
        var any = false
        for (key, events) in counted {
            any = true
            if pending[key] == nil {
                pending[key] = Pending(events: events, cause: cause, tables: tables)
            } else {
                pending[key]!.events += events
                if !keepsPendingCause { pending[key]!.cause = cause }
                pending[key]!.merge(tables: tables)
            }
        }
        guard any else { return .none }
        switch phase {
        case .idle:
            return startRefresh()
        case .coolingDown(let until) where now >= until:
            return startRefresh()
        case .coolingDown, .refreshing:
            return .none
        }
    }

    /// The refresh started by the last `.refresh` action ended.
    mutating func refreshDidFinish(at now: Instant) -> Action {
        let until = now.advanced(by: window)
        phase = .coolingDown(until: until)
        return .wake(at: until)
    }

    /// The timer asked for by a `.wake` action fired.
    mutating func timerDidFire(at now: Instant) -> Action {
        guard case .coolingDown(let until) = phase, now >= until else { return .none }
        if pending.isEmpty {
            phase = .idle
            return .none
        }
        return startRefresh()
    }

    /// Forgets a key that is no longer observed.
    mutating func forget(_ key: Key) {
        pending[key] = nil
    }

    private mutating func startRefresh() -> Action {
        let batch = pending
        pending = [:]
        phase = .refreshing
        return .refresh(batch)
    }
}
