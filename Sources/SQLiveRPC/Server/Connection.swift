import Foundation
import SQLiveEngine
import SQLiveLocks
import SQLiveProtocol
import Synchronization

/// What sets one protocol served by a `Connection` apart: its framing, its
/// dispatcher, its lifecycle, how a request is cancelled and how the
/// session ends. JSON-RPC with the Language Server Protocol
/// (`ServedProtocol.jsonRPC`) and MCP (`ServedProtocol.mcp`) are two values
/// of it; the reading thread, the in-flight table, the request queue and
/// the writer are the same code.
struct ServedProtocol<Session: Sendable>: Sendable {
    enum Framing: Sendable {
        /// `Content-Length` headers (the Language Server Protocol's).
        case contentLength
        /// One message per line (MCP's stdio transport).
        case newline
    }

    var framing: Framing
    var dispatcher: Dispatcher<Session>
    /// Whether a JSON-RPC batch (an array of messages) is served; MCP left
    /// batches in 2025-06-18.
    var acceptsBatches: Bool
    /// The lifecycle's rules, fresh for each connection.
    var lifecycle: Lifecycle
    /// The notification that ends the connection (the LSP's `exit`), if any.
    var exitNotification: String?
    /// The notification that cancels a request, and the id it names.
    var cancelNotification: String
    var cancelledID: @Sendable (_ params: JSONValue?) -> RequestID?
    /// Whether a cancelled request is answered (JSON-RPC: -32800) or never
    /// (MCP asks that it be left unanswered).
    var answersCancelled: Bool
    /// The token of a request's progress (`workDoneToken`), which a
    /// progress cancellation names; nil when the protocol has none.
    var progressCancelNotification: String?
    /// Ends the session once the requests are done.
    var close: @Sendable (Session) async -> Void
    /// Screens each request before it is scheduled: its params as served,
    /// or the error that answers it (MCP's eras); nil: every request is
    /// served as it came.
    var screen: (@Sendable (Session, RequestID, _ method: String, JSONValue?) -> Result<JSONValue?, ResponseError>)? =
        nil
    /// Rewrites each answer before it is sent (MCP's stateless era stamps
    /// its results); nil: as the handler gave it.
    var decorate: (@Sendable (Session, _ method: String, Dispatcher<Session>.Answer) -> Dispatcher<Session>.Answer)? =
        nil
    /// Called as soon as the input ends, before the requests still running
    /// are waited for: ends the requests that only end with the session
    /// (MCP's `subscriptions/listen`).
    var endOfInput: (@Sendable (Session) -> Void)? = nil
}

/// Reads messages, schedules requests, and ends the session, for one
/// protocol (`ServedProtocol`).
///
/// The connection is the one reader of the input. A thread of its own
/// reads the input, splits it into frames, decodes each message's JSON
/// once, asks the lifecycle whether a request may run, and hands it to the
/// request queue: the reading thread never waits for a request, so a
/// cancellation and `exit` are seen at once, even while a long query runs.
final class Connection<Session: Sendable>: Sendable {
    let writer: MessageWriter
    let session: Session
    let served: ServedProtocol<Session>
    let queue: RequestQueue
    let maximumMessageLength: Int

    /// A request being handled: what a cancellation needs to cancel it.
    final class InFlightRequest: Sendable {
        let reply: Reply
        /// The `workDoneToken` of its params: a progress cancel names it.
        let progressToken: JSONValue?
        // Mutable State: set once by the reading thread, right after the
        // request is scheduled, and read by the same thread when a
        // cancellation names it: the mutex only satisfies the checker.
        private let scheduled = Locked<ScheduledWork?>(nil)
        /// Set once, when the request has been answered and its work is
        /// done: the reading thread then drops it from `inFlight`.
        let hasEnded = Atomic<Bool>(false)

        init(reply: Reply, progressToken: JSONValue?) {
            self.reply = reply
            self.progressToken = progressToken
        }

        func attach(_ work: ScheduledWork) {
            scheduled.withLock { $0 = work }
        }

        /// Cancels the work. A request that has not started yet is
        /// answered -32800 at once (or never, when the protocol asks so),
        /// a running one when its statement is interrupted.
        ///
        /// - returns: Whether the request was settled here (it will never run).
        func cancel(answering: Bool) -> Bool {
            if !answering { reply.withhold() }
            guard let work = scheduled.withLock({ $0 }), work.cancel() == .beforeStart else { return false }
            reply(.failure(.requestCancelled))
            return true
        }
    }

