import Foundation
import SQLiveLocks
import SQLiveProtocol

/// The one owner of the protocol's output: frames never interleave.
///
/// `send` appends a message to the pending ones; a serial queue encodes
/// what is pending and writes it, whole, in as few `write(2)` calls as it
/// can: while it writes, messages sent meanwhile gather, and go out
/// together next. Encoding there keeps it off the thread that runs
/// statements. Frames come out in the order they were sent, and writing
/// happens off Swift's cooperative pool: a client slow to read never
/// blocks a task.
final class MessageWriter: Sendable {
    private let fileDescriptor: Int32
    private let queue = DispatchQueue(label: "sqlive.rpc.writer")

    // Mutable State
    //
    // Guarded by the mutex. `pending` holds messages sent and not yet taken
    // by the queue; `draining` is true from the moment a drain is queued
    // until it finds `pending` empty, so a frame appended meanwhile is
    // written by it. `timerArmed` is true while a deferred drain is
    // scheduled for messages sent with `batching`. `failed` is set once
    // when writing fails (the client went away).
    private enum Pending: Sendable {
        case message(OutgoingMessage)
        case frame([UInt8])
    }
    private struct State {
        var pending: [Pending] = []
        var draining = false
        var timerArmed = false
        var failed = false
    }

    /// How long a message sent with `batching` may wait for others to
    /// gather before it is written, at most.
    static let batchingDelay = DispatchTimeInterval.microseconds(200)
    /// How many messages gather at most before they are written anyway.
    static let batchSize = 64
    private let state = Locked(State())

    /// A writer to a file descriptor, which it does not close.
    init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
    }

    /// Sends one message (a response, a notification or a batch).
    ///
    /// The message is encoded by the writer's queue, and written in order.
    /// With `batching` (a sender that knows more messages follow at once,
    /// such as a response while more requests wait in line), the writer is
    /// not woken for this message alone: it is written with the ones that
    /// follow, within `batchingDelay` at most.
    func send(_ message: OutgoingMessage, batching: Bool = false) {
        append(.message(message), batching: batching)
    }

    /// Sends bytes as they are; tests use it to write raw frames.
    func send(frame: [UInt8]) {
        append(.frame(frame), batching: false)
    }

    private enum Wake {
        case none, drain, timer
    }

    private func append(_ pending: Pending, batching: Bool) {
        let wake = state.withLock { state -> Wake in
            guard !state.failed else { return .none }
            state.pending.append(pending)
            if state.draining { return .none }
            if batching && state.pending.count < Self.batchSize {
                if state.timerArmed { return .none }
                state.timerArmed = true
                return .timer
            }
            state.draining = true
            return .drain
        }
        switch wake {
        case .none:
            break
        case .drain:
            queue.async { self.drain() }
        case .timer:
            queue.asyncAfter(deadline: .now() + Self.batchingDelay) {
                self.state.withLock { $0.timerArmed = false }
                self.drain()
            }
        }
    }

    /// Waits until every message sent so far is written, for at most
    /// `timeout` (a client that stopped reading must not hold the exit).
    ///
    /// - returns: Whether everything was written in time.
    @discardableResult
    func flush(timeout: Duration = .seconds(5)) -> Bool {
        // A drain runs until nothing is pending: this one writes what was
        // sent before this call, deferred messages included.
        let written = DispatchSemaphore(value: 0)
        queue.async {
            self.drain()
            written.signal()
        }
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        return written.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success
    }

    /// Encodes and writes what is pending until nothing is; runs on the
    /// queue, as often as it is asked (a drain that finds nothing returns).
    private func drain() {
        var taken: [Pending] = []
        var bytes: [UInt8] = []
        while true {
            taken.removeAll(keepingCapacity: true)
            let more = state.withLock { state -> Bool in
                guard !state.pending.isEmpty, !state.failed else {
                    state.pending = []
                    state.draining = false
                    return false
                }
                swap(&taken, &state.pending)
                return true
            }
            guard more else { return }
            bytes.removeAll(keepingCapacity: true)
            for item in taken {
                switch item {
                case .frame(let frame):
                    bytes.append(contentsOf: frame)
                case .message(let message):
                    let content = message.encoded { error in
                        ServerLog.warning("cannot encode a message: \(error)")
                    }
                    if let content { MessageFraming.append(content, to: &bytes) }
                }
            }
            write(bytes)
        }
    }

    private func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { buffer in
                Foundation.write(fileDescriptor, buffer.baseAddress, buffer.count)
            }
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                let reason = String(cString: strerror(errno))
                state.withLock { $0.failed = true }
                ServerLog.warning("cannot write to the client: \(reason); further messages are dropped")
                return
            }
            offset += written
        }
    }
}
