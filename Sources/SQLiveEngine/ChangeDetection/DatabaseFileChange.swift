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
        }
    }
}
