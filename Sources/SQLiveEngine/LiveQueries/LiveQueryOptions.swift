/// How live queries are scheduled and how other writers are detected.
public struct LiveQueryOptions: Sendable {
    /// How changes made by other connections and processes are noticed.
    public enum ExternalDetection: Sendable, Equatable {
        /// inotify on the database's directory, falling back to polling
        /// when inotify is unavailable or runs out of watches.
        case automatic
        /// Poll `PRAGMA data_version` at this interval.
        case polling(Duration)
        /// Do not look for other writers (sqlive's own writes are still seen).
        case disabled
    }

    /// After a refresh, further changes wait this long and are then handled
    /// by one refresh.
    public var coalescingWindow: Duration
    /// The most rows a live query delivers; a longer result is truncated
    /// and says so.
    public var rowCap: Int
    public var externalDetection: ExternalDetection
    /// The interval of the polling fallback.
    public var pollingInterval: Duration
    /// A slow poll that runs even with inotify, to catch anything missed.
    public var safetyPollInterval: Duration

    public init(
        coalescingWindow: Duration = .milliseconds(15),
        rowCap: Int = 10_000,
        externalDetection: ExternalDetection = .automatic,
        pollingInterval: Duration = .milliseconds(100),
        safetyPollInterval: Duration = .seconds(2)
    ) {
        self.coalescingWindow = coalescingWindow
        self.rowCap = rowCap
        self.externalDetection = externalDetection
        self.pollingInterval = pollingInterval
        self.safetyPollInterval = safetyPollInterval
    }
}
