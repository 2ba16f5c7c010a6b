import SQLiveEngine

/// Shows live queries' changes while a long statement runs.
///
/// The session thread is busy with the statement, so the elapsed-time
/// indicator's timer shows them, once the statement has been silent for
/// a second (while the indicator shows): in the live panel, redrawn in
/// place, or else each change above the indicator, which is redrawn at its
/// next tick. Interactive sessions only, and only for SQL, never for
/// `.wait`, which prints changes itself. What it shows counts as printed
/// in the session's `WatchTable`, the one both go through.
final class LiveEcho: Sendable {
    private let settings: RenderSettings
    private let events: EventQueue
    private let sink: OutputSink
    private let panel: LivePanel

    init(settings: RenderSettings, events: EventQueue, sink: OutputSink, panel: LivePanel) {
        self.settings = settings
        self.events = events
        self.sink = sink
        self.panel = panel
    }

    /// Shows the changes that arrived; other events wait for the session.
    func flush() {
        let changes = events.takeLiveChanges()
        guard !changes.isEmpty else { return }
        let printer = LiveQueryPrinter(settings: settings)
        let toPanel = panel.isDisplayable
        var output = ""
        for change in changes where panel.watches.take(change, shown: !toPanel) {
            if !toPanel { output += printer.changed(change) }
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
