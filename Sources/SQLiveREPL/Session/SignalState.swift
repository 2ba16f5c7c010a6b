import Foundation
import SQLiveEngine
import SQLiveLocks

/// What Ctrl-C, window resizes and termination signals asked for, shared
/// between the signal handlers (on a dispatch queue) and the session thread.
///
/// Ctrl-C while a command runs interrupts the database and cancels the
/// command's task; at the prompt, the loop clears the line. A termination
/// signal (SIGTERM, SIGHUP; SIGINT in a scripted session) interrupts the
/// same way and ends the session, which then cleans up as on `.quit`.
final class SignalState: Sendable {
    // Mutable State: guarded by the mutex; signal handlers write it from a
    // dispatch queue, the session thread reads and resets it.
    private struct State {
        var running = false
        var interruptRequested = false
        var resized = false
        /// The signal that asked the session to end.
        var termination: Int32?
        var cancel: (@Sendable () -> Void)?
        var database: LiveDatabase?
    }
    private let state = Locked(State())
    let wake: WakePipe

    init(wake: WakePipe) {
        self.wake = wake
    }

    /// Catches SIGINT (and SIGWINCH for the terminal) while the returned sources are kept.
    func install(resizes: Bool) -> [any DispatchSourceSignal] {
        var list: [any DispatchSourceSignal] = []
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        interrupt.setEventHandler { [weak self] in self?.interrupt() }
        interrupt.resume()
        list.append(interrupt)
        if resizes {
            signal(SIGWINCH, SIG_IGN)
            let resize = DispatchSource.makeSignalSource(signal: SIGWINCH, queue: .global())
            resize.setEventHandler { [weak self] in
                self?.state.withLock { $0.resized = true }
                self?.wake.post()
            }
            resize.resume()
            list.append(resize)
        }
        return list
    }

    /// Ends the session on these signals: `terminate` runs, then
    /// `onRequest` (on a dispatch queue), while the returned sources are kept.
    func installTermination(
        _ signals: [Int32], onRequest: @escaping @Sendable (Int32) -> Void
    ) -> [any DispatchSourceSignal] {
        signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [weak self] in
                self?.terminate(number)
                onRequest(number)
            }
            source.resume()
            return source
        }
    }

    /// A termination signal: interrupt what runs, and wake the session so it ends.
    func terminate(_ signal: Int32) {
        let (database, cancel) = state.withLock { state in
            if state.termination == nil { state.termination = signal }
            return (state.database, state.cancel)
        }
        database?.interrupt()
        cancel?()
        wake.post()
    }

    /// The signal that asked the session to end, if one did.
    var termination: Int32? { state.withLock { $0.termination } }

    /// The database Ctrl-C interrupts.
    func setDatabase(_ database: LiveDatabase?) {
        state.withLock { $0.database = database }
    }

    /// Ctrl-C: interrupt the running command, or ask the loop to clear the line.
    func interrupt() {
        let (database, cancel) = state.withLock { state in
            state.interruptRequested = true
            return state.running ? (state.database, state.cancel) : (nil, nil)
        }
        database?.interrupt()
        cancel?()
        wake.post()
    }

    /// Marks a command as running (Ctrl-C interrupts it) or done. A Ctrl-C
    /// pressed before the command began is not for it.
    func setRunning(_ running: Bool) {
        state.withLock { state in
            state.running = running
            state.cancel = nil
            if running { state.interruptRequested = false }
        }
    }

    /// Whether a command runs.
    var isRunning: Bool { state.withLock { $0.running } }

    /// Whether the running command was interrupted (Ctrl-C since it began)
    /// or the session is ending. The database asks it while the command's
    /// statements run (`LiveDatabase.run(…isCancelled:…)`): `interrupt()`
    /// alone reaches only a statement that already runs, and a Ctrl-C that
    /// comes while the command waits for the connection would be lost.
    var isCommandCancelled: Bool {
        state.withLock { ($0.running && $0.interruptRequested) || $0.termination != nil }
    }

    /// What Ctrl-C cancels besides the database's statement.
    func setCancel(_ cancel: (@Sendable () -> Void)?) {
        state.withLock { $0.cancel = cancel }
    }

    /// Whether Ctrl-C was pressed since the last call.
    func takeInterrupt() -> Bool {
        state.withLock { state in
            defer { state.interruptRequested = false }
            return state.interruptRequested
        }
    }

    /// Whether Ctrl-C was pressed, without resetting.
    var isInterruptRequested: Bool { state.withLock { $0.interruptRequested } }

    /// Whether the window was resized since the last call.
    func takeResize() -> Bool {
        state.withLock { state in
            defer { state.resized = false }
            return state.resized
        }
    }
}
