import Foundation
import SQLiveEngine
import SQLiveLocks

/// The live panel of an interactive session: the latest result of each
/// live query, pinned at the top of the terminal and redrawn in place.
///
/// The session's `WatchTable` keeps every live query's latest state
/// (`PanelEntry`) whether or not it is shown; the panel keeps the screen,
/// and `sync` makes the screen match the table: it shows the
/// panel, makes it taller or shorter, redraws the rows that changed, takes
/// it away, or starts it over after a resize (`PanelScreen` has the escape
/// sequences, `PanelLayout` the lines). It is shown when it is on (`.panel
/// on`, the default), the terminal can hold it (`Terminal.supportsPanel`:
/// not `TERM=dumb`) and is large enough (`PanelLayout.fits`), and there is
/// at least one live query; otherwise changes are re-printed above the
/// prompt, as without a panel.
///
/// The panel's height only grows while its queries and the terminal stay
/// the same, so the lines under it do not jump up and down with each
/// refresh; it is fitted again when a query comes or goes, the terminal is
/// resized, or the panel is turned on.
final class LivePanel: Sendable {
    /// Whether the session's terminal can hold a panel at all.
    let capable: Bool
    /// The session's live queries, and what the panel shows of each.
    let watches: WatchTable
    /// Writes to the terminal (the session's sink, so that a draw never
    /// splits other output).
    private let output: @Sendable (String) -> Void
    private let terminalSize: @Sendable () -> Terminal.Size?

    /// What is on the screen.
    private struct Shown {
        var height: Int
        var size: Terminal.Size
        /// The text of rows `1...height`.
        var lines: [String]
        /// The queries drawn, in order: when they change, the height is fitted again.
        var names: [String]
    }

    // Mutable State: guarded by the mutex. The session thread changes the
    // entries and syncs; while a long statement runs, the elapsed-time
    // indicator's queue (`LiveEcho`) applies changes and syncs too. The
    // screen is written under the lock, so two draws never interleave.
    private struct State {
        /// `.panel on` / `.panel off`.
        var enabled = true
        /// False once the session gave the terminal back (at exit).
        var attached = true
        var shown: Shown?
        /// Whether the panel keeps its height (see the type's notes).
        var keepsHeight = false
        /// The settings of the last sync, for Ctrl-L.
        var settings: RenderSettings?
    }
    private let state = Locked(State())

    /// - parameter output: writes escape sequences and text to the terminal.
    /// - parameter terminalSize: the terminal's size now (tests give their own).
    init(
        capable: Bool, watches: WatchTable, output: @escaping @Sendable (String) -> Void,
        terminalSize: @escaping @Sendable () -> Terminal.Size? = { Terminal.size() }
    ) {
        self.capable = capable
        self.watches = watches
        self.output = output
        self.terminalSize = terminalSize
    }

    /// A panel that draws through a session's sink.
    convenience init(capable: Bool, watches: WatchTable, sink: OutputSink) {
        self.init(capable: capable, watches: watches) { text in
            do {
                try sink.writeTerminal(text)
            } catch {
                // Standard output is closed: the session notices at its next write.
            }
        }
    }

    // MARK: - Settings

    /// `.panel on` / `.panel off`.
    func setEnabled(_ enabled: Bool) {
        state.withLock { state in
            state.enabled = enabled
            state.keepsHeight = false
        }
    }

    var isEnabled: Bool { state.withLock { $0.enabled } }

    /// The session gives the terminal back: the next sync takes the panel away for good.
    func release() {
        state.withLock { $0.attached = false }
    }

    // MARK: - The screen

    /// Whether live queries' changes go to the panel now (rather than above the prompt).
    var isDisplayable: Bool {
        let size = terminalSize()
        return state.withLock { displayable($0, size: size) }
    }

    /// Whether the panel is on the screen.
    var isShown: Bool { state.withLock { $0.shown != nil } }

    /// Whether the next sync moves the rows under the panel (shows, hides,
    /// resizes or starts over): then readline's line must be cleared first.
    func needsLayoutChange(settings: RenderSettings) -> Bool {
        let size = terminalSize()
        let entries = watches.panelEntries
        return state.withLock { state in
            let target = target(state, entries: entries, settings: settings, size: size)
            switch (state.shown, target) {
            case (nil, nil): return false
            case (let shown?, let target?): return shown.size != size || shown.height != target.count
            default: return true
            }
        }
    }