    // Mutable State
    //
    // Guarded by the mutex. `lifecycle` is only advanced by the reading
    // thread, in message order. `inFlight` is only changed by the reading
    // thread: it adds each request, and now and then drops the ones that
    // ended (`hasEnded`, set by whoever ended them), so that ending a
    // request costs no lock and no hashing on the lane. A request that
    // ended may thus still be found by a cancellation: cancelling it is
    // too late, and does nothing, as for an unknown id.
    private struct State {
        var lifecycle: Lifecycle
        var inFlight: [RequestID: InFlightRequest] = [:]
        /// Requests added since `inFlight` was last swept.
        var addedSinceSweep = 0
    }
    /// How many requests are added between two sweeps of `inFlight`.
    static var sweepInterval: Int { 1024 }
    private let state: Locked<State>

    /// - parameter threads: The threads its blocking requests run on, shared
    ///   with other connections (nil: a budget of its own).
    init(
        writer: MessageWriter, session: Session, served: ServedProtocol<Session>, maximumMessageLength: Int,
        threads: ThreadBudget? = nil
    ) {
        queue = threads.map { RequestQueue(threads: $0) } ?? RequestQueue()
        self.writer = writer
        self.session = session
        self.served = served
        self.maximumMessageLength = maximumMessageLength
        state = Locked(State(lifecycle: served.lifecycle))
    }

    /// What the reading loop does after a message.
    enum Outcome {
        case proceed
        case exit
    }

