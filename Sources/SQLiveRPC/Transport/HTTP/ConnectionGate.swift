import Foundation
import HummingbirdCore
import Logging
import NIOCore
import SQLiveLocks
import Synchronization

/// The bounds every connection to a listener (`--mcp --http`, `--web`)
/// meets before Hummingbird reads it:
///
/// - **A head in time.** A request's line and headers must all arrive
///   within `timeout` of the connection opening; a client that sends half
///   of them and stalls (slowloris) is closed. (Later requests on the
///   connection, and bodies, are Hummingbird's idle time-out's, set to the
///   same `timeout`: a connection silent that long, in the middle of a
///   request or between two, is closed.)
/// - **Room for every connection.** At most `maximumConnections` are open
///   at once, well under the process's descriptor limit; one more is told
///   so, once its request's head has arrived (within a second): HTTP 503,
///   `Retry-After: 1` and a JSON-RPC error (-32030), then closed. (It is
///   not answered before its request is read: closing a socket with
///   unread data resets it, and the client could lose the answer.)
/// - **Never at the descriptor limit.** The descriptors left are for the
///   database's connections, the watchers and the tabs' connections; the
///   gate also counts the process's open descriptors (`/proc/self/fd`) at
///   each connection: within `refusalMargin` of the limit a connection is
///   refused with 503 as above, within `closingMargin` it is closed at once
///   (a refused connection). A process at its limit is not only unable to
///   accept: libdispatch's thread-pool monitor, which opens
///   `/proc/PID/stat` files every second, traps when it cannot ("workq:
///   registered worker exited prematurely"): the signal 4 that ended the
///   server in issue 56. Should the descriptors run out all the same, NIO
///   retries accepting every second, and the connections wait in the
///   kernel's queue meanwhile.
final class ConnectionGate: Sendable {
    let timeout: Duration
    let maximumConnections: Int
    /// Connections open now (accepted and not yet closed).
    private let open = Atomic<Int>(0)
    /// When a refusal was last logged (one line a minute at most).
    private let lastLog = Locked<ContinuousClock.Instant?>(nil)

    /// The soft descriptor limit, nil when there is none.
    let descriptorLimit: Int?

    init(timeout: Duration, maximumConnections: Int = ConnectionGate.defaultMaximumConnections) {
        self.timeout = timeout
        self.maximumConnections = maximumConnections
        descriptorLimit = Self.softDescriptorLimit
    }

    /// How near the descriptor limit a connection is refused with 503.
    static let refusalMargin = 48
    /// How near the descriptor limit a connection is closed at once.
    static let closingMargin = 16

    static var softDescriptorLimit: Int? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
        return Int(clamping: limit.rlim_cur)
    }

    /// How many descriptors the process has open (those in `/proc/self/fd`,
    /// less the one reading it); nil when it cannot tell.
    static func openDescriptors() -> Int? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            if entry.pointee.d_name.0 != UInt8(ascii: ".") { count += 1 }
        }
        return count - 1
    }

    /// Whether the process has fewer than `refusalMargin` descriptors
    /// left: what would open one more (a tab's connection, an agent's
    /// connection to write) waits for a later call instead.
    static var isNearDescriptorLimit: Bool {
        guard let limit = softDescriptorLimit, let used = openDescriptors() else { return false }
        return used + refusalMargin >= limit
    }

    /// What becomes of a connection.
    enum Admission: Equatable {
        case admit
        /// Answered 503 once its head is in.
        case refuse
        /// Closed at once: the process is about to run out of descriptors.
        case close
    }

    /// The connections a listener admits at once: the descriptor limit
    /// (`RLIMIT_NOFILE`, soft) less a reserve for the database's
    /// connections, the watchers and the tabs' own connections: a quarter
    /// of the limit, between 64 and 512.
    static var defaultMaximumConnections: Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else {
            return 4096
        }
        let soft = Int(clamping: limit.rlim_cur)
        let reserve = min(max(soft / 4, 64), 512)
        return max(soft - reserve, 8)
    }

    /// Counts a connection in, and says what becomes of it.
    func admit(_ channel: any Channel) -> Admission {
        let count = open.add(1, ordering: .relaxed).newValue
        channel.closeFuture.whenComplete { [self] _ in open.subtract(1, ordering: .relaxed) }
        var admission = Admission.admit
        var reason = ""
        if let limit = descriptorLimit, let used = Self.openDescriptors(), used + Self.refusalMargin >= limit {
            admission = used + Self.closingMargin >= limit ? .close : .refuse
            reason = "\(used) descriptors of \(limit) are open"
        } else if count > maximumConnections {
            admission = .refuse
            reason = "\(maximumConnections) connections are open, the most the descriptor limit leaves room for"
        }
        guard admission != .admit else { return .admit }
        let now = ContinuousClock.now
        let log = lastLog.withLock { last -> Bool in
            if let last, last.duration(to: now) < .seconds(60) { return false }
            last = now
            return true
        }
        if log {
            let verb = admission == .close ? "closing new connections at once" : "refusing connections with 503"
            ServerLog.warning("\(verb): \(reason)")
        }
        return admission
    }

    /// How long a connection over the bound has to send its request's
    /// head, to be told why it is refused.
    static let refusedHeadTimeout = Duration.seconds(1)

    /// The refusal a connection over the bound gets.
    static let refusal: [UInt8] = {
        let body =
            #"{"jsonrpc":"2.0","id":null,"error":{"code":-32030,"message":"Too many connections: this server is at "#
            + #"the most its descriptor limit allows; retry after 1 s"}}"#
        let head =
            "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
        return Array((head + body).utf8)
    }()
}

