import Foundation
import SQLiveProtocol
import SQLiveRPC
import SQLiveTestSupport
import Testing

/// Malformed and mutated messages never end the server.
@Suite("Fuzzing", .timeLimit(.minutes(3)))
struct FuzzTests {
    /// Valid messages to start from; none of them ends the session or
    /// touches files.
    static let templates: [JSONValue] = [
        ["jsonrpc": "2.0", "id": 1, "method": "query/execute", "params": ["sql": "SELECT 1, 'a', x'00', NULL, 2.5"]],
        ["jsonrpc": "2.0", "id": "s", "method": "query/execute", "params": ["sql": "SELECT ?", "params": [1]]],
        ["jsonrpc": "2.0", "id": 2, "method": "query/execute", "params": ["sql": "SELECT :a", "params": ["a": 2]]],
        ["jsonrpc": "2.0", "id": 3, "method": "liveQuery/list"],
        ["jsonrpc": "2.0", "id": 4, "method": "database/schema", "params": [:]],
        ["jsonrpc": "2.0", "id": 5, "method": "explain", "params": ["sql": "SELECT * FROM t", "bytecode": true]],
        ["jsonrpc": "2.0", "id": 6, "method": "liveQuery/pause", "params": ["name": "nope"]],
        ["jsonrpc": "2.0", "id": 7, "method": "trace/set", "params": ["enabled": false]],
        ["jsonrpc": "2.0", "method": "$/cancelRequest", "params": ["id": 1]],
        [["jsonrpc": "2.0", "id": 8, "method": "liveQuery/list"], ["jsonrpc": "2.0", "method": "x"]],
        ["jsonrpc": "2.0", "id": 9, "result": ["ok": true]],
    ]

    /// Bytes that tend to break parsers.
    static let nasty: [[UInt8]] = [
        Array("\r\n\r\n".utf8), Array("Content-Length: ".utf8), Array("Content-Length: 5\r\n\r\n".utf8),
        [0xFF], [0xC3], [0xED, 0xA0, 0x80], [0], Array("\\u".utf8), Array("\"".utf8), Array("{".utf8),
        Array("[".utf8), Array("}".utf8), Array("]".utf8), Array("-".utf8), Array("1e999999".utf8),
        Array("null".utf8), Array(",".utf8), Array(":".utf8), Array("exit".utf8), Array("\u{FEFF}".utf8),
    ]

    /// Methods that must not appear in a mutated message: they end the
    /// session or touch files.
    static let forbidden = ["exit", "shutdown", "database/open", "initialize"]

    /// One mutated message, framed (or deliberately badly framed).
    static func mutated(_ random: inout SeededRandom) throws -> [UInt8] {
        let template = templates[Int(random.next() % UInt64(templates.count))]
        var content = try JSONCoding.encode(mutatedValue(template, &random, depth: 0))
        let contentMutations = Int(random.next() % 4)
        for _ in 0..<contentMutations where !content.isEmpty {
            let position = Int(random.next() % UInt64(content.count))
            switch random.next() % 5 {
            case 0: content[position] = UInt8(truncatingIfNeeded: random.next())
            case 1: content.remove(at: position)
            case 2: content.insert(contentsOf: nasty[Int(random.next() % UInt64(nasty.count))], at: position)
            case 3: content.removeSubrange(position...)
            default: content.insert(UInt8(truncatingIfNeeded: random.next()), at: position)
            }
        }
        // A mutation may spell a forbidden method; leave such messages out.
        let text = String(decoding: content, as: UTF8.self)
        if forbidden.contains(where: { text.contains("\"\($0)\"") }) {
            content = Array("{}".utf8)
        }
        switch random.next() % 10 {
        case 0:
            // A length that lies.
            let length = max(0, content.count + Int(random.next() % 21) - 10)
            return Array("Content-Length: \(length)\r\n\r\n".utf8) + content
        case 1:
            let headers = [
                "Content-Length: x", "Content-Length:", "Content-Length: -5", "content-length: 1e3",
                "Content-Length: 99999999999999999999", "Content-Type: text/plain", "X: y",
            ]
            return Array("\(headers[Int(random.next() % UInt64(headers.count))])\r\n\r\n".utf8) + content
        case 2:
            return content  // no header at all
        case 3:
            return Array("Content-Type: application/json\r\nContent-Length: \(content.count)\r\n\r\n".utf8) + content
        default:
            return MessageFraming.frame(content)
        }
    }

    /// The value with some parts replaced by values of other kinds.
    static func mutatedValue(_ value: JSONValue, _ random: inout SeededRandom, depth: Int) -> JSONValue {
        if random.next() % 12 == 0 {
            let replacements: [JSONValue] = [
                nil, true, 0, -1, .integer(Int64.max), .double(1e308), "", "x", [], [:], [[[]]], ["$blob": "!!"],
                .string(String(repeating: "a", count: 300)),
            ]
            return replacements[Int(random.next() % UInt64(replacements.count))]
        }
        switch value {
        case .object(var members):
            for key in members.keys.sorted() where random.next() % 6 == 0 {
                members[key] = nil
            }
            for (key, member) in members {
                members[key] = mutatedValue(member, &random, depth: depth + 1)
            }
            return .object(members)
        case .array(let elements):
            return .array(elements.map { mutatedValue($0, &random, depth: depth + 1) })
        default:
            return value
        }
    }

    @Test func tenThousandMalformedMessagesDoNotEndTheServer() async throws {
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.started(database: "db.sqlite", directory: directory.url, binary: true)
        _ = try await server.result("query/execute", ["sql": "CREATE TABLE t(a)"])

        var random = SeededRandom(seed: 0x5EED_2026)
        var stream: [UInt8] = []
        for _ in 0..<10_000 {
            stream += try Self.mutated(&random)
            if stream.count > 256 << 10 {
                server.sendRaw(stream)
                stream = []
            }
        }
        server.sendRaw(stream)

        // Whatever state the fuzz left the framing in, the next valid
        // request is read and answered.
        let id = server.sendRequest("query/execute", ["sql": "SELECT 'still here'"], id: .string("final"))
        let response = try await server.response(to: id)
        #expect(response["result"]?["results"]?[0]?["rows"] == [["still here"]])
        #expect(server.process.isRunning)
        // Every response is well formed: an id, and a result or an error, not both.
        var codes: Set<Int64> = []
        var results = 0
        for message in server.messages {
            for response in message.arrayValue ?? [message] where response["method"] == nil {
                #expect(response["jsonrpc"] == "2.0")
                #expect(response["id"] != nil)
                #expect((response["result"] == nil) != (response["error"] == nil))
                if let code = response["error"]?["code"]?.integerValue { codes.insert(code) }
                if response["result"] != nil { results += 1 }
            }
        }
        // The fuzz reached every layer: framing, JSON, envelope, params, SQL.
        #expect(codes.isSuperset(of: [-32700, -32600, -32601, -32602, -32001, -32011]), "\(codes.sorted())")
        #expect(results > 100)
        _ = try await server.result("shutdown")
        server.notify("exit")
        #expect(try await server.waitForExit() == 0)
    }
}
