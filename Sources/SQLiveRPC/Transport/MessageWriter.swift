import Foundation
import SQLiveLocks
import SQLiveProtocol
import SystemPackage

/// The one owner of the protocol's output: frames never interleave.
///
/// `send` appends a message to the pending ones; a thread of the writer's
/// own encodes what is pending and writes it, whole, in as few `write(2)`
/// calls as it can: while it writes, messages sent meanwhile gather, and go
/// out together next. Encoding there keeps it off the thread that runs
/// statements, and writing there means a client slow to read never blocks
/// a statement or a task. Frames come out in the order they were sent.
///
/// When the writer thread sleeps and when it wakes is `OutputBatching`'s
/// decision: a response sent while more requests wait in line may wait
/// 200 µs for the next ones, so a pipelined client gets its answers a few
/// dozen per write, at the cost of one wake-up instead of one each.
///
/// The thread runs while there is something to write: it is started by
/// the first message sent, and ends once nothing has been sent for
/// `lingering` (an idle session costs no thread; a busy one keeps its
/// thread), then starts again at the next message. At most one runs at a
/// time, so frames stay in order.
///
/// The output is a file descriptor, or, for sessions served in-process
/// (`--mcp --http`, `--web`), a sink given each message's bytes in order.
final class MessageWriter: Sendable {
    /// How messages are delimited on the output.
    enum Framing: Sendable {
        /// The Language Server Protocol's `Content-Length` headers.
        case contentLength
        /// One message per line, as MCP's stdio transport has it (the JSON
        /// writer never writes a raw newline).
        case newline
    }

    /// Where the writer writes.
    enum Output: Sendable {
        /// A file descriptor, which the writer does not close.
        case descriptor(Int32)
        /// Each message's bytes (without framing), in order, one call at a
        /// time, on the writer's thread.
        case sink(@Sendable ([UInt8]) -> Void)
    }

    private let output: Output
    private let framing: Framing
    /// The longest message written: a longer response is sent as an error.
    private let maximumLength: Int

    // Mutable State
    //
    // Guarded by the condition's mutex. `pending` holds the messages sent
    // and not yet taken by the writer thread, and `batching` counts them
    // (the two change together). `sent` counts every message accepted and
    // `written` every one written or dropped, so a flush waits until
    // `written` reaches the `sent` it saw. `failed` is set once when
    // writing fails (the client went away); `stopping` once by `stop()`.
    private enum Pending: Sendable {
        case message(OutgoingMessage)
        case frame([UInt8])
    }
    private struct State {
        var pending: [Pending] = []
        var batching = OutputBatching<ContinuousClock.Instant>(
            delay: MessageWriter.batchingDelay, limit: MessageWriter.batchSize)
        var sent = 0
        var written = 0
        var flushWaiters = 0
        var failed = false
        var stopping = false
        /// Whether a writer thread runs (at most one does): set by whoever
        /// starts it, under the lock, and cleared by the thread itself, under
        /// the lock, as it decides to end (idle for `lingering`, or stopped
        /// with nothing pending).
        var threadRunning = false
    }
    private let state = Condition(State())

    /// How long a message sent with `batching` may wait for others to
    /// gather before it is written, at most.
    static let batchingDelay = Duration.microseconds(200)
    /// How many messages gather at most before they are written anyway.
    static let batchSize = 64

    /// How long the writer thread waits for more messages before it ends.
    static let lingering = Duration.seconds(1)

    /// A writer to a file descriptor, which it does not close.
    convenience init(fileDescriptor: Int32, framing: Framing = .contentLength, maximumLength: Int = 64 << 20) {
        self.init(output: .descriptor(fileDescriptor), framing: framing, maximumLength: maximumLength)
    }

    init(output: Output, framing: Framing = .contentLength, maximumLength: Int = 64 << 20) {
        self.output = output
        self.framing = framing
        self.maximumLength = maximumLength
    }

    /// Whether a writer thread runs now (tests).
    var isThreadRunning: Bool { state.withLock { $0.threadRunning } }

    private func startThread() {
        let thread = Thread { [self] in
            run()
            state.broadcast()
        }
        thread.name = "sqlive.rpc.writer"
        thread.start()
    }

    /// Sends one message (a response, a notification or a batch).
    ///
    /// The message is encoded by the writer's thread, and written in order.
    /// With `batching` (a sender that knows more messages follow at once,
    /// such as a response while more requests wait in line), the writer is
    /// not woken for this message alone: it is written with the ones that
    /// follow, within `batchingDelay` at most.
    func send(_ message: OutgoingMessage, batching: Bool = false) {
        append(.message(message), batching: batching)
    }

    /// Sends messages together: written in one write, after those sent
    /// before (the changes of one commit, which a client sees at once).
    func send(contentsOf messages: [OutgoingMessage]) {
        append(messages.map(Pending.message), batching: false)
    }

    /// Sends bytes as they are; tests use it to write raw frames.
    func send(frame: [UInt8]) {
        append(.frame(frame), batching: false)
    }

    private func append(_ pending: Pending, batching: Bool) {
        append(CollectionOfOne(pending), batching: batching)
    }

