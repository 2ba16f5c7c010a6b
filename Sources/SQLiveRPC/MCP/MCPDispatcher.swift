import Foundation
import SQLiveEngine
import SQLiveProtocol

extension Dispatcher where Session == MCPSession {
    /// The Model Context Protocol's methods, over an MCP session.
    ///
    /// Both eras' methods: `MCPEra` refuses those of the other era.
    /// `initialize`, `ping` and the lists only read the session's own
    /// tables: the reading thread answers them at once, in message order,
    /// so no notification precedes the answer to `initialize`. The
    /// subscriptions wait for the `watch` calls before them. A tool that reads (`query`, `explain`, `schema`) runs
    /// on a thread of its own, with a confined reader of its own from the
    /// session's pool, so that one statement running to its time limit
    /// holds back none of the agent's other calls; `watch` and `unwatch`
    /// change the live queries, one after the other on the request queue's
    /// lane, and a resource read waits for those before it.
    static let mcp: Dispatcher = {
        var dispatcher = Dispatcher()
        dispatcher.registerImmediate(
            MCPInitializeRequest.self, { session, params in session.initializeResult(params) },
            // After the answer is sent: no notification precedes it.
            afterAnswer: { session in session.didInitialize() })
        dispatcher.registerImmediate(MCPPingRequest.self) { _, _ in EmptyResult() }
        dispatcher.registerImmediate(MCPToolsListRequest.self) { session, _ in
            MCPToolsListRequest.Result(tools: session.toolList)
        }
        dispatcher.registerScheduled(MCPToolsCallRequest.self) { params in
            let call = Call.blocking { session, work in
                answer { () throws(ResponseError) in try session.callTool(params, work: work) }
            }
            return (MCPToolCatalog.changesLiveQueries(params.name) ? .liveQueryChange : .independent, call)
        }
        dispatcher.register(MCPResourcesListRequest.self, .concurrent) { session, _ in
            MCPResourcesListRequest.Result(resources: session.resourceList)
        }
        dispatcher.registerImmediate(MCPResourceTemplatesListRequest.self) { session, _ in
            MCPResourceTemplatesListRequest.Result(resourceTemplates: session.resourceTemplates)
        }
        dispatcher.register(MCPResourcesReadRequest.self, .concurrent) { session, params throws(ResponseError) in
            try await session.read(params)
        }
        // After the `watch` calls before them: a pipelined subscribe finds
        // the live query its `watch` made.
        dispatcher.register(MCPResourcesSubscribeRequest.self, .concurrent) { session, params throws(ResponseError) in
            try session.subscribe(params.uri)
            return EmptyResult()
        }
        dispatcher.register(MCPResourcesUnsubscribeRequest.self, .concurrent) { session, params in
            session.unsubscribe(params.uri)
            return EmptyResult()
        }
        // The stateless era's (`MCPEra` refuses them in the other).
        dispatcher.registerImmediate(MCPServerDiscoverRequest.self) { session, _ in session.discoverResult }
        dispatcher.register(MCPSubscriptionsListenRequest.self, .concurrent) { session, params throws(ResponseError) in
            try await session.listen(params)
        }
        dispatcher.registerNotification(MCPInitializedNotification.self) { session, _ in
            session.didInitialize()
        }
        return dispatcher
    }()
}

extension ServedProtocol where Session == MCPSession {
    /// MCP's stdio transport: one message per line, no batches, no
    /// lifecycle rules (the input's end ends the session), and a cancelled
    /// request is never answered.
    static var mcp: ServedProtocol {
        ServedProtocol(
            framing: .newline, dispatcher: .mcp, acceptsBatches: false, lifecycle: .open, exitNotification: nil,
            cancelNotification: MCPCancelledNotification.method,
            cancelledID: { params in params?["requestId"].flatMap(RequestID.init(json:)) },
            answersCancelled: false, progressCancelNotification: nil,
            close: { session in await session.close() },
            screen: { session, id, method, params in session.screen(id: id, method: method, params: params) },
            decorate: { session, method, answer in session.decorate(method: method, answer) },
            endOfInput: { session in session.inputEnded() })
    }
}

extension MCPSession {
    /// What `initialize` answers (the session may notify once it is sent).
    func initializeResult(_ params: MCPInitializeRequest.Params) -> JSONValue {
        let version = MCPProtocol.negotiate(params.protocolVersion)
        return [
            "protocolVersion": .string(version),
            "capabilities": Self.capabilities,
            "serverInfo": Self.serverInfo,
            "instructions": .string(instructions),
        ]
    }
}
