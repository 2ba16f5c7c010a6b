import SQLiveLocks

/// A flag that can be claimed once, from any thread.
final class Once: Sendable {
    private let claimed = Locked(false)

    /// Whether this call is the first.
    func claim() -> Bool {
        claimed.withLock { claimed in
            defer { claimed = true }
            return !claimed
        }
    }
}
