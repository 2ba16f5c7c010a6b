import SQLiveProtocol

/// The lifecycle of a session, as the Language Server Protocol defines it.
///
/// `initialize` comes first: requests before it are refused with -32002.
/// After `shutdown`, requests are refused with -32600, and `exit` ends the
/// process with 0; an `exit` without `shutdown` ends it with 1.
///
/// A pure value: the connection asks it about each request, in the order
/// they arrive, before the request is scheduled.
///
/// MCP's sessions have no such rules (`Lifecycle.open`): every request is
/// served, notifications included, and the input's end ends the session.
struct Lifecycle: Hashable, Sendable {
    enum State: Hashable, Sendable {
        case uninitialized
        case running
        case shutDown
    }

    private(set) var state = State.uninitialized
    /// Whether the Language Server Protocol's rules apply.
    private var enforced = true

    /// No rules: every request and notification is served.
    static var open: Lifecycle {
        var lifecycle = Lifecycle()
        lifecycle.enforced = false
        lifecycle.state = .running
        return lifecycle
    }

    /// Whether notifications are handled now (before `initialize`, the LSP
    /// drops them).
    var admitsNotifications: Bool {
        state != .uninitialized
    }

    /// Whether a request may run; advances the state for `initialize` and
    /// `shutdown`.
    ///
    /// - returns: nil to accept the request, or the error that answers it.
    mutating func admit(_ method: String) -> ResponseError? {
        guard enforced else { return nil }
        switch (state, method) {
        case (.uninitialized, InitializeRequest.method):
            state = .running
            return nil
        case (.uninitialized, _):
            return .serverNotInitialized
        case (.running, InitializeRequest.method):
            return .invalidRequest("the server is already initialized")
        case (.running, ShutdownRequest.method):
            state = .shutDown
            return nil
        case (.running, _):
            return nil
        case (.shutDown, _):
            return .invalidRequest("the server is shutting down; send 'exit'")
        }
    }

    /// The exit code when the session ends: 0 after `shutdown`, 1 otherwise.
    var exitCode: Int32 {
        state == .shutDown ? 0 : 1
    }
}
