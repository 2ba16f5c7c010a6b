import Foundation
import SQLiveEngine
import SQLiveLocks
import SQLiveProtocol

/// Reads an MCP client's messages, one per line, and answers them.
///
/// As for `--rpc`, a thread of the connection's own reads the input and
/// never waits for a request: `notifications/cancelled` is seen at once,
/// and interrupts the statement it names. Tool calls that read (`query`,
/// `explain`, `schema`) each run on a thread of their own, with a confined
/// reader of their own from the session's pool, so that one statement
/// running to its time limit holds back no other call; `watch` and
/// `unwatch` run one after the other on the request queue's lane, and
/// resource reads wait for those before them. The rest is answered by the
/// reading thread itself.
final class MCPConnection: Sendable {
    let writer: MessageWriter
    let session: MCPSession
    let queue = RequestQueue()
    let maximumMessageLength: Int

    // Mutable State: the requests in flight, by id, guarded by the mutex;
    // added by the reading thread, removed by whoever answers them. A
    // cancelled request is never answered (MCP asks so).
    private struct InFlight {
        var work: ScheduledWork?
        var cancelled = false
    }
    private let inFlight = Locked<[RequestID: InFlight]>([:])

    init(writer: MessageWriter, session: MCPSession, maximumMessageLength: Int) {
        self.writer = writer
        self.session = session
        self.maximumMessageLength = maximumMessageLength
    }

