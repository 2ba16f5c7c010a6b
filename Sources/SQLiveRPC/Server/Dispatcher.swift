/// Finds the handler of each request method.
///
/// Each entry ties a request type of `MessageRegistry` to the code that
/// answers it and to its scheduling. Handlers receive params decoded by
/// Foundation's `JSONDecoder` and return a Codable result, encoded when the
/// response is written; decoding errors become -32602 naming the field.
///
/// To serve a new method (a Language Server Protocol one, say), add its
/// type to `MessageRegistry` and a line here.
struct Dispatcher: Sendable {
    /// Runs a request: decodes params, calls the handler, returns its result.
    struct Handler: Sendable {
        var scheduling: Scheduling
        var run: @Sendable (_ params: JSONValue?, _ session: Session) async -> Answer
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

    /// Serves a request type with a handler.
    mutating func register<R: RequestType>(
        _ type: R.Type, _ scheduling: Scheduling,
        _ body: @escaping @Sendable (Session, R.Params) async throws(ResponseError) -> R.Result
    ) {
        handlers[R.method] = Handler(scheduling: scheduling) { json, session in
            let params: R.Params
            do {
                params = try JSONCoding.decode(R.Params.self, from: json ?? .object([:]))
            } catch {
                return .failure(ResponseError(decoding: error))
            }
            do throws(ResponseError) {
                return .success(try await body(session, params))
            } catch {
                return .failure(error)
            }
        }
    }

    /// The handlers of every method of the protocol.
    static let standard: Dispatcher = {
        var dispatcher = Dispatcher()
        dispatcher.register(InitializeRequest.self, .barrier) { session, params throws(ResponseError) in
            try await session.initialize(params)
        }
        dispatcher.register(ShutdownRequest.self, .barrier) { session, _ throws(ResponseError) in
            await session.close()
            return NullResult()
        }
        dispatcher.register(DatabaseOpenRequest.self, .barrier) { session, params throws(ResponseError) in
            try await session.open(path: params.path, readonly: params.readonly ?? false)
        }
        dispatcher.register(DatabaseSchemaRequest.self, .serial) { session, params throws(ResponseError) in
            try await session.schema(params)
        }
        dispatcher.register(QueryExecuteRequest.self, .serial) { session, params throws(ResponseError) in
            try await session.execute(params)
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
        return dispatcher
    }()
}
