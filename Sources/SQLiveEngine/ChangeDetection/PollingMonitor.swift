import Synchronization

/// Signals at a fixed interval.
///
/// The fallback where inotify is unavailable, and the slow safety poll that
/// runs beside inotify to catch anything it missed.
final class PollingMonitor: ExternalChangeMonitor {
    let interval: Duration
    // Mutable State: guarded by the mutex; started and stopped from any task.
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(interval: Duration) {
        self.interval = interval
    }

    func start(signal: @escaping @Sendable () -> Void) {
        let interval = interval
        let newTask = Task.detached {
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: interval)
                } catch {
                    return
                }
                signal()
            }
        }
        task.withLock {
            $0?.cancel(); $0 = newTask
        }
    }

    func stop() {
        task.withLock {
            $0?.cancel(); $0 = nil
        }
    }
}
