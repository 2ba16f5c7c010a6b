import Foundation

/// Where a database lives: a file, a `file:` URI, or memory.
///
/// ```swift
/// DatabaseLocation("games.sqlite")          // .file("games.sqlite")
/// DatabaseLocation("file:games.sqlite?mode=ro") // .uri(...)
/// DatabaseLocation(":memory:")              // .memory
/// ```
public enum DatabaseLocation: Hashable, Sendable {
    /// A private in-memory database.
    case memory
    /// A database file at a path.
    case file(String)
    /// A SQLite `file:` URI, with its query parameters.
    case uri(String)
    /// A database of a dqlite cluster, `dqlite://HOST:PORT[,HOST:PORT…]/NAME`
    /// (`nil`: the text starts so but says no such thing). `LiveDatabase`
    /// opens it as a local mirror (`DqliteRemote`), whose `.file` location
    /// is the opened database's.
    case dqlite(DqliteTarget?, text: String)

    /// Parses the way the command line and `.open` take a database name:
    /// nothing or `:memory:` is in memory, `file:...` is a URI, anything else a path.
    public init(_ text: String?) {
        guard let text, !text.isEmpty, text != ":memory:" else {
            self = .memory
            return
        }
        if text.hasPrefix("file:") {
            self = .uri(text)
        } else if text.hasPrefix(DqliteTarget.scheme) {
            self = .dqlite(DqliteTarget(url: text), text: text)
        } else {
            self = .file(text)
        }
    }

    /// The text SQLite opens: a path, a URI, or `:memory:`.
    var sqlitePath: String {
        switch self {
        case .memory: ":memory:"
        case .file(let path): path
        case .uri(let uri): uri
        // Never opened by SQLite: opened as its mirror.
        case .dqlite(_, let text): text
        }
    }

    /// The file system path of the database file, when there is one.
    ///
    /// For a URI, this is its path component with percent-escapes decoded;
    /// a URI that names an in-memory database (`file::memory:`,
    /// `mode=memory`) has none.
    public var filePath: String? {
        switch self {
        case .memory, .dqlite:
            return nil
        case .file(let path):
            return path
        case .uri(let uri):
            var rest = uri.dropFirst("file:".count)
            if let query = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) {
                if rest[query...].contains("mode=memory") { return nil }
                rest = rest[..<query]
            }
            if rest.hasPrefix("//") {
                // file://host/path: only an empty host or localhost is valid.
                rest = rest.dropFirst(2)
                guard let slash = rest.firstIndex(of: "/") else { return nil }
                rest = rest[slash...]
            }
            let path = String(rest).removingPercentEncoding ?? String(rest)
            return path.isEmpty || path == ":memory:" ? nil : path
        }
    }

    /// Whether a URI says the file never changes (`immutable=1`): SQLite
    /// then takes no locks and opens no `-shm` or `-wal`, and nobody's
    /// commits are watched for.
    var isImmutable: Bool {
        guard case .uri(let uri) = self, let query = uri.split(separator: "?", maxSplits: 1).dropFirst().first
        else { return false }
        return query.split(separator: "&").contains("immutable=1")
    }

    /// Whether a URI asks for read-only opening (`mode=ro` or `immutable=1`).
    var uriRequestsReadOnly: Bool {
        guard case .uri(let uri) = self, let query = uri.split(separator: "?", maxSplits: 1).dropFirst().first
        else { return false }
        let parameters = query.split(separator: "&")
        return parameters.contains("mode=ro") || parameters.contains("immutable=1")
    }
}

extension DatabaseLocation {
    /// The file SQLite opens for a path: SQLite follows symbolic links and
    /// writes `-wal`, `-shm` and `-journal` next to the file they end at
    /// (the path itself when it cannot be resolved, as for a file not
    /// created yet).
    static func resolvingSymbolicLinks(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

extension DatabaseLocation: CustomStringConvertible {
    public var description: String { sqlitePath }
}