    /// Serves the input until `exit` or its end, then closes the session.
    ///
    /// The input is read by a thread of its own, which ends with this call;
    /// the descriptor is not closed.
    ///
    /// - returns: The exit code: 0 after `shutdown` then `exit` or after the
    ///   end of the input, 1 for `exit` without `shutdown`.
    func run(input fileDescriptor: Int32) async -> Int32 {
        let exitRequested = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let thread = Thread { [self] in
                continuation.resume(returning: read(fileDescriptor))
            }
            thread.name = "sqlive.rpc.reader"
            thread.start()
        }
        return await finish(exitRequested: exitRequested)
    }

    // Mutable State of an input pushed in-process (`receive`): guarded by
    // the mutex, which also makes `receive` calls one at a time, as the
    // reading thread is one. `ended` is set once, by `endInput` or an
    // `exit` (then `exit` is true); `waiter` is `runPushed`'s, resumed once
    // when the input ends.
    private struct PushedInput {
        var ended = false
        var exit = false
        var waiter: CheckedContinuation<Bool, Never>?
    }
    private let pushed = Locked(PushedInput())

    /// Serves the messages given to `receive` until `exit` or `endInput`,
    /// then closes the session: `run(input:)` without a descriptor or a
    /// reading thread, for sessions served in-process (`--mcp --http`,
    /// `--web`), which cost no thread while idle.
    ///
    /// - returns: The exit code, as `run(input:)`'s.
    func runPushed() async -> Int32 {
        let exitRequested = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let ended = pushed.withLock { input -> Bool? in
                if input.ended { return input.exit }
                input.waiter = continuation
                return nil
            }
            if let ended { continuation.resume(returning: ended) }
        }
        return await finish(exitRequested: exitRequested)
    }

    /// Handles one message (a whole message, without framing), as the
    /// reading thread handles one; calls are handled one at a time, in the
    /// order they take the lock.
    ///
    /// - returns: False once the input has ended (the message is dropped).
    @discardableResult
    func receive(_ content: [UInt8]) -> Bool {
        let (accepted, waiter) = pushed.withLock { input -> (Bool, CheckedContinuation<Bool, Never>?) in
            guard !input.ended else { return (false, nil) }
            let outcome: Outcome
            if content.count > maximumMessageLength {
                outcome = handle(LineFramer.Event.tooLong(content.count))
            } else {
                outcome = handle(content: content)
            }
            guard case .exit = outcome else { return (true, nil) }
            input.ended = true
            input.exit = true
            defer { input.waiter = nil }
            return (true, input.waiter)
        }
        waiter?.resume(returning: true)
        return accepted
    }

    /// Ends the pushed input, as the end of a descriptor's input does.
    func endInput() {
        let waiter = pushed.withLock { input -> CheckedContinuation<Bool, Never>? in
            guard !input.ended else { return nil }
            input.ended = true
            defer { input.waiter = nil }
            return input.waiter
        }
        waiter?.resume(returning: false)
    }

    private func finish(exitRequested: Bool) async -> Int32 {
        let shutDown = state.withLock { $0.lifecycle.state == .shutDown }
        if exitRequested && !shutDown {
            // The client is leaving abruptly: what still runs is cancelled.
            cancelAll()
            _ = await queue.waitForAll(timeout: .seconds(2))
        } else if exitRequested {
            // After `shutdown`, the requests before it are answered; an
            // `exit` sent right after `shutdown` waits for them.
            if await !queue.waitForAll(timeout: .seconds(10)) {
                cancelAll()
                _ = await queue.waitForAll(timeout: .seconds(2))
            }
        } else {
            // End of input: the requests already read are answered.
            ServerLog.debug("end of input")
            served.endOfInput?(session)
            if await !queue.waitForAll(timeout: .seconds(60)) {
                cancelAll()
                _ = await queue.waitForAll(timeout: .seconds(2))
            }
        }
        queue.stop()
        await served.close(session)
        if !writer.flush() {
            ServerLog.warning("the client did not read the last messages")
        }
        return exitRequested ? state.withLock { $0.lifecycle.exitCode } : 0
    }

    /// Reads and handles the input until `exit` or its end.
    ///
    /// - returns: Whether `exit` ended it.
    private func read(_ fileDescriptor: Int32) -> Bool {
        switch served.framing {
        case .contentLength:
            var parser = FrameParser(maximumContentLength: maximumMessageLength)
            return StandardIO.read(fileDescriptor) { chunk in
                parser.append(chunk)
                while let event = parser.next() {
                    if case .exit = handle(event) { return false }
                }
                return true
            }
        case .newline:
            var framer = LineFramer(maximumLength: maximumMessageLength)
            return StandardIO.read(fileDescriptor) { chunk in
                framer.append(chunk)
                while let event = framer.next() {
                    if case .exit = handle(event) { return false }
                }
                return true
            }
        }
    }

    /// Cancels every request in flight.
    private func cancelAll() {
        let requests = state.withLock { Array($0.inFlight.values) }
        for request in requests { cancel(request) }
    }

    private func cancel(_ request: InFlightRequest) {
        if request.cancel(answering: served.answersCancelled) { finished(request) }
    }

    /// Handles one event of the `Content-Length` framing.
    func handle(_ event: FrameParser.Event) -> Outcome {
        switch event {
        case .skipped(let count):
            ServerLog.warning("skipped \(count) bytes that were not part of a message")
            return .proceed
        case .malformed(let error):
            ServerLog.warning("malformed message: \(error)")
            let code: ErrorCode = if case .contentTooLarge = error { .invalidRequest } else { .parseError }
            let prefix = code == .parseError ? "Parse error" : "Invalid request"
            writer.send(OutgoingMessage.response(id: nil, error: ResponseError(code, "\(prefix): \(error)")))
            return .proceed
        case .message(let content):
            return handle(content: content)
        }
    }

    /// Handles one event of the newline framing.
    func handle(_ event: LineFramer.Event) -> Outcome {
        switch event {
        case .tooLong(let length):
            ServerLog.warning("skipped a message of \(length) bytes, longer than \(maximumMessageLength)")
            writer.send(
                OutgoingMessage.response(
                    id: nil,
                    error: .invalidRequest("the message is \(length) bytes long, more than \(maximumMessageLength)")))
            return .proceed
        case .message(let content):
            return handle(content: content)
        }
    }

    private func handle(content: [UInt8]) -> Outcome {
        ServerLog.debug("--> \(String(decoding: content, as: UTF8.self))")
        let incoming: IncomingContent
        do throws(ResponseError) {
            incoming = try IncomingContent.decode(content)
        } catch {
            ServerLog.debug("parse error: \(error.message)")
            writer.send(OutgoingMessage.response(id: nil, error: error))
            return .proceed
        }
        switch incoming {
        case .message(let message):
            // While more requests wait in line, a response is written with
            // the ones that follow (200 µs at most).
            return handle(message, respond: { [writer, queue] in writer.send($0, batching: queue.hasQueuedLaneWork) })
        case .batch(let messages):
            guard served.acceptsBatches else {
                writer.send(
                    OutgoingMessage.response(id: nil, error: .invalidRequest("this protocol does not take batches")))
                return .proceed
            }
            return handleBatch(messages)
        }
    }

    /// Handles a batch: its responses are sent together, as an array.
    private func handleBatch(_ messages: [IncomingMessage]) -> Outcome {
        guard !messages.isEmpty else {
            writer.send(OutgoingMessage.response(id: nil, error: .invalidRequest("empty batch")))
            return .proceed
        }
        let expected = messages.filter(\.expectsResponse).count
        let batch = BatchResponse(expected: expected) { [writer] in writer.send($0) }
        var outcome = Outcome.proceed
        for message in messages {
            if case .exit = handle(message, respond: batch.add) {
                outcome = .exit
            }
        }
        return outcome
    }

    /// Handles one message; responses go to `respond`.
    private func handle(_ message: IncomingMessage, respond: @escaping @Sendable (OutgoingMessage) -> Void) -> Outcome {
        switch message {
        case .invalid(let id, let error):
            respond(OutgoingMessage.response(id: id, error: error))
        case .response(let id):
            ServerLog.debug("ignored a response (id \(id.map(String.init(describing:)) ?? "null"))")
        case .notification(let method, let params):
            return handleNotification(method, params)
        case .request(let id, let method, let params):
            handleRequest(id: id, method: method, params: params, respond: respond)
        }
        return .proceed
    }

    private func handleNotification(_ method: String, _ params: JSONValue?) -> Outcome {
        if method == served.exitNotification { return .exit }
        if !state.withLock({ $0.lifecycle.admitsNotifications }) {
            // Before `initialize`, notifications are dropped, as the LSP asks.
            ServerLog.debug("ignored notification \(method) before initialize")
            return .proceed
        }
        switch method {
        case served.cancelNotification:
            guard let id = served.cancelledID(params) else {
                ServerLog.warning("invalid \(method): no request id")
                break
            }
            if let request = state.withLock({ $0.inFlight[id] }) {
                cancel(request)
            }
        case served.progressCancelNotification:
            guard let token = params?["token"] else {
                ServerLog.warning("invalid \(method): no token")
                break
            }
            let requests = state.withLock { $0.inFlight.values.filter { $0.progressToken == token } }
            for request in requests { cancel(request) }
        default:
            if let handler = served.dispatcher.notificationHandler(for: method) {
                handler(session, params)
            } else {
                // Unknown notifications are ignored, as the LSP and MCP ask
                // (`$/` ones included).
                ServerLog.debug("ignored notification \(method)")
            }
        }
        return .proceed
    }

    private func handleRequest(
        id: RequestID, method: String, params: JSONValue?, respond: @escaping @Sendable (OutgoingMessage) -> Void
    ) {
        var params = params
        if let screen = served.screen {
            switch screen(session, id, method, params) {
            case .success(let screened):
                params = screened
            case .failure(let refusal):
                respond(OutgoingMessage.response(id: id, error: refusal))
                return
            }
        }
        // The lifecycle's verdict and the request's entry in one visit to
        // the lock, which the lane takes too when requests end.
        let handler = served.dispatcher.handler(for: method)
        let request = handler.map { _ in
            InFlightRequest(
                reply: Reply(id: id, method: method, sink: respond), progressToken: params?["workDoneToken"])
        }
        let refusal = state.withLock { state -> ResponseError? in
            if let error = state.lifecycle.admit(method) { return error }
            guard let request else { return .methodNotFound(method) }
            state.inFlight[id] = request
            state.addedSinceSweep += 1
            if state.addedSinceSweep >= Self.sweepInterval {
                state.addedSinceSweep = 0
                state.inFlight = state.inFlight.filter { !$0.value.hasEnded.load(ordering: .acquiring) }
            }
            return nil
        }
        if let refusal {
            if let request {
                request.reply(.failure(refusal))
            } else {
                respond(OutgoingMessage.response(id: id, error: refusal))
            }
            return
        }
        guard let handler, let request else { return }
        let session = self.session
        let decorate = served.decorate
        let finish: @Sendable (Dispatcher<Session>.Answer) -> Dispatcher<Session>.Answer = { answer in
            decorate?(session, method, answer) ?? answer
        }
        let work: ScheduledWork
        let (scheduling, call) = handler.call(params)
        switch call {
        case .immediate(let body):
            request.reply(finish(body(session)))
            finished(request)
            handler.afterAnswer?(session)
            return
        case .blocking(let body):
            let run: @Sendable (ScheduledWork) -> Void = { work in
                defer { self.finished(request) }
                let result = body(session, work)
                if case .failure = result, work.isCancelled {
                    request.reply(.failure(.requestCancelled))
                } else {
                    request.reply(finish(result))
                }
            }
            work =
                OrderingRule.place(of: scheduling) == .thread
                ? queue.scheduleOnThread(run) : queue.schedule(scheduling, blocking: run)
        case .async(let body):
            work = queue.schedule(scheduling) {
                defer { self.finished(request) }
                let result = await body(session)
                if case .failure = result, Task.isCancelled {
                    request.reply(.failure(.requestCancelled))
                } else {
                    request.reply(finish(result))
                }
            }
        }
        request.attach(work)
    }

    private func finished(_ request: InFlightRequest) {
        request.hasEnded.store(true, ordering: .releasing)
    }
}

extension IncomingMessage {
    /// Whether the message gets a response.
    var expectsResponse: Bool {
        switch self {
        case .request, .invalid: true
        case .notification, .response: false
        }
    }
}

extension ServedProtocol where Session == ServerSession {
    /// JSON-RPC 2.0 with the Language Server Protocol's framing, lifecycle
    /// and cancellation.
    static var jsonRPC: ServedProtocol {
        ServedProtocol(
            framing: .contentLength, dispatcher: .standard, acceptsBatches: true, lifecycle: Lifecycle(),
            exitNotification: ExitNotification.method, cancelNotification: CancelRequestNotification.method,
            cancelledID: { params in params?["id"].flatMap(RequestID.init(json:)) },
            answersCancelled: true, progressCancelNotification: WorkDoneProgressCancelNotification.method,
            close: { session in
                await session.close()
                session.language.stop()
            })
    }
}
