import SQLiveProtocol
import Testing

@testable import SQLiveRPC

/// The era of an MCP session, decided by its first request (`MCPEra`): a
/// pure value, request by request.
@Suite("MCP eras")
struct MCPEraTests {
    static let envelope: JSONValue = [
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": [:],
    ]

    static func stamped(_ more: [String: JSONValue] = [:]) -> JSONValue {
        var members = more
        members["_meta"] = envelope
        return .object(members)
    }

    func code(_ screening: MCPEra.Screening) -> Int? {
        if case .refuse(let error) = screening { return error.code.rawValue }
        return nil
    }

    @Test func initializeFirstIsTheHandshakeEra() {
        var era = MCPEra()
        #expect(era.screen(id: .number(1), method: "initialize", params: [:]) == .proceed([:]))
        #expect(era.kind == .handshake)
        #expect(code(era.screen(id: .number(2), method: "server/discover", params: nil)) == -32601)
        #expect(code(era.screen(id: .number(3), method: "subscriptions/listen", params: Self.stamped())) == -32601)
        #expect(code(era.screen(id: .number(4), method: "tools/list", params: Self.stamped())) == -32600)
        #expect(era.screen(id: .number(5), method: "ping", params: nil) == .proceed(nil))
        // A progress token alone in _meta is not the envelope.
        let progress: JSONValue = ["_meta": ["progressToken": 7]]
        #expect(era.screen(id: .number(6), method: "tools/call", params: progress) == .proceed(progress))
    }

    @Test func aBareFirstRequestIsTheHandshakeEraToo() {
        var era = MCPEra()
        #expect(code(era.screen(id: .number(1), method: "server/discover", params: [:])) == -32601)
        #expect(era.kind == .handshake)
    }

    @Test func anEnvelopedFirstRequestIsTheStatelessEra() {
        var era = MCPEra()
        #expect(
            era.screen(id: .number(1), method: "server/discover", params: Self.stamped()) == .proceed(Self.stamped()))
        #expect(era.kind == .modern(version: "2026-07-28"))
        #expect(code(era.screen(id: .number(2), method: "tools/list", params: [:])) == -32602)
        #expect(
            code(
                era.screen(
                    id: .number(3), method: "tools/list",
                    params: ["_meta": ["io.modelcontextprotocol/protocolVersion": "2026-07-28"]])) == -32602)
        let future: JSONValue = [
            "_meta": [
                "io.modelcontextprotocol/protocolVersion": "2099-01-01",
                "io.modelcontextprotocol/clientCapabilities": [:],
            ]
        ]
        #expect(code(era.screen(id: .number(4), method: "tools/list", params: future)) == -32022)
        for removed in ["ping", "resources/subscribe", "resources/unsubscribe", "logging/setLevel"] {
            #expect(code(era.screen(id: .number(5), method: removed, params: Self.stamped())) == -32601)
        }
        #expect(
            code(era.screen(id: .number(6), method: "initialize", params: ["protocolVersion": "2025-11-25"])) == -32022)
        #expect(era.kind == .modern(version: "2026-07-28"))
    }

    @Test func aListenCarriesItsIDInItsMeta() throws {
        var era = MCPEra()
        _ = era.screen(id: .number(1), method: "server/discover", params: Self.stamped())
        let screening = era.screen(
            id: .string("listen-1"), method: "subscriptions/listen", params: Self.stamped(["notifications": [:]]))
        guard case .proceed(let params) = screening else {
            Issue.record("refused: \(screening)")
            return
        }
        #expect(params?["_meta"]?["io.modelcontextprotocol/subscriptionId"] == "listen-1")
        #expect(params?["_meta"]?["io.modelcontextprotocol/protocolVersion"] == "2026-07-28")
    }

    @Test func aFirstRequestStampedWithAVersionNotSpokenDecidesNothing() {
        var era = MCPEra()
        let future: JSONValue = [
            "_meta": [
                "io.modelcontextprotocol/protocolVersion": "2099-01-01",
                "io.modelcontextprotocol/clientCapabilities": [:],
            ]
        ]
        guard case .refuse(let error) = era.screen(id: .number(1), method: "server/discover", params: future) else {
            Issue.record("served")
            return
        }
        #expect(error.code.rawValue == -32022)
        #expect(error.data?["supported"] == ["2026-07-28"])
        #expect(era.kind == .undecided)
        // The client re-probes at a version both speak.
        #expect(
            era.screen(id: .number(2), method: "server/discover", params: Self.stamped()) == .proceed(Self.stamped()))
        #expect(era.isModern)
    }
}
