import Foundation

/// Shows how long a command has been running, on standard error, once it
/// has run for a second; interactive sessions only.
///
/// ```text
/// ⏱ 3.4 s (Ctrl-C interrupts)
/// ```
final class ElapsedIndicator {
    private let sink: OutputSink
    private let queue = DispatchQueue(label: "sqlive.indicator")
    private let timer: any DispatchSourceTimer
    private let startInstant = ContinuousClock.now
    private let onTick: (@Sendable () -> Void)?

    /// - parameter onTick: called on the timer's queue at each tick while
    ///   the indicator shows (to print live changes above it).
    init(sink: OutputSink, onTick: (@Sendable () -> Void)? = nil) {
        self.sink = sink
        self.onTick = onTick
        timer = DispatchSource.makeTimerSource(queue: queue)
    }

    func start() {
        timer.schedule(deadline: .now() + .seconds(1), repeating: .milliseconds(200), leeway: .milliseconds(50))
        timer.setEventHandler { [sink, startInstant, onTick] in
            // An editor of `edit()` has the terminal.
            guard ShellFileFunctions.editorsRunning.load(ordering: .sequentiallyConsistent) == 0 else { return }
            if let onTick, sink.isIndicatorShown { onTick() }
            let seconds = (ContinuousClock.now - startInstant).milliseconds / 1000
            sink.showIndicator(String(format: "⏱ %.1f s (Ctrl-C interrupts)", seconds))
        }
        timer.resume()
    }

    func stop() {
        timer.cancel()
        // Wait for a tick in progress: nothing is printed after this returns.
        queue.sync {}
        sink.clearIndicator()
    }
}
