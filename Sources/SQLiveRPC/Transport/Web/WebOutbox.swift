import SQLiveLocks
import SQLiveProtocol

/// What waits to be sent to one tab, bounded: a tab that reads slower than
/// its live queries change costs at most `limit` bytes, not a queue that
/// grows with every commit.
///
/// Live updates are level-triggered: a `liveQuery/changed` that carries
/// the query's whole result (no `diff`, no `changes`) replaces one for the
/// same query still waiting to be sent (the new one goes to the end), so a
/// slow tab gets each query's latest state and never a stale one after
/// it. Everything else (responses, errors, notifications that carry a
/// diff) is kept in order. When what waits still passes `limit`, `push`
/// says so and the owner closes the WebSocket.
final class WebOutbox: Sendable {
    /// One message waiting, and the live query it replaces, if it may.
    private struct Entry {
        var bytes: [UInt8]
        var liveQuery: String?
    }

    // Mutable State: guarded by the mutex; the session's reading thread
    // pushes, the sending task takes.
    private struct State {
        var entries: [Entry] = []
        var head = 0
        var bytes = 0
        var waiter: CheckedContinuation<[UInt8]?, Never>?
        var finished = false
        var overflowed = false
    }
    private let state = Locked(State())
    let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    /// Whether what waited went over the limit: the outbox then finished,
    /// dropping it all.
    var overflowed: Bool { state.withLock { $0.overflowed } }

    /// Adds a message; false when what waits went over the limit (the tab
    /// is too far behind): then what waited is dropped, and `next` returns
    /// nil.
    func push(_ bytes: [UInt8]) -> Bool {
        // Parsed only when a backlog exists: a tab that keeps up costs
        // nothing more.
        let backlog = state.withLock { $0.entries.count > $0.head }
        let name = backlog ? Self.replaceableLiveQuery(bytes) : nil
        let (waiter, fits) = state.withLock { state -> (CheckedContinuation<[UInt8]?, Never>?, Bool) in
            guard !state.finished else { return (nil, true) }
            if let waiter = state.waiter {
                state.waiter = nil
                return (waiter, true)
            }
            if let name,
                let index = state.entries[state.head...].firstIndex(where: { $0.liveQuery == name })
            {
                state.bytes -= state.entries[index].bytes.count
                state.entries.remove(at: index)
            }
            guard state.bytes + bytes.count <= limit else {
                state.finished = true
                state.overflowed = true
                state.entries = []
                state.head = 0
                state.bytes = 0
                return (nil, false)
            }
            state.entries.append(Entry(bytes: bytes, liveQuery: name))
            state.bytes += bytes.count
            return (nil, true)
        }
        waiter?.resume(returning: bytes)
        return fits
    }

    /// The next message to send; nil once finished and empty.
    func next() async -> [UInt8]? {
        await withCheckedContinuation { (continuation: CheckedContinuation<[UInt8]?, Never>) in
            let ready = state.withLock { state -> [UInt8]?? in
                if state.head < state.entries.count {
                    let entry = state.entries[state.head]
                    state.head += 1
                    state.bytes -= entry.bytes.count
                    if state.head == state.entries.count {
                        state.entries = []
                        state.head = 0
                    } else if state.head > 64, state.head * 2 > state.entries.count {
                        state.entries.removeFirst(state.head)
                        state.head = 0
                    }
                    return .some(entry.bytes)
                }
                if state.finished { return .some(nil) }
                state.waiter = continuation
                return .none
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// No more messages: `next` returns what waits, then nil.
    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<[UInt8]?, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// The live query a message updates in full (`liveQuery/changed` with
    /// its rows, no diff, no changes), or nil.
    static func replaceableLiveQuery(_ bytes: [UInt8]) -> String? {
        guard bytes.firstRange(of: Array("liveQuery/changed".utf8)) != nil,
            let message = try? JSONCoding.decode(JSONValue.self, from: bytes),
            message["method"]?.stringValue == "liveQuery/changed", let params = message["params"],
            params["rows"] != nil, params["diff"] == nil, params["changes"] == nil
        else { return nil }
        return params["name"]?.stringValue
    }
}