    /// Serves the input until it ends; the requests read are answered, for
    /// at most 10 s more, then cancelled.
    func run(input fileDescriptor: Int32) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let thread = Thread { [self] in
                read(fileDescriptor)
                continuation.resume()
            }
            thread.name = "sqlive.mcp.reader"
            thread.start()
        }
        if await !queue.waitForAll(timeout: .seconds(10)) {
            let works = inFlight.withLock { $0.values.compactMap(\.work) }
            for work in works { _ = work.cancel() }
            _ = await queue.waitForAll(timeout: .seconds(2))
        }
        queue.stop()
    }

    private func read(_ fileDescriptor: Int32) {
        var framer = LineFramer(maximumLength: maximumMessageLength)
        _ = StandardIO.read(fileDescriptor) { chunk in
            framer.append(chunk)
            while let event = framer.next() { handle(event) }
            return true
        }
    }

    func handle(_ event: LineFramer.Event) {
        switch event {
        case .tooLong(let length):
            ServerLog.warning("skipped a message of \(length) bytes, longer than \(maximumMessageLength)")
            writer.send(
                OutgoingMessage.response(
                    id: nil,
                    error: .invalidRequest("the message is \(length) bytes long, more than \(maximumMessageLength)")))
        case .message(let content):
            ServerLog.debug("--> \(String(decoding: content, as: UTF8.self))")
            let incoming: IncomingContent
            do throws(ResponseError) {
                incoming = try IncomingContent.decode(content)
            } catch {
                writer.send(OutgoingMessage.response(id: nil, error: error))
                return
            }
            switch incoming {
            case .message(let message):
                handle(message)
            case .batch:
                // JSON-RPC batches left MCP in 2025-06-18.
                writer.send(
                    OutgoingMessage.response(id: nil, error: .invalidRequest("MCP does not take JSON-RPC batches")))
            }
        }
    }

    private func handle(_ message: IncomingMessage) {
        switch message {
        case .invalid(let id, let error):
            writer.send(OutgoingMessage.response(id: id, error: error))
        case .response:
            break  // The server asks nothing of the client.
        case .notification(let method, let params):
            handleNotification(method, params)
        case .request(let id, let method, let params):
            handleRequest(id: id, method: method, params: params)
        }
    }

    private func handleNotification(_ method: String, _ params: JSONValue?) {
        switch method {
        case MCPProtocol.Notification.initialized:
            session.didInitialize()
        case MCPProtocol.Notification.cancelled:
            guard let id = params?["requestId"].flatMap(RequestID.init(json:)) else { return }
            let work = inFlight.withLock { requests -> ScheduledWork? in
                guard requests[id] != nil else { return nil }
                requests[id]?.cancelled = true
                return requests[id]?.work
            }
            if work?.cancel() == .beforeStart {
                inFlight.withLock { _ = $0.removeValue(forKey: id) }
            }
        default:
            ServerLog.debug("ignored notification \(method)")
        }
    }

    private func handleRequest(id: RequestID, method: String, params: JSONValue?) {
        typealias M = MCPProtocol.Method
        switch method {
        case M.initialize:
            // Answered here, so that notifications never precede it.
            respond(id, .success(initializeResult(params)))
            session.didInitialize()
        case M.ping:
            respond(id, .success(.object([:])))
        case M.toolsList:
            respond(id, .success(["tools": session.toolList]))
        case M.resourcesList:
            respond(id, .success(["resources": .array(session.resourceList)]))
        case M.resourceTemplatesList:
            respond(id, .success(["resourceTemplates": .array(session.resourceTemplates)]))
        case M.resourcesSubscribe, M.resourcesUnsubscribe:
            guard let uri = params?["uri"]?.stringValue else {
                respond(id, .failure(.invalidParams("a resource URI is needed", field: "uri")))
                return
            }
            do throws(ResponseError) {
                if method == M.resourcesSubscribe {
                    try session.subscribe(uri)
                } else {
                    session.unsubscribe(uri)
                }
                respond(id, .success(.object([:])))
            } catch {
                respond(id, .failure(error))
            }
        case M.toolsCall:
            let session = self.session
            track(id)
            let call: @Sendable (ScheduledWork) -> Void = { work in
                let result = Result { () throws(ResponseError) in try session.callTool(params, work: work) }
                self.finish(id, result)
            }
            // A tool that reads runs on a thread and a confined reader of its
            // own: a runaway statement holds back none of the agent's other
            // calls. `watch` and `unwatch` change the live queries, in order.
            let work =
                MCPToolCatalog.changesLiveQueries(params?["name"]?.stringValue)
                ? queue.schedule(.liveQueryChange, blocking: call) : queue.scheduleOnThread(call)
            attach(work, to: id)
        case M.resourcesRead:
            let session = self.session
            track(id)
            let work = queue.schedule(.concurrent) {
                do throws(ResponseError) {
                    self.finish(id, .success(try await session.read(params)))
                } catch {
                    self.finish(id, .failure(error))
                }
            }
            attach(work, to: id)
        default:
            respond(id, .failure(.methodNotFound(method)))
        }
    }

    private func initializeResult(_ params: JSONValue?) -> JSONValue {
        let version = MCPProtocol.negotiate(params?["protocolVersion"]?.stringValue)
        return [
            "protocolVersion": .string(version),
            "capabilities": [
                "tools": ["listChanged": false],
                "resources": ["subscribe": true, "listChanged": true],
            ],
            "serverInfo": [
                "name": "sqlive", "title": "sqlive: live SQLite queries", "version": .string(SQLiveVersion.current),
            ],
            "instructions": .string(session.instructions),
        ]
    }

    private func respond(_ id: RequestID, _ result: Result<JSONValue, ResponseError>) {
        switch result {
        case .success(let value): writer.send(OutgoingMessage.response(id: id, result: value))
        case .failure(let error): writer.send(OutgoingMessage.response(id: id, error: error))
        }
    }

    private func track(_ id: RequestID) {
        inFlight.withLock { $0[id] = InFlight() }
    }

    private func attach(_ work: ScheduledWork, to id: RequestID) {
        let cancelled = inFlight.withLock { requests -> Bool in
            requests[id]?.work = work
            return requests[id]?.cancelled ?? false
        }
        if cancelled { _ = work.cancel() }
    }

    /// Answers a request, unless it was cancelled.
    private func finish(_ id: RequestID, _ result: Result<JSONValue, ResponseError>) {
        let entry = inFlight.withLock { $0.removeValue(forKey: id) }
        guard entry?.cancelled != true else { return }
        respond(id, result)
    }
}
