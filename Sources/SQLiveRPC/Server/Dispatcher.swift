import SQLiveProtocol

/// Finds the handler of each request method.
///
/// Each entry ties a request type of `MessageRegistry` to the code that
/// answers it and to its scheduling. Handlers receive params decoded once,
/// from the message's parsed JSON, and return a Codable result, encoded
/// when the response is written; decoding errors become -32602 naming the
/// field. A handler is `blocking` when it only needs the database: it runs
/// on the request queue's serial lane, without a task or an actor hop.
///
/// To serve a new method (a Language Server Protocol one, say), add its
/// type to `MessageRegistry` and a line here.
struct Dispatcher: Sendable {
    /// Decodes a request's params and makes the call that answers it.
    struct Handler: Sendable {
        var scheduling: Scheduling
        /// Decodes the params, on the reading thread; params that cannot
        /// be decoded make a call that answers their -32602 error.
        var call: @Sendable (_ params: JSONValue?) -> Call
    }

    /// A request ready to run, its params decoded.
    enum Call: Sendable {
        /// Awaits the session (an actor) and the engine, as a task.
        case async(@Sendable (_ session: ServerSession) async -> Answer)
        /// Runs on the serial lane's thread; `work` takes its interrupt.
        case blocking(@Sendable (_ session: ServerSession, _ work: ScheduledWork) -> Answer)
    }

    /// A handler's answer: a result to encode, or an error.
    typealias Answer = Result<any Encodable & Sendable, ResponseError>

    private var handlers: [String: Handler] = [:]

    /// The request methods served, in registry order.
    var methods: [String] {
        MessageRegistry.requests.map { $0.method }.filter { handlers[$0] != nil }
    }

    func handler(for method: String) -> Handler? {
        handlers[method]
    }

    /// Serves a request type with a handler that runs as a task.
    mutating func register<R: RequestType>(
        _ type: R.Type, _ scheduling: Scheduling,
        _ body: @escaping @Sendable (ServerSession, R.Params) async throws(ResponseError) -> R.Result
    ) {
        registerRouted(type, scheduling) { params in
            .async { session in await Self.answer { () async throws(ResponseError) in try await body(session, params) }
            }
        }
    }

    /// Serves a serial request type with a handler that runs on the lane.
    mutating func registerBlocking<R: RequestType>(
        _ type: R.Type,
        _ body: @escaping @Sendable (ServerSession, R.Params, ScheduledWork) throws(ResponseError) -> R.Result
    ) {
        registerRouted(type, .serial) { params in
            .blocking { session, work in Self.answer { () throws(ResponseError) in try body(session, params, work) } }
        }
    }

    /// Serves a request type whose params decide how it runs: `route`
    /// makes the call (blocking on the lane, or a task) from the params.
    /// Params that cannot be decoded answer their -32602 error.
    mutating func registerRouted<R: RequestType>(
        _ type: R.Type, _ scheduling: Scheduling, _ route: @escaping @Sendable (R.Params) -> Call
    ) {
        handlers[R.method] = Handler(scheduling: scheduling) { json in
            switch Self.decode(json, with: R.decodeParams(from:)) {
            case .failure(let failure):
                return .async { _ in .failure(failure) }
            case .success(let params):
                return route(params)
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
        return dispatcher
    }()
}
