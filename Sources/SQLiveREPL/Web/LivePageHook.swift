import SQLiveEngine
import SQLiveLocks

/// A live page serving the session's database (`.web`): the REPL does not
/// depend on the server that makes it; the executable installs the
/// launcher (`LivePage.launcher`), and `.web` says so when none is.
public protocol LivePageServer: Sendable {
    /// The page's address, with its token.
    var url: String { get }
    func stop() async
}

public enum LivePage {
    /// Serves a database and its live queries (the directory the REPL
    /// registers in) as the page, at an address (`[HOST:]PORT`, nil: a
    /// free port on 127.0.0.1); the failure's words otherwise.
    public typealias Launcher =
        @Sendable (_ database: LiveDatabase, _ shownPath: String, _ address: String?) async
        -> Result<any LivePageServer, LivePageFailure>

    /// Set once by the executable, before any session runs.
    public static let launcher = Locked<Launcher?>(nil)
}

public struct LivePageFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