    /// The size readline must use: the rows under the panel, or the whole terminal.
    var readlineSize: Terminal.Size? {
        guard let size = terminalSize() else { return nil }
        return state.withLock { state in
            guard let shown = state.shown, shown.size == size else { return size }
            return Terminal.Size(rows: size.rows - shown.height, columns: size.columns)
        }
    }

    /// Makes the screen match the entries: draws what changed.
    ///
    /// - returns: the entries to print above the prompt, when the panel was
    ///   just taken away while live queries remain (`.panel off`, a
    ///   terminal too small): their latest state, shown once.
    @discardableResult
    func sync(settings: RenderSettings) -> [PanelEntry] {
        let size = terminalSize()
        let entries = watches.panelEntries
        let (drawn, left) = state.withLock { state -> (drawn: [PanelEntry], left: [PanelEntry]) in
            state.settings = settings
            let target = target(state, entries: entries, settings: settings, size: size)
            var output = ""
            var previousLines: [String] = []
            switch (state.shown, target) {
            case (nil, nil):
                return ([], [])
            case (nil, let target?):
                output = PanelScreen.show(height: target.count, rows: size!.rows)
            case (let shown?, nil):
                if let size, size != shown.size {
                    output = PanelScreen.restart(height: 0, rows: size.rows)
                } else {
                    output = PanelScreen.hide(height: shown.height)
                }
                state.shown = nil
                write(output)
                return state.attached ? (entries, entries) : ([], [])
            case (let shown?, let target?):
                if size != shown.size {
                    output = PanelScreen.restart(height: target.count, rows: size!.rows)
                } else if target.count > shown.height {
                    output = PanelScreen.grow(from: shown.height, to: target.count, rows: shown.size.rows)
                    previousLines = shown.lines
                } else if target.count < shown.height {
                    output = PanelScreen.shrink(from: shown.height, to: target.count, rows: shown.size.rows)
                    previousLines = Array(shown.lines.prefix(target.count))
                } else {
                    previousLines = shown.lines
                }
            }
            let lines = target!
            let changed = lines.enumerated().compactMap { (index, line) -> (row: Int, text: String)? in
                index < previousLines.count && previousLines[index] == line ? nil : (index + 1, line)
            }
            output += PanelScreen.draw(changed, width: size!.columns)
            state.shown = Shown(height: lines.count, size: size!, lines: lines, names: entries.map(\.name))
            state.keepsHeight = true
            write(output)
            return (entries, [])
        }
        // Drawn (or printed, the panel taken away): highlighted against from now on.
        watches.didDraw(drawn)
        return left
    }

    /// Ctrl-L: clears the rows under the panel and redraws it; false when
    /// there is no panel (readline clears the screen itself).
    func clearUnder() -> Bool {
        state.withLock { state in
            guard let shown = state.shown else { return false }
            let rows = shown.lines.enumerated().map { (row: $0.offset + 1, text: $0.element) }
            write(PanelScreen.clearUnder(height: shown.height) + PanelScreen.draw(rows, width: shown.size.columns))
            return true
        }
    }

    /// Whether changes go to the panel, in this state and terminal size.
    private func displayable(_ state: State, size: Terminal.Size?) -> Bool {
        guard capable, state.enabled, state.attached, let size else { return false }
        return PanelLayout.fits(size)
    }

    /// The panel's rows as they should be, rule included; `nil` when no panel should show.
    private func target(_ state: State, entries: [PanelEntry], settings: RenderSettings, size: Terminal.Size?)
        -> [String]?
    {
        guard displayable(state, size: size), !entries.isEmpty, let size else { return nil }
        let layout = PanelLayout(settings: settings, width: size.columns)
        var lines = layout.lines(entries, rows: size.rows)
        var height = lines.count + 1
        // The height only grows while the queries and the terminal stay the same.
        if state.keepsHeight, let shown = state.shown, shown.size == size, shown.names == entries.map(\.name) {
            height = max(height, shown.height)
        }
        height = min(height, PanelLayout.maximumHeight(rows: size.rows))
        lines += Array(repeating: "", count: max(0, height - 1 - lines.count))
        return Array(lines.prefix(height - 1)) + [layout.rule]
    }

    private func write(_ text: String) {
        guard !text.isEmpty else { return }
        output(text)
    }

    /// The time of day, `HH:mm:ss`, for entries' headers.
    static func clock(_ date: Date = Date()) -> String {
        var time = time_t(date.timeIntervalSince1970)
        var parts = tm()
        localtime_r(&time, &parts)
        return String(format: "%02d:%02d:%02d", parts.tm_hour, parts.tm_min, parts.tm_sec)
    }
}
