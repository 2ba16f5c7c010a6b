import Foundation
import SQLiveLocks

/// Writes a session's output to standard output and standard error.
///
/// The elapsed-time indicator shares standard error with messages, and a
/// terminal with standard output: the sink clears the indicator before any
/// other write, and shows it only when nothing else was written for a
/// second, so the two never garble each other.
final class OutputSink: Sendable {
    /// Standard output was closed (`sqlive ... | head`): stop writing.
    struct Closed: Error {}

    // Mutable State: guarded by the mutex. Writes come from the session
    // thread; the indicator from its timer's queue.
    private struct State {
        var indicatorShown = false
        var lastOutput = ContinuousClock.now
        var closed = false
    }
    private let state = Locked(State())

    /// Whether the elapsed-time indicator shows now.
    var isIndicatorShown: Bool { state.withLock { $0.indicatorShown } }

    /// Whether standard output was closed.
    var isClosed: Bool { state.withLock { $0.closed } }

    /// Writes to standard output.
    func write(_ text: String) throws(Closed) {
        guard !text.isEmpty else { return }
        let ok = state.withLock { state in
            if state.indicatorShown {
                Self.writeAll(2, "\r\u{1B}[2K")
                state.indicatorShown = false
            }
            state.lastOutput = .now
            guard !state.closed else { return false }
            if !Self.writeAll(1, text) { state.closed = true }
            return !state.closed
        }
        if !ok { throw Closed() }
    }

    /// Writes to standard error.
    func writeError(_ text: String) {
        state.withLock { state in
            if state.indicatorShown {
                Self.writeAll(2, "\r\u{1B}[2K")
                state.indicatorShown = false
            }
            state.lastOutput = .now
            Self.writeAll(2, text)
        }
    }

    /// Shows the indicator on standard error, unless output was written in the last second.
    func showIndicator(_ text: String) {
        state.withLock { state in
            guard state.indicatorShown || ContinuousClock.now - state.lastOutput > .seconds(1) else { return }
            Self.writeAll(2, "\r\u{1B}[2K" + text)
            state.indicatorShown = true
        }
    }

    /// Removes the indicator, if shown.
    func clearIndicator() {
        state.withLock { state in
            if state.indicatorShown {
                Self.writeAll(2, "\r\u{1B}[2K")
                state.indicatorShown = false
            }
        }
    }

    /// Marks the start of a command, for the indicator's one-second delay.
    func commandDidStart() {
        state.withLock { $0.lastOutput = .now }
    }

    /// Writes every byte, retrying after signals; false when the stream is closed.
    @discardableResult
    private static func writeAll(_ fd: Int32, _ text: String) -> Bool {
        var text = text
        return text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR || errno == EAGAIN { continue }
                    return false
                }
                offset += written
            }
            return true
        }
    }
}
