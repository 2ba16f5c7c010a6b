import Foundation
import SQLiveEngine
import SQLiveProtocol

/// One open `subscriptions/listen` of the stateless era.
struct Listener: Sendable {
    /// The listen request's id: every frame of it carries it in `_meta`.
    var id: JSONValue
    /// What the server honours of what the client asked.
    var filter: MCPSubscriptionsListenRequest.Filter
    /// Finished to end the listen with its result (the session ends).
    var end: AsyncStream<Void>.Continuation

    func wants(_ uri: String) -> Bool {
        filter.resourceSubscriptions?.contains(uri) == true
    }

    /// The `_meta` of a frame of the listen `id`.
    static func stamp(_ id: JSONValue) -> JSONValue {
        .object([MCPProtocol.Meta.subscriptionID: id])
    }
}

extension MCPSession {
    /// How many listens one session may hold open; one more is refused
    /// (-32603) before its acknowledgement.
    static let maximumListens = 64

    /// The results the stateless era lets a client cache (sqlive's are live:
    /// `ttlMs` 0).
    static let cacheableMethods: Set<String> = [
        MCPProtocol.Method.toolsList, MCPProtocol.Method.resourcesList, MCPProtocol.Method.resourceTemplatesList,
        MCPProtocol.Method.resourcesRead,
    ]

    /// The connection's screening of each request (`MCPEra`).
    func screen(id: RequestID, method: String, params: JSONValue?) -> Result<JSONValue?, ResponseError> {
        let screening = state.withLock { state -> MCPEra.Screening in
            let screening = state.era.screen(id: id, method: method, params: params)
            // The stateless era has no handshake: its session notifies at once.
            if state.era.isModern { state.initialized = true }
            return screening
        }
        switch screening {
        case .proceed(let params): return .success(params)
        case .refuse(let error): return .failure(error)
        }
    }

    var isModern: Bool { state.withLock { $0.era.isModern } }

    /// The stateless era's stamps on every answer: `resultType`, the
    /// server's identity in `_meta`, and `ttlMs: 0` on what a client may
    /// cache; a resource that does not exist is -32602 there (-32002 is
    /// retired).
    func decorate(method: String, _ answer: Dispatcher<MCPSession>.Answer) -> Dispatcher<MCPSession>.Answer {
        guard isModern else { return answer }
        switch answer {
        case .failure(var error):
            if error.code.rawValue == MCPProtocol.resourceNotFound { error.code = .invalidParams }
            return .failure(error)
        case .success(let value):
            guard var members = (try? JSONCoding.jsonValue(of: value))?.objectValue else {
                return .failure(.internalError("a result is not an object"))
            }
            members["resultType"] = members["resultType"] ?? "complete"
            var meta = members["_meta"]?.objectValue ?? [:]
            meta[MCPProtocol.Meta.serverInfo] = Self.serverInfo
            members["_meta"] = .object(meta)
            if Self.cacheableMethods.contains(method) {
                members["ttlMs"] = members["ttlMs"] ?? 0
                members["cacheScope"] = members["cacheScope"] ?? "private"
            }
            return .success(JSONValue.object(members))
        }
    }

    static var serverInfo: JSONValue {
        ["name": "sqlive", "title": "sqlive: live SQLite queries", "version": .string(SQLiveVersion.current)]
    }

    /// What the server can do, in both eras.
    static var capabilities: JSONValue {
        [
            "tools": ["listChanged": false],
            "resources": ["subscribe": true, "listChanged": true],
        ]
    }

    /// `server/discover`.
    var discoverResult: JSONValue {
        [
            "supportedVersions": .array(MCPProtocol.modernVersions.map { .string($0) }),
            "capabilities": Self.capabilities,
            "instructions": .string(instructions),
            "ttlMs": 0, "cacheScope": "private",
        ]
    }

    /// `subscriptions/listen`: acknowledges what it honours, then lasts
    /// until the client cancels it (no answer then), the input ends or the
    /// session closes (its result then).
    func listen(_ params: MCPSubscriptionsListenRequest.Params) async throws(ResponseError) -> JSONValue {
        guard let id = params._meta?[MCPProtocol.Meta.subscriptionID] else {
            throw .internalError("a listen without its id")
        }
        let asked = params.notifications ?? .init()
        // Honoured: the schema and live queries' URIs (a live query may be
        // watched after the listen began), and the resource list.
        let resources = (asked.resourceSubscriptions ?? []).filter {
            $0 == MCPProtocol.schemaURI || MCPProtocol.liveName(of: $0) != nil
        }
        let honoured = MCPSubscriptionsListenRequest.Filter(
            resourceSubscriptions: resources.isEmpty ? nil : resources,
            resourcesListChanged: asked.resourcesListChanged == true ? true : nil)
        let (ended, end) = AsyncStream<Void>.makeStream()
        let key = try state.withLock { state throws(ResponseError) -> Int in
            guard !state.closed else { throw ResponseError.internalError("the session is closing") }
            guard state.listeners.count < Self.maximumListens else {
                throw ResponseError.internalError(
                    "too many listens open at once (\(Self.maximumListens)); end one first")
            }
            let key = state.nextListener
            state.nextListener += 1
            state.listeners[key] = Listener(id: id, filter: honoured, end: end)
            // Sent under the lock: no event of this listen precedes it.
            var acknowledged = (try? JSONCoding.jsonValue(of: honoured))?.objectValue ?? [:]
            acknowledged = acknowledged.filter { $0.value != .null }
            writer.send(
                OutgoingMessage.notification(
                    method: MCPProtocol.Notification.subscriptionsAcknowledged,
                    params: JSONValue.object(["notifications": .object(acknowledged), "_meta": Listener.stamp(id)])))
            return key
        }
        // Ends when the session ends it, or when the task is cancelled.
        for await _ in ended {}
        state.withLock { _ = $0.listeners.removeValue(forKey: key) }
        return ["_meta": Listener.stamp(id)]
    }

    /// The input ended: every listen ends with its result.
    func inputEnded() {
        state.withLock { state in
            for listener in state.listeners.values { listener.end.finish() }
        }
    }
}
