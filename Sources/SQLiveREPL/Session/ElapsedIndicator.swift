import Foundation

/// Shows how long a command has been running, on standard error, once it
/// has run for a second; interactive sessions only.
///
/// ```text
/// ⏱ 3.4 s (Ctrl-C interrupts)
/// ```
final class ElapsedIndicator {
    private let sink: OutputSink
    private let timer: any DispatchSourceTimer
    private let startInstant = ContinuousClock.now

    init(sink: OutputSink) {
        self.sink = sink
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "sqlive.indicator"))
    }

    func start() {
        timer.schedule(deadline: .now() + .seconds(1), repeating: .milliseconds(200), leeway: .milliseconds(50))
        timer.setEventHandler { [sink, startInstant] in
            let seconds = (ContinuousClock.now - startInstant).milliseconds / 1000
            sink.showIndicator(String(format: "⏱ %.1f s (Ctrl-C interrupts)", seconds))
        }
        timer.resume()
    }

    func stop() {
        timer.cancel()
        sink.clearIndicator()
    }
}
