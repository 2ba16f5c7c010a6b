import Foundation
import SQLiveLocks

/// Where `.trace` (sqlite3's form) and `.log` write: standard output
/// (whatever `.output` says, as sqlite3's `stdout`), standard error, or a
/// file of their own.
final class DiagnosticOutput: Sendable {
    enum Target: Sendable {
        case standardOutput, standardError
        case file(Int32)
    }
    let target: Target
    let sink: OutputSink

    init(target: Target, sink: OutputSink) {
        self.target = target
        self.sink = sink
    }

    /// `stdout`, `stderr`, `off` (`nil`), or a file created (or emptied);
    /// `nil` with a message on standard error when it cannot be opened, as
    /// sqlite3's `output_file_open`.
    static func open(_ name: String, sink: OutputSink) -> DiagnosticOutput? {
        switch name {
        case "stdout": return DiagnosticOutput(target: .standardOutput, sink: sink)
        case "stderr": return DiagnosticOutput(target: .standardError, sink: sink)
        case "off": return nil
        default:
            let descriptor = Glibc.open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
            guard descriptor >= 0 else {
                sink.writeError("Error: cannot open \"\(name)\"\n")
                return nil
            }
            return DiagnosticOutput(target: .file(descriptor), sink: sink)
        }
    }

    /// Writes a line; called on any thread (the database's, SQLite's log).
    func write(_ text: String) {
        switch target {
        case .standardOutput: try? sink.writeTerminal(text)
        case .standardError: sink.writeError(text)
        case .file(let descriptor):
            var bytes = Array(text.utf8)[...]
            while !bytes.isEmpty {
                let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                bytes = bytes.dropFirst(written)
            }
        }
    }

    deinit {
        if case .file(let descriptor) = target { Glibc.close(descriptor) }
    }
}

/// The session's diagnostics that outlive a command: the destinations of
/// `.trace` (sqlite3's form) and `.log`, and safe mode (`-safe`, `-nonce`,
/// `.nonce`), whose guard SQLite asks on the database's thread.
final class ShellDiagnostics: Sendable {
    private struct State {
        var traceOutput: DiagnosticOutput?
        var traceExpanded = false
        var logOutput: DiagnosticOutput?
        /// `-safe`.
        var safe = false
        /// `-nonce STRING`.
        var nonce: String?
        /// Set by a matching `.nonce`: the commands left (itself included)
        /// before safe mode is back.
        var suspension = 0
        /// What the guard refused last, not reported yet.
        var refusal: String?
    }
    private let state = Locked(State())

    var traceOutput: DiagnosticOutput? {
        get { state.withLock { $0.traceOutput } }
        set { state.withLock { $0.traceOutput = newValue } }
    }

    var traceExpanded: Bool {
        get { state.withLock { $0.traceExpanded } }
        set { state.withLock { $0.traceExpanded = newValue } }
    }

    var logOutput: DiagnosticOutput? {
        get { state.withLock { $0.logOutput } }
        set { state.withLock { $0.logOutput = newValue } }
    }

    /// Turns safe mode on for the whole session, with its nonce.
    func setSafe(_ safe: Bool, nonce: String?) {
        state.withLock {
            $0.safe = safe
            $0.nonce = nonce
        }
    }

    /// Whether the session started in safe mode (`-safe`).
    var isSafeSession: Bool { state.withLock { $0.safe } }

    /// Whether safe mode refuses now (not suspended by `.nonce`).
    var isSafe: Bool { state.withLock { $0.safe && $0.suspension == 0 } }

    /// `.nonce STRING`: whether it matches `-nonce`; then safe mode is off
    /// until the command after this one ends.
    func acceptNonce(_ nonce: String) -> Bool {
        state.withLock { state in
            guard let expected = state.nonce, expected == nonce else { return false }
            state.suspension = 2
            return true
        }
    }

    /// After each command: a suspension of safe mode runs out.
    func commandDidEnd() {
        state.withLock { state in
            if state.suspension > 0 { state.suspension -= 1 }
        }
    }

    /// The guard's verdict on an action SQLite authorizes while it
    /// prepares a statement: the refusal, as sqlite3 words it, or `nil`.
    func refusal(action: Int32, name: String?) -> String? {
        // Most questions are neither: answered before the lock.
        guard action == 24 || action == 31, isSafe else { return nil }
        switch action {
        case 24:  // SQLITE_ATTACH
            return "cannot run ATTACH in safe mode"
        case 31:  // SQLITE_FUNCTION
            guard let name = name?.lowercased(), Self.refusedFunctions.contains(name) else { return nil }
            return "cannot use the \(name)() function in safe mode"
        default:
            return nil
        }
    }

    /// The functions sqlite3's safe mode refuses.
    static let refusedFunctions: Set<String> = [
        "edit", "fts3_tokenizer", "load_extension", "readfile", "writefile", "zipfile", "zipfile_cds",
    ]

    /// Notes what the guard refused.
    func noteRefusal(_ message: String) {
        state.withLock { $0.refusal = message }
    }

    /// What the guard refused since the last call, if anything.
    func takeRefusal() -> String? {
        state.withLock { state in
            defer { state.refusal = nil }
            return state.refusal
        }
    }
}
