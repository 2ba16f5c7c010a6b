import SQLiveProtocol
import Testing

@Suite("Newline framing (MCP's stdio transport)")
struct LineFramerTests {
    func events(_ chunks: [String], maximum: Int = 100) -> [LineFramer.Event] {
        var framer = LineFramer(maximumLength: maximum)
        var events: [LineFramer.Event] = []
        for chunk in chunks {
            framer.append(Array(chunk.utf8))
            while let event = framer.next() { events.append(event) }
        }
        return events
    }

    @Test("Lines split anywhere come out whole; CRLF and blank lines are tolerated")
    func splits() {
        #expect(
            events(["{\"a\":1}\n{\"b\"", ":2}\r\n", "\n  \n", "{}\n"]) == [
                .message(Array("{\"a\":1}".utf8)), .message(Array("{\"b\":2}".utf8)), .message(Array("{}".utf8)),
            ])
        #expect(events(["{}"]) == [], "no line before its newline")
    }

    @Test("A line over the maximum is skipped, and what follows is read")
    func tooLong() {
        let long = String(repeating: "x", count: 250)
        #expect(events([long, long, "\n{}\n"]) == [.tooLong(500), .message(Array("{}".utf8))])
        #expect(events([long + "\n{}\n"]) == [.tooLong(250), .message(Array("{}".utf8))])
    }

    @Test("Many lines in one read")
    func many() {
        let chunk = String(repeating: "{\"jsonrpc\":\"2.0\"}\n", count: 1000)
        #expect(events([chunk], maximum: 1 << 20).count == 1000)
    }
}

@Suite("MCP names")
struct MCPProtocolTests {
    @Test("Live query URIs round-trip any name")
    func liveURIs() {
        for name in ["leaders", "top 10", "ünïcode/é", "a%b", "x?y#z"] {
            let uri = MCPProtocol.liveURI(name)
            #expect(uri.hasPrefix("sqlive://live/"))
            #expect(!uri.dropFirst("sqlive://live/".count).contains("/"))
            #expect(MCPProtocol.liveName(of: uri) == name)
        }
        #expect(MCPProtocol.liveName(of: "sqlive://schema") == nil)
        #expect(MCPProtocol.liveName(of: "sqlive://live/") == nil)
        #expect(MCPProtocol.liveName(of: "sqlive://live/%zz") == nil)
    }

    @Test("The version is negotiated: the client's when it is served, else the newest")
    func negotiation() {
        #expect(MCPProtocol.negotiate("2025-06-18") == "2025-06-18")
        #expect(MCPProtocol.negotiate("2026-07-28") == "2025-11-25")
        #expect(MCPProtocol.negotiate(nil) == "2025-11-25")
    }
}
