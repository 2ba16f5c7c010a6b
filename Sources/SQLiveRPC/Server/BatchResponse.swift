import SQLiveLocks
import SQLiveProtocol

/// Collects the responses to a batch, and sends them as one array.
///
/// JSON-RPC answers a batch with an array of the responses to its requests,
/// in any order, once all are known; notifications in it get none, and a
/// batch of notifications only gets no answer at all.
final class BatchResponse: Sendable {
    private let expected: Int
    private let send: @Sendable (OutgoingMessage) -> Void
    // Mutable State: the responses received so far; guarded by the mutex.
    private let responses = Locked<[OutgoingMessage]>([])

    init(expected: Int, send: @escaping @Sendable (OutgoingMessage) -> Void) {
        self.expected = expected
        self.send = send
    }

    /// Adds one response; the last one sends the array.
    func add(_ response: OutgoingMessage) {
        let complete: [OutgoingMessage]? = responses.withLock { responses in
            responses.append(response)
            return responses.count == expected ? responses : nil
        }
        if let complete { send(.batch(complete)) }
    }
}
