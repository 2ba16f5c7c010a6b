import Foundation
import SQLiveLocks

/// Writes a session's output to standard output and standard error.
///
/// The elapsed-time indicator shares standard error with messages, and a
/// terminal with standard output: the sink clears the indicator before any
/// other write, and shows it only when nothing else was written for a
/// second, so the two never garble each other.
///
/// A scripted session's sink is *buffered*, as the C shell's stdio is when
/// its output is not a terminal: standard output is written in chunks of
/// 64 KiB, not once per statement. Whatever is pending is written before
/// anything goes to standard error (so the two keep their order), before
/// the session waits (for input, or in `.wait`) and when it ends: `flush()`.
final class OutputSink: Sendable {
    /// Standard output was closed (`sqlive ... | head`): stop writing.
    struct Closed: Error {}

    // Mutable State: guarded by the mutex. Writes come from the session
    // thread; the indicator from its timer's queue.
    private struct State {
        var indicatorShown = false
        var lastOutput = ContinuousClock.now
        var closed = false
        /// Output not written yet (buffered sinks only).
        var pending: [UInt8] = []
    }
    private let state = Locked(State())
    /// Whether standard output is written in chunks (scripted sessions).
    let buffered: Bool
    private static let chunkSize = 1 << 16

    init(buffered: Bool = false) {
        self.buffered = buffered
    }

    /// Whether the elapsed-time indicator shows now.
    var isIndicatorShown: Bool { state.withLock { $0.indicatorShown } }

    /// Whether standard output was closed.
    var isClosed: Bool { state.withLock { $0.closed } }

    /// Writes to standard output.
    func write(_ text: String) throws(Closed) {
        var text = text
        if !text.withUTF8({ output(UnsafeRawBufferPointer($0)) }) { throw Closed() }
    }

    /// Writes bytes to standard output.
    func write(_ bytes: UnsafeRawBufferPointer) throws(Closed) {
        if !output(bytes) { throw Closed() }
    }

    /// Writes bytes to standard output; false when it is closed.
    private func output(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !bytes.isEmpty else { return true }
        return state.withLock { state in
            if state.indicatorShown {
                Self.writeAll(2, "\r\u{1B}[2K")
                state.indicatorShown = false
            }
            state.lastOutput = .now
            guard !state.closed else { return false }
            if buffered {
                state.pending.append(contentsOf: bytes)
                if state.pending.count >= Self.chunkSize { Self.writePending(&state) }
            } else if !Self.writeAll(1, bytes) {
                state.closed = true
            }
            return !state.closed
        }
    }

    /// Writes what a buffered sink holds.
    func flush() {
        state.withLock { Self.writePending(&$0) }
    }

    private static func writePending(_ state: inout State) {
        guard !state.pending.isEmpty else { return }
        if !state.closed, !state.pending.withUnsafeBytes({ writeAll(1, $0) }) { state.closed = true }
        state.pending.removeAll(keepingCapacity: true)
    }

    /// Writes to standard error.
    func writeError(_ text: String) {
        state.withLock { state in
            Self.writePending(&state)
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
        return text.withUTF8 { writeAll(fd, UnsafeRawBufferPointer($0)) }
    }

    /// Writes every byte, retrying after signals; false when the stream is closed.
    private static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Bool {
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
