import Foundation

/// Something happened to a watched database file itself, not to its data.
///
/// ```swift
/// DatabaseFileChange(path: "games.sqlite", reason: .replaced)
/// // "games.sqlite was replaced by another file"
/// ```
public struct DatabaseFileChange: Hashable, Sendable {
    public enum Reason: String, Hashable, Sendable, CaseIterable {
        /// The file is gone. The open database goes on as it was.
        case deleted
        /// Another file was renamed over it. The open database goes on
        /// reading the file it opened.
        case replaced
        /// Its header or its size no longer make sense: every live query
        /// fails until it is repaired.
        case damaged
        /// A damaged file makes sense again: the live queries run again.
        case repaired
        /// Its permissions or its owner changed (`chmod`, `chown`): the
        /// connections open go on as they were, but what this process (and
        /// others) may open anew is not what it was.
        case permissionsChanged
    }

    /// The database file, as it was opened.
    public var path: String
    public var reason: Reason
    /// What happened, in a sentence; for `damaged`, what is wrong.
    public var message: String

    public init(path: String, reason: Reason, message: String? = nil) {
        self.path = path
        self.reason = reason
        self.message = message ?? Self.sentence(path, reason)
    }

    private static func sentence(_ path: String, _ reason: Reason) -> String {
        switch reason {
        case .deleted: "\(path) was deleted"
        case .replaced: "\(path) was replaced by another file"
        case .damaged: "\(path) is damaged"
        case .repaired: "\(path) is readable again"
        case .permissionsChanged: "\(path)'s permissions changed"
        }
    }

    /// A change of permissions, said as what it means for this process.
    static func permissionsChanged(
        _ path: String, from old: DataVersionProbe.Permissions?, to new: DataVersionProbe.Permissions
    ) -> DatabaseFileChange {
        func octal(_ mode: UInt32) -> String {
            let digits = String(mode, radix: 8)
            return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        }
        let was = old.map { " (was \(octal($0.mode)))" } ?? ""
        let readable = access(path, R_OK) == 0
        let writable = access(path, W_OK) == 0
        let meaning: String
        switch (readable, writable) {
        case (true, true): meaning = "sqlive may still read and write it"
        case (true, false):
            meaning =
                "it is read-only now: sqlive's open connections may still write it, but nothing can open it to write"
        case (false, _):
            meaning =
                "sqlive can no longer open it: its open connections go on reading it, but a new connection "
                + "(another sqlive, a file replaced at the path) would fail"
        }
        return DatabaseFileChange(
            path: path, reason: .permissionsChanged,
            message: "\(path)'s permissions changed to \(octal(new.mode))\(was): \(meaning)")
    }
}