    private func append(_ pending: some Collection<Pending>, batching: Bool) {
        let (wake, start) = state.withLock { state -> (Bool, Bool) in
            // After a failure or `stop()`, nothing more is written.
            guard !state.failed, !state.stopping else { return (false, false) }
            state.pending.append(contentsOf: pending)
            state.sent += pending.count
            let wake = state.batching.didSend(deferrable: batching, at: .now)
            guard !state.threadRunning else { return (wake, false) }
            state.threadRunning = true
            return (false, true)
        }
        if start { startThread() }
        if wake { state.broadcast() }
    }

    /// Waits until every message sent so far is written, for at most
    /// `timeout` (a client that stopped reading must not hold the exit).
    ///
    /// - returns: Whether everything was written in time.
    @discardableResult
    func flush(timeout: Duration = .seconds(5)) -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        let (target, wake) = state.withLock { state in
            state.flushWaiters += 1
            return (state.sent, state.batching.hurry())
        }
        if wake { state.broadcast() }
        defer { state.withLock { $0.flushWaiters -= 1 } }
        return state.wait { state -> Condition<State>.Step<Bool> in
            if state.written >= target { return .done(true) }
            let left = ContinuousClock.now.duration(to: deadline)
            return left > .zero ? .waitAtMost(left) : .done(false)
        }
    }

    /// Writes what is pending, then ends the writer thread; messages sent
    /// later are dropped. Waits for the thread to end, for at most
    /// `timeout` (it may be stuck writing to a client that stopped reading).
    func stop(timeout: Duration = .seconds(5)) {
        state.withLock { state in
            state.stopping = true
            _ = state.batching.hurry()
        }
        // Even with nothing pending, the sleeping thread must see `stopping`.
        state.broadcast()
        let deadline = ContinuousClock.now.advanced(by: timeout)
        let ended = state.wait { state -> Condition<State>.Step<Bool> in
            if !state.threadRunning { return .done(true) }
            let left = ContinuousClock.now.duration(to: deadline)
            return left > .zero ? .waitAtMost(left) : .done(false)
        }
        if !ended {
            ServerLog.warning("the writer thread did not end: the client does not read")
        }
    }

    /// The writer thread: takes what is pending when `OutputBatching` says
    /// so, encodes it and writes it, until `stop()`.
    private func run() {
        var bytes: [UInt8] = []
        var taken: [Pending] = []
        var idleSince: ContinuousClock.Instant?
        while true {
            let more = state.wait { state -> Condition<State>.Step<Bool> in
                if state.stopping && state.pending.isEmpty {
                    state.threadRunning = false
                    return .done(false)
                }
                switch state.batching.next(at: .now) {
                case .wait:
                    // Nothing to write: linger a while, then end (the next
                    // message starts a thread again).
                    let now = ContinuousClock.now
                    let since = idleSince ?? now
                    idleSince = since
                    let left = now.duration(to: since.advanced(by: Self.lingering))
                    guard left > .zero, state.pending.isEmpty else {
                        if state.pending.isEmpty {
                            state.threadRunning = false
                            return .done(false)
                        }
                        return .wait
                    }
                    return .waitAtMost(left)
                case .sleep(let duration):
                    return .waitAtMost(duration)
                case .write:
                    idleSince = nil
                    swap(&taken, &state.pending)
                    return .done(true)
                }
            }
            guard more else { return }
            // The room a large batch needed (a 50,000-statement document's
            // code lenses: tens of MB) is given back, not kept for good.
            if bytes.capacity > 1 << 20 { bytes = [] } else { bytes.removeAll(keepingCapacity: true) }
            if case .sink(let sink) = output {
                if !state.withLock({ $0.failed }) {
                    for item in taken {
                        switch item {
                        case .frame(let frame):
                            sink(frame)
                        case .message(let message):
                            let content = message.encoded(maximumLength: maximumLength) { problem in
                                ServerLog.warning("\(problem)")
                            }
                            if let content { sink(content) }
                        }
                    }
                }
            } else if !state.withLock({ $0.failed }) {
                for item in taken {
                    switch item {
                    case .frame(let frame):
                        bytes.append(contentsOf: frame)
                    case .message(let message):
                        let content = message.encoded(maximumLength: maximumLength) { problem in
                            ServerLog.warning("\(problem)")
                        }
                        guard let content else { break }
                        switch framing {
                        case .contentLength:
                            MessageFraming.append(content, to: &bytes)
                        case .newline:
                            bytes.append(contentsOf: content)
                            bytes.append(0x0A)
                        }
                    }
                }
                write(bytes)
            }
            let count = taken.count
            taken.removeAll(keepingCapacity: true)
            let notify = state.withLock { state in
                state.written += count
                return state.flushWaiters > 0
            }
            if notify { state.broadcast() }
        }
    }

    private func write(_ bytes: [UInt8]) {
        guard case .descriptor(let fileDescriptor) = output else { return }
        do {
            try bytes.withUnsafeBytes { buffer in
                try FileDescriptor(rawValue: fileDescriptor).writeEverything(buffer)
            }
        } catch {
            state.withLock { $0.failed = true }
            ServerLog.warning("cannot write to the client: \(error); further messages are dropped")
        }
    }
}
