import SQLiveProtocol
import Testing

@testable import SQLiveRPC

/// The bounded outbox of a tab (`WebOutbox`): while messages wait, a
/// live query's full update replaces its earlier one still waiting (the
/// new one last); responses and updates with a diff stay, in order; past
/// the limit, everything waiting is dropped and the outbox ends.
@Suite("A tab's outbox")
struct WebOutboxTests {
    static func changed(_ name: String, _ value: Int, diff: Bool = false) -> [UInt8] {
        var params: JSONValue = [
            "name": .string(name), "version": .integer(Int64(value)), "rows": [[.integer(Int64(value))]],
        ]
        if diff, case .object(var object) = params {
            object["diff"] = ["added": [], "removed": []]
            params = .object(object)
        }
        return try! JSONCoding.encode(["jsonrpc": "2.0", "method": "liveQuery/changed", "params": params] as JSONValue)
    }

    static func response(_ id: Int) -> [UInt8] {
        try! JSONCoding.encode(["jsonrpc": "2.0", "id": .integer(Int64(id)), "result": [:]] as JSONValue)
    }

    @Test func latestStateReplacesWaitingOnes() async {
        let outbox = WebOutbox(limit: 1 << 20)
        #expect(outbox.push(Self.changed("a", 1)))  // the head: about to be sent
        #expect(outbox.push(Self.changed("a", 2)))
        #expect(outbox.push(Self.response(7)))
        #expect(outbox.push(Self.changed("b", 1)))
        #expect(outbox.push(Self.changed("a", 3)))  // replaces a2
        #expect(outbox.push(Self.changed("c", 1, diff: true)))
        #expect(outbox.push(Self.changed("c", 2, diff: true)))  // a diff: both stay
        #expect(outbox.push(Self.changed("b", 2)))  // replaces b1
        outbox.finish()
        var sent: [[UInt8]] = []
        while let next = await outbox.next() { sent.append(next) }
        #expect(
            sent == [
                Self.changed("a", 1), Self.response(7), Self.changed("a", 3), Self.changed("c", 1, diff: true),
                Self.changed("c", 2, diff: true), Self.changed("b", 2),
            ])
    }

    @Test func pastTheLimitItEnds() async {
        let outbox = WebOutbox(limit: 200)
        var pushed = 0
        while outbox.push(Self.response(pushed)) { pushed += 1 }
        #expect(pushed > 1 && outbox.overflowed)
        #expect(await outbox.next() == nil)
    }

    @Test func aWaitingSenderGetsTheNextAtOnce() async {
        let outbox = WebOutbox(limit: 1 << 20)
        async let first = outbox.next()
        // Pushed until the waiting sender takes one (it may not wait yet).
        var id = 0
        while outbox.push(Self.response(id)), id < 3 { id += 1 }
        #expect(await first == Self.response(0))
    }
}
