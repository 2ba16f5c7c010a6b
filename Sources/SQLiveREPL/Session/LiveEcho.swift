import SQLiveEngine
import SQLiveLocks

/// Prints live queries' changes while a long statement runs.
///
/// The session thread is busy with the statement, so the elapsed-time
/// indicator's timer prints them, once the statement has been silent for
/// a second (while the indicator shows): each change appears above the
/// indicator, which is redrawn at its next tick. Interactive sessions only,
/// and only for SQL, never for `.wait`, which prints changes itself. When
/// the statement ends, the session takes back the versions printed here.
final class LiveEcho: Sendable {
    private let diffs: [String: Bool]
    private let printer: LiveQueryPrinter
    private let events: EventQueue
    private let sink: OutputSink
    // Mutable State: guarded by the mutex; the indicator's queue prints,
    // the session thread reads the versions once the statement ended.
    private let printed: Locked<[String: Int]>

    init(watches: [String: Session.Watch], printer: LiveQueryPrinter, events: EventQueue, sink: OutputSink) {
        diffs = watches.mapValues(\.diff)
        printed = Locked(watches.mapValues(\.printedVersion))
        self.printer = printer
        self.events = events
        self.sink = sink
    }

    /// The newest version printed of each live query.
    var printedVersions: [String: Int] { printed.withLock { $0 } }

    /// Prints the changes that arrived; other events wait for the session.
    func flush() {
        let changes = events.takeLiveChanges()
        guard !changes.isEmpty else { return }
        let output = printed.withLock { printed in
            var output = ""
            for change in changes {
                guard let version = printed[change.name], change.version > version else { continue }
                output += printer.changed(change, diff: diffs[change.name] ?? false)
                printed[change.name] = change.version
            }
            return output
        }
        do {
            try sink.writeTerminal(output)
        } catch {
            // Standard output is closed: the session notices at its next write.
        }
    }
}
