/// How many MCP sessions one `--mcp --http` server keeps, and for how
/// long: its decisions, as a pure value over instants the caller gives
/// (the endpoint's clock; tests' own), like `OutputBatching`.
///
/// - **Bounded.** At most `maximumSessions` handshake sessions exist at
///   once; an `initialize` beyond them is refused (503) with a
///   `Retry-After`: when the first idle session expires, or
///   `busyRetryAfter` when none is idle.
/// - **Expiry.** A session that has had no request, no stream open and no
///   request waiting for `idleLimit` is ended; its requests are then
///   answered as for an unknown session (404, as MCP's transport asks).
public struct MCPSessionPolicy: Hashable, Sendable {
    /// The most handshake-era sessions at once (`--max-sessions`).
    public var maximumSessions: Int
    /// How long a session may idle before it is ended (`--session-idle`).
    public var idleLimit: Duration
    /// The `Retry-After` when every session is busy (none will expire).
    public var busyRetryAfter: Duration

    public static let defaultMaximumSessions = 256
    public static let defaultIdleLimit = Duration.seconds(600)

    public init(
        maximumSessions: Int = Self.defaultMaximumSessions, idleLimit: Duration = Self.defaultIdleLimit,
        busyRetryAfter: Duration = .seconds(5)
    ) {
        self.maximumSessions = maximumSessions
        self.idleLimit = idleLimit
        self.busyRetryAfter = busyRetryAfter
    }

    /// What a session's books say of it.
    public struct Activity<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
        /// Its last request, or the end of its last stream.
        public var lastActive: Instant
        /// Whether a stream is open or a request waits: it never expires then.
        public var busy: Bool

        public init(lastActive: Instant, busy: Bool) {
            self.lastActive = lastActive
            self.busy = busy
        }
    }

    /// Whether a session has expired at `now`.
    public func isExpired<Instant>(_ activity: Activity<Instant>, at now: Instant) -> Bool {
        !activity.busy && activity.lastActive.duration(to: now) >= idleLimit
    }

    public enum Admission: Hashable, Sendable {
        case admit
        /// Refused: try again after this many whole seconds (at least 1).
        case refuse(retryAfterSeconds: Int)
    }

    /// Whether a new session may be made, given the live sessions' activity
    /// (the expired ones already ended).
    public func admission<Instant>(_ sessions: [Activity<Instant>], at now: Instant) -> Admission {
        guard sessions.count >= maximumSessions else { return .admit }
        let firstExpiry = sessions.filter { !$0.busy }
            .map { now.duration(to: $0.lastActive.advanced(by: idleLimit)) }.min()
        return .refuse(retryAfterSeconds: Self.wholeSeconds(firstExpiry ?? busyRetryAfter))
    }

    /// How often the endpoint looks for expired sessions: a tenth of the
    /// idle limit, between a quarter of a second and 30 seconds (requests
    /// and `initialize`s look too, so expiry is never later for them).
    public var sweepInterval: Duration {
        min(max(idleLimit / 10, .milliseconds(250)), .seconds(30))
    }

    /// A duration as `Retry-After` seconds: rounded up, at least 1.
    static func wholeSeconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return max(1, Int(seconds) + (attoseconds > 0 ? 1 : 0))
    }
}
