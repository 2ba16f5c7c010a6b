import SQLiveProtocol

/// Finds the handler of each request and notification of one protocol.
///
/// Each entry ties a message type (`RequestType`, `NotificationType`) to
/// the code that answers it and to its scheduling. Handlers receive params
/// decoded once, from the message's parsed JSON, and return a Codable
/// result, encoded when the response is written; decoding errors become
/// -32602 naming the field. A handler is `blocking` when it only needs the
/// database: it runs on the request queue's serial lane (or, scheduled
/// `.independent`, on a thread of its own), without a task or an actor hop;
/// `immediate` when it only reads the session's state: the reading thread
/// answers it before it reads the next message.
///
/// One dispatcher per protocol, over that protocol's session:
/// `Dispatcher<ServerSession>.standard` (JSON-RPC and the Language Server
/// Protocol) and `Dispatcher<MCPSession>.mcp`. To serve a new method, add
/// its type to the protocol's messages and a line to its dispatcher.
struct Dispatcher<Session: Sendable>: Sendable {
    /// Decodes a request's params and makes the call that answers it.
    struct Handler: Sendable {
        /// Decodes the params, on the reading thread, and says how the call
        /// runs; params that cannot be decoded make a call that answers
        /// their -32602 error.
        var call: @Sendable (_ params: JSONValue?) -> (Scheduling, Call)
        /// Called once the answer was handed to the writer (immediate
        /// calls only): MCP's `initialize` lets the session notify then.
        var afterAnswer: (@Sendable (Session) -> Void)?
    }

    /// A request ready to run, its params decoded.
    enum Call: Sendable {
        /// Awaits the session and the engine, as a task.
        case async(@Sendable (_ session: Session) async -> Answer)
        /// Runs on the serial lane's thread (or a thread of its own);
        /// `work` takes its interrupt.
        case blocking(@Sendable (_ session: Session, _ work: ScheduledWork) -> Answer)
        /// Answered by the reading thread at once, in message order.
        case immediate(@Sendable (_ session: Session) -> Answer)
    }

    /// A handler's answer: a result to encode, or an error.
    typealias Answer = Result<any Encodable & Sendable, ResponseError>

    private var handlers: [String: Handler] = [:]
    private var notificationHandlers: [String: @Sendable (Session, JSONValue?) -> Void] = [:]
    /// The request methods, in the order they were registered.
    private(set) var registered: [String] = []

    func handler(for method: String) -> Handler? {
        handlers[method]
    }

    func notificationHandler(for method: String) -> (@Sendable (Session, JSONValue?) -> Void)? {
        notificationHandlers[method]
    }

    /// Serves a request type with a handler that runs as a task.
    mutating func register<R: RequestType>(
        _ type: R.Type, _ scheduling: Scheduling,
        _ body: @escaping @Sendable (Session, R.Params) async throws(ResponseError) -> R.Result
    ) {
        registerRouted(type, scheduling) { params in
            .async { session in await Self.answer { () async throws(ResponseError) in try await body(session, params) }
            }
        }
    }

    /// Serves a serial request type with a handler that runs on the lane.
    mutating func registerBlocking<R: RequestType>(
        _ type: R.Type,
        _ body: @escaping @Sendable (Session, R.Params, ScheduledWork) throws(ResponseError) -> R.Result
    ) {
        registerRouted(type, .serial) { params in
            .blocking { session, work in Self.answer { () throws(ResponseError) in try body(session, params, work) } }
        }
    }

    /// Serves a request type the reading thread answers at once.
    mutating func registerImmediate<R: RequestType>(
        _ type: R.Type, _ body: @escaping @Sendable (Session, R.Params) throws(ResponseError) -> R.Result,
        afterAnswer: (@Sendable (Session) -> Void)? = nil
    ) {
        registerRouted(type, .concurrent) { params in
            .immediate { session in Self.answer { () throws(ResponseError) in try body(session, params) } }
        }
        handlers[R.method]?.afterAnswer = afterAnswer
    }

    /// Serves a request type whose params decide how it runs: `route`
    /// makes the call (blocking on the lane, or a task) from the params.
    /// Params that cannot be decoded answer their -32602 error.
    mutating func registerRouted<R: RequestType>(
        _ type: R.Type, _ scheduling: Scheduling, _ route: @escaping @Sendable (R.Params) -> Call
    ) {
        registerScheduled(type) { params in (scheduling, route(params)) }
    }

    /// Serves a request type whose params decide both its scheduling and
    /// its call (an agent's tool: at once on a thread of its own, or in
    /// order when it changes the live queries).
    mutating func registerScheduled<R: RequestType>(
        _ type: R.Type, _ route: @escaping @Sendable (R.Params) -> (Scheduling, Call)
    ) {
        if handlers[R.method] == nil { registered.append(R.method) }
        handlers[R.method] = Handler(call: { json in
            switch Self.decode(json, with: R.decodeParams(from:)) {
            case .failure(let failure):
                return (.concurrent, .immediate { _ in .failure(failure) })
            case .success(let params):
                return route(params)
            }
        })
    }

    /// Serves a notification type; params that cannot be decoded are
    /// logged (a notification gets no answer).
    mutating func registerNotification<N: NotificationType>(
        _ type: N.Type, _ body: @escaping @Sendable (Session, N.Params) -> Void
    ) {
        notificationHandlers[N.method] = { session, json in
            do {
                body(session, try JSONCoding.decode(N.Params.self, from: json ?? .object([:])))
            } catch {
                ServerLog.warning("invalid \(N.method): \(ResponseError(decoding: error).message)")
            }
        }
    }

    /// The answer of a handler: its result, or its error.
    static func answer<T: Encodable & Sendable>(_ body: () throws(ResponseError) -> T) -> Answer {
        do throws(ResponseError) {
            return .success(try body())
        } catch {
            return .failure(error)
        }
    }

