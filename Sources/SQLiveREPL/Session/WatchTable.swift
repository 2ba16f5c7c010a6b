import SQLiveEngine
import SQLiveLocks

/// The live queries a session watches, and what it showed of each: the
/// session's one table of per-query front-end state (the engine keeps
/// the queries themselves; `LiveDatabase.directory` has their handles).
///
/// For each query: the newest version printed (above the prompt or in the
/// panel), the newest a `.wait` has seen, and, when the terminal can hold
/// the live panel, what the panel shows of it (`PanelEntry`: its latest
/// result, header, pause and highlight). The session thread changes it;
/// while a long statement runs, `LiveEcho` does, from the elapsed-time
/// indicator's queue; `LivePanel` reads it to draw. Versions never go back.
final class WatchTable: Sendable {
    private struct Entry {
        var name: String
        /// The newest version printed.
        var printed: Int
        /// The newest version a `.wait` has seen.
        var waited: Int
        /// What the panel shows, when the session keeps panel entries.
        var panel: PanelEntry?
    }

    /// Whether the session keeps what the panel shows (its terminal can
    /// hold one), or only the versions.
    let keepsPanelEntries: Bool

    // Mutable State: guarded by the mutex. Entries in the order the
    // queries were registered (the panel's order). Never held while
    // calling out: `LivePanel` takes its own lock first, then this one.
    private let entries = Locked<[Entry]>([])

    init(keepsPanelEntries: Bool = false) {
        self.keepsPanelEntries = keepsPanelEntries
    }

    /// The watched names, sorted.
    var names: [String] { entries.withLock { $0.map(\.name) }.sorted() }

    var isEmpty: Bool { entries.withLock { $0.isEmpty } }

    func contains(_ name: String) -> Bool {
        entries.withLock { $0.contains { $0.name == name } }
    }

    /// A live query registered, or redefined (keeping its place), with its
    /// first result: printed and waited for up to its version (a
    /// redefinition never goes back).
    func didRegister(_ snapshot: LiveQuerySnapshot, replaced: Bool, time: String = LivePanel.clock()) {
        let panel = keepsPanelEntries ? PanelEntry(snapshot, replaced: replaced, time: time) : nil
        entries.withLock { entries in
            if let index = entries.firstIndex(where: { $0.name == snapshot.name }) {
                entries[index].printed = max(snapshot.version, entries[index].printed)
                entries[index].waited = max(snapshot.version, entries[index].waited)
                entries[index].panel = panel
            } else {
                entries.append(
                    Entry(name: snapshot.name, printed: snapshot.version, waited: snapshot.version, panel: panel))
            }
        }
    }

    /// Stops watching one live query, or every one (`nil`).
    func remove(_ name: String?) {
        entries.withLock { entries in entries.removeAll { name == nil || $0.name == name } }
    }

    /// Takes a change of a watched query when it is newer than what was
    /// printed: it counts as printed from now on, and the panel's entry
    /// shows it. `shown`: it is re-printed above the prompt now (the panel
    /// is not shown), so the next one is highlighted against it.
    ///
    /// - returns: whether it was new (the caller prints it).
    func take(_ change: LiveQueryChange, shown: Bool, time: String = LivePanel.clock()) -> Bool {
        entries.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.name == change.name }),
                change.version > entries[index].printed
            else { return false }
            entries[index].printed = change.version
            entries[index].panel?.apply(change, time: time, shown: shown)
            return true
        }
    }

    /// A watched query's refresh failed: its panel entry shows the error
    /// until it recovers. Whether it is watched.
    func fail(_ name: String, message: String, time: String = LivePanel.clock()) -> Bool {
        entries.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.name == name }) else { return false }
            entries[index].panel?.fail(message, time: time)
            return true
        }
    }

    func setPaused(_ name: String, _ paused: Bool) {
        entries.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.name == name }) else { return }
            entries[index].panel?.paused = paused
        }
    }

    /// The newest printed version of each query.
    var printedVersions: [String: Int] {
        entries.withLock { Dictionary(uniqueKeysWithValues: $0.map { ($0.name, $0.printed) }) }
    }

    /// `.wait`: whether the query (any, for `nil`) printed a change since
    /// the last wait; if so, that wait is over: the waited-for versions
    /// catch up with the printed ones (all of them, for `nil`).
    func takeChangeSinceWait(_ name: String?) -> Bool {
        entries.withLock { entries in
            let ready = entries.contains { (name == nil || $0.name == name) && $0.printed > $0.waited }
            guard ready else { return false }
            for index in entries.indices where name == nil || entries[index].name == name {
                entries[index].waited = entries[index].printed
            }
            return true
        }
    }

    // MARK: - The panel's view

    /// What the panel shows, in registration order.
    var panelEntries: [PanelEntry] {
        entries.withLock { $0.compactMap(\.panel) }
    }

    /// The panel drew these entries: each, unless a newer version came
    /// meanwhile, is now what the next one is highlighted against.
    func didDraw(_ drawn: [PanelEntry]) {
        entries.withLock { entries in
            for entry in drawn {
                guard let index = entries.firstIndex(where: { $0.name == entry.name }),
                    entries[index].panel?.version == entry.version, entries[index].panel?.error == entry.error
                else { continue }
                entries[index].panel?.drawn = true
            }
        }
    }
}
