/// Watches for signs that another connection or process wrote the database.
///
/// A monitor only says "look now": the `DataVersionProbe` then confirms
/// with `PRAGMA data_version` whether another connection really committed.
/// So a monitor may signal too often, never too rarely. Two kinds exist:
/// `InotifyMonitor` (Linux, prompt) and `PollingMonitor` (anywhere); tests
/// can force either.
protocol ExternalChangeMonitor: AnyObject, Sendable {
    /// Starts watching; `signal` may be called from any thread.
    func start(signal: @escaping @Sendable () -> Void) throws
    /// Stops watching; no signal comes after this returns.
    func stop()
}
