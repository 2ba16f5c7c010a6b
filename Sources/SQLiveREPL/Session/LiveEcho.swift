import SQLiveEngine
import SQLiveLocks

/// Shows live queries' changes while a long statement runs.
///
/// The session thread is busy with the statement, so the elapsed-time
/// indicator's timer shows them, once the statement has been silent for
/// a second (while the indicator shows): in the live panel, redrawn in
/// place, or else each change above the indicator, which is redrawn at its
/// next tick. Interactive sessions only, and only for SQL, never for
/// `.wait`, which prints changes itself. When the statement ends, the
/// session takes back the versions shown here.
final class LiveEcho: Sendable {
    private let settings: RenderSettings
    private let events: EventQueue
    private let sink: OutputSink
    private let panel: LivePanel
    // Mutable State: guarded by the mutex; the indicator's queue prints,
    // the session thread reads the versions once the statement ended.
    private let printed: Locked<[String: Int]>

    init(
        printedVersions: [String: Int], settings: RenderSettings, events: EventQueue, sink: OutputSink,
        panel: LivePanel
    ) {
        printed = Locked(printedVersions)
        self.settings = settings
        self.events = events
        self.sink = sink
        self.panel = panel
    }

    /// The newest version shown of each live query.
    var printedVersions: [String: Int] { printed.withLock { $0 } }

    /// Shows the changes that arrived; other events wait for the session.
    func flush() {
        let changes = events.takeLiveChanges()
        guard !changes.isEmpty else { return }
        let printer = LiveQueryPrinter(settings: settings)
        let toPanel = panel.isDisplayable
        var output = printed.withLock { printed in
            var output = ""
            for change in changes {
                guard let version = printed[change.name], change.version > version else { continue }
                panel.apply(change, shown: !toPanel)
                if !toPanel { output += printer.changed(change) }
                printed[change.name] = change.version
            }
            return output
        }
        let left = panel.sync(settings: settings)
        if !left.isEmpty { output += Session.printed(left, printer: printer) }
        do {
            try sink.writeTerminal(output)
        } catch {
            // Standard output is closed: the session notices at its next write.
        }
    }
}
