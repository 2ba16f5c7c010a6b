/// The live queries a session watches, and how far each one's changes were
/// printed and waited for: the session's one table of live-query state (the
/// engine keeps the queries themselves).
///
/// Printing advances it (the session's events, and what a `LiveEcho`
/// showed while a statement ran, taken back when it ends); `.wait` reads
/// and advances the waited-for versions. Versions never go back.
struct WatchTable {
    private struct Entry {
        /// The newest version printed.
        var printed: Int
        /// The newest version a `.wait` has seen.
        var waited: Int
    }

    private var entries: [String: Entry] = [:]

    /// The watched names, sorted.
    var names: [String] { entries.keys.sorted() }

    var isEmpty: Bool { entries.isEmpty }

    func contains(_ name: String) -> Bool {
        entries[name] != nil
    }

    /// A live query registered, or redefined, at `version`: printed and
    /// waited for up to it (a redefinition never goes back).
    mutating func didRegister(_ name: String, version: Int) {
        let previous = entries[name]
        entries[name] = Entry(
            printed: max(version, previous?.printed ?? 0), waited: max(version, previous?.waited ?? 0))
    }

    /// Stops watching one live query, or every one (`nil`).
    mutating func remove(_ name: String?) {
        if let name {
            entries[name] = nil
        } else {
            entries = [:]
        }
    }

    /// Whether a change of a watched query is newer than what was printed;
    /// if so, it counts as printed from now on.
    mutating func takeIfNew(_ name: String, version: Int) -> Bool {
        guard var entry = entries[name], version > entry.printed else { return false }
        entry.printed = version
        entries[name] = entry
        return true
    }

    /// The newest printed version of each query (where a `LiveEcho` starts).
    var printedVersions: [String: Int] { entries.mapValues(\.printed) }

    /// Takes back the versions a `LiveEcho` printed (only those newer).
    mutating func didPrint(_ versions: [String: Int]) {
        for (name, version) in versions { _ = takeIfNew(name, version: version) }
    }

    /// `.wait`: whether the query (any, for `nil`) printed a change since
    /// the last wait; if so, that wait is over: the waited-for versions
    /// catch up with the printed ones (all of them, for `nil`).
    mutating func takeChangeSinceWait(_ name: String?) -> Bool {
        let ready = entries.contains { key, entry in (name == nil || key == name) && entry.printed > entry.waited }
        guard ready else { return false }
        for key in name.map({ [$0] }) ?? Array(entries.keys) {
            if var entry = entries[key] {
                entry.waited = entry.printed
                entries[key] = entry
            }
        }
        return true
    }
}