    /// The answer of an async handler: its result, or its error.
    static func answer<T: Encodable & Sendable>(_ body: () async throws(ResponseError) -> T) async -> Answer {
        do throws(ResponseError) {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }

    /// A request's params, or the -32602 error naming the faulty field;
    /// absent params read as `{}`.
    private static func decode<P>(_ json: JSONValue?, with read: (JSONValue) throws -> P) -> Result<P, ResponseError> {
        do {
            return .success(try read(json ?? .object([:])))
        } catch {
            return .failure(ResponseError(decoding: error))
        }
    }
}

extension Dispatcher where Session == ServerSession {
    /// The request methods served, in registry order.
    var methods: [String] {
        MessageRegistry.requests.map { $0.method }.filter { handler(for: $0) != nil }
    }

    /// The handlers of every method of the protocol.
    static let standard: Dispatcher = {
        var dispatcher = Dispatcher()
        dispatcher.register(InitializeRequest.self, .barrier) { session, params throws(ResponseError) in
            try await session.initialize(params)
        }
        dispatcher.register(ShutdownRequest.self, .barrier) { session, _ throws(ResponseError) in
            // No more diagnostics once the client is leaving.
            session.language.stop()
            await session.close()
            return NullResult()
        }
        dispatcher.register(DatabaseOpenRequest.self, .barrier) { session, params throws(ResponseError) in
            try await session.open(path: params.path, readonly: params.readonly ?? false)
        }
        dispatcher.register(DatabaseSchemaRequest.self, .serial) { session, params throws(ResponseError) in
            try await session.schema(params)
        }
        dispatcher.registerBlocking(QueryExecuteRequest.self) { session, params, work throws(ResponseError) in
            try session.execute(params, work: work)
        }
        dispatcher.register(ExplainRequest.self, .serial) { session, params throws(ResponseError) in
            try await session.explain(params)
        }
        dispatcher.register(TraceSetRequest.self, .serial) { session, params throws(ResponseError) in
            try await session.setTrace(params)
        }
        dispatcher.register(LiveQueryRegisterRequest.self, .liveQueryChange) { session, params throws(ResponseError) in
            try await session.registerLiveQuery(params)
        }
        dispatcher.register(LiveQueryUpdateRequest.self, .liveQueryChange) { session, params throws(ResponseError) in
            try await session.updateLiveQuery(params)
        }
        dispatcher.register(LiveQueryUnregisterRequest.self, .liveQueryChange) {
            session, params throws(ResponseError) in
            try await session.unregisterLiveQuery(params)
        }
        dispatcher.register(LiveQueryPauseRequest.self, .liveQueryChange) { session, params throws(ResponseError) in
            try await session.pauseLiveQuery(params)
        }
        dispatcher.register(LiveQueryResumeRequest.self, .liveQueryChange) { session, params throws(ResponseError) in
            try await session.resumeLiveQuery(params)
        }
        dispatcher.register(LiveQueryListRequest.self, .concurrent) { session, params throws(ResponseError) in
            try await session.listLiveQueries(params)
        }
        dispatcher.register(ChangesSubscribeRequest.self, .serial) { session, params throws(ResponseError) in
            try await session.subscribeChanges(params)
        }
        dispatcher.register(ChangesUnsubscribeRequest.self, .serial) { session, params throws(ResponseError) in
            try await session.unsubscribeChanges(params)
        }
        // The language server: completion, hover and lenses read the
        // checker's own connection, so they never wait for a statement.
        dispatcher.register(CompletionRequest.self, .concurrent) { session, params throws(ResponseError) in
            try await session.language.completion(params)
        }
        dispatcher.register(HoverRequest.self, .concurrent) { session, params throws(ResponseError) in
            try await session.language.hover(params)
        }
        dispatcher.register(CodeLensRequest.self, .concurrent) { session, params throws(ResponseError) in
            try await session.language.codeLenses(params)
        }
        dispatcher.register(InlayHintRequest.self, .concurrent) { session, params throws(ResponseError) in
            try await session.language.inlayHints(params)
        }
        // Run is a statement on the lane; watch and unwatch change the
        // live queries, so the scheduling is theirs.
        dispatcher.registerRouted(ExecuteCommandRequest.self, .liveQueryChange) { params in
            switch params.command {
            case "sqlive.run":
                return .blocking { session, work in
                    answer { () throws(ResponseError) in try session.runCommand(params, work: work) }
                }
            case "sqlive.watch":
                return .async { session in
                    await answer { () async throws(ResponseError) in try await session.watchCommand(params) }
                }
            case "sqlive.unwatch":
                return .async { session in
                    await answer { () async throws(ResponseError) in try await session.unwatchCommand(params) }
                }
            case "sqlive.explain":
                return .async { session in
                    await answer { () async throws(ResponseError) in try await session.explainCommand(params) }
                }
            default:
                let commands = ExecuteCommandRequest.commands.joined(separator: ", ")
                return .async { _ in
                    .failure(
                        .invalidParams(
                            "unknown command \(params.command); the commands are \(commands)", field: "command"))
                }
            }
        }
        // The Language Server Protocol's document notifications, in
        // message order, on the reading thread.
        dispatcher.registerNotification(DidOpenTextDocumentNotification.self) { session, params in
            session.language.didOpen(params)
        }
        dispatcher.registerNotification(DidChangeTextDocumentNotification.self) { session, params in
            session.language.didChange(params)
        }
        dispatcher.registerNotification(DidCloseTextDocumentNotification.self) { session, params in
            session.language.didClose(params)
        }
        dispatcher.registerNotification(InitializedNotification.self) { _, _ in }
        return dispatcher
    }()
}
