import SQLiveProtocol
import Synchronization

/// The answer to one request, which can be given only once.
///
/// Every request gets exactly one response: the first answer is sent, later
/// ones are dropped (a request cancelled while queued answers -32800 at
/// once, and its handler's answer, if it ever runs, is dropped). A reply
/// that was never given answers -32603 when it is released, so a bug can
/// never leave a client waiting.
final class Reply: Sendable {
    let id: RequestID
    let method: String
    private let sink: @Sendable (OutgoingMessage) -> Void
    // Mutable State: whether the answer was given; set once, atomically.
    private let answered = Atomic<Bool>(false)

    init(id: RequestID, method: String, sink: @escaping @Sendable (OutgoingMessage) -> Void) {
        self.id = id
        self.method = method
        self.sink = sink
    }

    /// Answers, unless an answer was given already.
    ///
    /// - returns: Whether this answer was sent.
    @discardableResult
    func callAsFunction(_ result: Result<any Encodable & Sendable, ResponseError>) -> Bool {
        guard answered.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return false }
        sink(OutgoingMessage.response(id: id, result))
        return true
    }

    /// Never answers: the protocol asks that a cancelled request be left
    /// unanswered (MCP). Later answers are dropped.
    func withhold() {
        answered.store(true, ordering: .releasing)
    }

    var isAnswered: Bool {
        answered.load(ordering: .acquiring)
    }

    deinit {
        if !isAnswered {
            ServerLog.warning("request \(id) (\(method)) was never answered")
            sink(OutgoingMessage.response(id: id, error: .internalError("the request was dropped")))
        }
    }
}
