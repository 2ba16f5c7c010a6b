import Foundation

/// Where the REPL keeps its history, and which entries it records.
struct History {
    /// `$XDG_STATE_HOME/sqlive/history`, or `~/.local/state/sqlive/history`.
    static func path(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            return state + "/sqlive/history"
        }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return home + "/.local/state/sqlive/history"
    }

    /// The last entry recorded, so that a repeated entry is not recorded twice.
    private(set) var lastEntry: String?

    init(lastEntry: String? = nil) {
        self.lastEntry = lastEntry
    }

    /// The entry to record for a command, or `nil` to record nothing
    /// (blank, or the same as the previous entry). A statement typed over
    /// several lines is recorded as one line.
    mutating func entry(for command: String) -> String? {
        let entry = command.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: " ")
        guard !entry.isEmpty, entry != lastEntry else { return nil }
        lastEntry = entry
        return entry
    }
}
