/// When the protocol's writer writes: its decisions, as a pure value.
///
/// Messages are sent by any thread and written by one (`MessageWriter`'s).
/// A message is *deferrable* when its sender knows more follow at once
/// (a response while more requests wait in line): it may wait up to
/// `delay` for others, so that one `write(2)`, and one wake-up of the
/// writer, carries many. Any other message is written as soon as the
/// writer can, with whatever waits before it.
///
/// - **Order.** The writer takes every pending message at once, in order.
/// - **Bounded delay.** The delay counts from the first deferrable message
///   pending, so a steady stream cannot postpone a write forever; `limit`
///   messages pending are written at once.
/// - **No lost wake-up.** A message that arrives while the writer sleeps
///   with nothing pending wakes it; one that arrives while it writes is
///   seen when it asks `next(at:)` again.
///
/// It holds no clock and no thread: `MessageWriter` calls it under its
/// lock, and tests drive it with any instants.
struct OutputBatching<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// What the writer does next.
    enum Step: Equatable, Sendable {
        /// Take every pending message and write it.
        case write
        /// Nothing is pending: sleep until woken.
        case wait
        /// Deferred messages may wait: sleep this long at most, unless woken.
        case sleep(Duration)
    }

    /// How long a deferrable message may wait for others.
    let delay: Duration
    /// How many messages pending are written without waiting more.
    let limit: Int

    private enum Writer: Equatable {
        /// Writing, or about to ask `next(at:)`: it will see new messages.
        case busy
        /// Sleeping with nothing pending.
        case idle
        /// Sleeping until the deferred messages are due.
        case sleeping
    }

    // Mutable State
    //
    // `pending` counts the messages sent since the writer last took them;
    // `urgent` is true when one of them must not wait (or a flush asked);
    // `due` is when the first deferrable one among them must be written.
    private(set) var pending = 0
    private var urgent = false
    private var due: Instant?
    private var writer = Writer.busy

    init(delay: Duration, limit: Int) {
        self.delay = delay
        self.limit = limit
    }

    /// A message was sent.
    ///
    /// - parameter now: Read only when the message starts a batch (the
    ///   clock is asked once per batch, not per message).
    /// - returns: Whether to wake the writer.
    mutating func didSend(deferrable: Bool, at now: @autoclosure () -> Instant) -> Bool {
        pending += 1
        if !deferrable {
            urgent = true
        } else if due == nil {
            due = now().advanced(by: delay)
        }
        return wakeIfNeeded()
    }

    /// Everything pending must be written without waiting (a flush, the end).
    ///
    /// - returns: Whether to wake the writer.
    mutating func hurry() -> Bool {
        guard pending > 0 else { return false }
        urgent = true
        return wakeIfNeeded()
    }

    /// What the writer does next; it asks when it starts, after each write,
    /// and whenever it wakes.
    mutating func next(at now: Instant) -> Step {
        if pending == 0 {
            writer = .idle
            return .wait
        }
        if !urgent, pending < limit, let due, now < due {
            writer = .sleeping
            return .sleep(now.duration(to: due))
        }
        writer = .busy
        pending = 0
        urgent = false
        due = nil
        return .write
    }

    private mutating func wakeIfNeeded() -> Bool {
        let wake =
            switch writer {
            case .busy: false
            case .idle: true
            case .sleeping: urgent || pending >= limit
            }
        if wake { writer = .busy }
        return wake
    }
}