/// A listener's child channel (Hummingbird's HTTP/1, with or without the
/// WebSocket upgrade) behind a `ConnectionGate`: the gate's handler comes
/// first in the pipeline, before the HTTP decoder.
struct GatedChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value
    let inner: Inner
    let gate: ConnectionGate

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let admission = gate.admit(channel)
        let gate = self.gate
        return channel.eventLoop.makeCompletedFuture {
            if admission == .close {
                // No descriptor to spare: not even the time to say why.
                channel.close(promise: nil)
            }
            try channel.pipeline.syncOperations.addHandler(
                RequestHeadDeadline(timeout: gate.timeout, admitted: admission == .admit), position: .first)
        }.flatMap { inner.setup(channel: channel, logger: logger) }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// Closes a connection whose first request's head (up to its blank line)
/// has not arrived in time; answers a connection over the bound with the
/// gate's refusal once its head has arrived. Removes itself once the head
/// is in (the rest is Hummingbird's, or the WebSocket's).
final class RequestHeadDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let timeout: Duration
    private let admitted: Bool
    private var timer: Scheduled<Void>?
    private var started = false
    /// The last four bytes read, to find the blank line ("\r\n\r\n" or
    /// "\n\n") that ends the head.
    private var window: UInt32 = 0
    private var done = false

    init(timeout: Duration, admitted: Bool) {
        self.timeout = timeout
        self.admitted = admitted
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    private func start(_ context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        // A connection over the bound holds a descriptor the others need:
        // it gets a second for its head, not the whole time-out.
        let timeout = admitted ? timeout : min(timeout, ConnectionGate.refusedHeadTimeout)
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(nanoseconds)) { [self] in
            timer = nil
            guard !done else { return }
            ServerLog.debug("closed a connection whose request's head did not arrive in time")
            context.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if done {
            if admitted { context.fireChannelRead(data) }
            return
        }
        let buffer = unwrapInboundIn(data)
        var ended = false
        for byte in buffer.readableBytesView {
            window = (window << 8) | UInt32(byte)
            if window == 0x0D0A_0D0A || window & 0xFFFF == 0x0A0A {
                ended = true
                break
            }
        }
        guard admitted else {
            // Over the bound: once the head is in, the refusal, then close.
            if ended {
                done = true
                timer?.cancel()
                timer = nil
                var refusal = context.channel.allocator.buffer(capacity: ConnectionGate.refusal.count)
                refusal.writeBytes(ConnectionGate.refusal)
                context.writeAndFlush(NIOAny(refusal)).assumeIsolated().whenComplete { _ in
                    context.close(promise: nil)
                }
            }
            return
        }
        context.fireChannelRead(data)
        if ended {
            done = true
            timer?.cancel()
            timer = nil
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }
}
