import Foundation
import SQLiveProtocol
import SQLiveTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking TCP connection to 127.0.0.1, with a receive time-out so that
/// a server that never answers fails the test instead of hanging it: the
/// plain HTTP/1.1 and WebSocket (RFC 6455) client of the tests that talk to
/// the real `sqlive --web` and `sqlive --mcp --http` over their sockets.
final class LoopbackClient {
    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// An HTTP response: its status, its header fields (names lowercased),
    /// its body.
    struct Response {
        var status: Int
        var headers: [(name: String, value: String)]
        var body: [UInt8]

        func header(_ name: String) -> String? {
            headers.first { $0.name == name.lowercased() }?.value
        }
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    private let socket: Int32
    private var buffered: [UInt8] = []
    /// The status code of the close frame the server sent, if it sent one.
    private(set) var closeStatus: Int?
    /// The reason the close frame gave.
    private(set) var closeReason = ""
    /// A response's head read by `readResponseHead`.
    private var receivedHead: (status: Int, headers: [(name: String, value: String)])?
    var socketDescriptor: Int32 { socket }
    var bufferedIsEmpty: Bool { buffered.isEmpty }

    init(port: Int, timeout: Int = 30) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Failure("socket: \(String(cString: strerror(errno)))") }
        var time = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(socket)
            throw Failure("connect to port \(port): \(reason)")
        }
    }

    deinit { Glibc.close(socket) }

    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes {
                Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw Failure("send: \(String(cString: strerror(errno)))") }
            sent += count
        }
    }

    /// When reading must end, whatever comes meanwhile (keep-alive
    /// comments reset the receive time-out, not this); nil: never.
    var deadline: ContinuousClock.Instant?

    /// More bytes into the buffer; false at the end of the stream.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            if let deadline, ContinuousClock.now >= deadline { throw Failure("no answer before the deadline") }
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { throw Failure("receive: \(String(cString: strerror(errno))) (the server did not answer)") }
            if count == 0 { return false }
            buffered += chunk[0..<count]
            return true
        }
    }

    private func take(_ count: Int) throws -> [UInt8] {
        while buffered.count < count {
            guard try fill() else { throw Failure("the server closed the connection") }
        }
        defer { buffered.removeFirst(count) }
        return Array(buffered[0..<count])
    }

    /// The status line and header fields of a response.
    private func readHead() throws -> (status: Int, headers: [(name: String, value: String)]) {
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        while true {
            if let range = buffered.firstRange(of: end) {
                let head = String(decoding: buffered[..<range.lowerBound], as: UTF8.self)
                buffered.removeFirst(range.upperBound)
                var lines = head.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst().split(separator: " ")
                guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
                    throw Failure("not an HTTP response: \(head)")
                }
                let headers = lines.compactMap { line -> (name: String, value: String)? in
                    guard let colon = line.firstIndex(of: ":") else { return nil }
                    return (
                        line[..<colon].lowercased(),
                        line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                    )
                }
                return (status, headers)
            }
            guard try fill() else { throw Failure("the server closed the connection before its response") }
        }
    }

    /// One request on a connection of its own (`Connection: close`); the
    /// body is read to its length or to the end of the stream.
    static func request(
        port: Int, _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []
    ) throws -> Response {
        let client = try LoopbackClient(port: port)
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        try client.send(Array((head + "\r\n").utf8) + body)
        let (status, fields) = try client.readHead()
        var response = Response(status: status, headers: fields, body: [])
        if let length = response.header("content-length").flatMap(Int.init) {
            response.body = try client.take(length)
        } else if response.header("transfer-encoding")?.lowercased() == "chunked" {
            response.body = try client.readChunked()
        } else {
            while try client.fill() {}
            response.body = client.buffered
        }
        return response
    }

    /// Sends a request on a connection of its own and returns at once:
    /// `readResponse` reads its answer (a stream of events, to its end).
    static func startRequest(
        port: Int, _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = [],
        timeout: Int = 30
    ) throws -> LoopbackClient {
        let client = try LoopbackClient(port: port, timeout: timeout)
        client.deadline = ContinuousClock.now.advanced(by: .seconds(timeout))
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        try client.send(Array((head + "\r\n").utf8) + body)
        return client
    }

    /// The status line and header fields of the response to the request
    /// `startRequest` sent (a stream of events sends them when the request
    /// is taken, before its events); `readResponse` reads the rest.
    func readResponseHead() throws -> Int {
        let head = try readHead()
        receivedHead = head
        return head.status
    }

    /// The response to the request `startRequest` sent.
    func readResponse() throws -> Response {
        let (status, fields) = try receivedHead ?? readHead()
        var response = Response(status: status, headers: fields, body: [])
        if let length = response.header("content-length").flatMap(Int.init) {
            response.body = try take(length)
        } else if response.header("transfer-encoding")?.lowercased() == "chunked" {
            response.body = try readChunked()
        } else {
            while try fill() {}
            response.body = buffered
        }
        return response
    }

    private func readChunked() throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let line = try readLine()
            guard let size = Int(line.split(separator: ";").first ?? "", radix: 16) else {
                throw Failure("a bad chunk size: \(line)")
            }
            if size == 0 { return body }
            body += try take(size)
            _ = try take(2)
        }
    }

    private func readLine() throws -> String {
        let end: [UInt8] = Array("\r\n".utf8)
        while true {
            if let range = buffered.firstRange(of: end) {
                defer { buffered.removeFirst(range.upperBound) }
                return String(decoding: buffered[..<range.lowerBound], as: UTF8.self)
            }
            guard try fill() else { throw Failure("the server closed the connection") }
        }
    }

    // MARK: - WebSocket

    /// Opens a WebSocket on `target` with the headers given (the page's
    /// `Origin`); throws unless the server switches protocols.
    static func webSocket(port: Int, _ target: String, headers: [(String, String)]) throws -> LoopbackClient {
        let client = try LoopbackClient(port: port)
        var head = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
        head += "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        try client.send(Array((head + "\r\n").utf8))
        let (status, _) = try client.readHead()
        guard status == 101 else { throw Failure("the WebSocket was not opened: HTTP \(status)") }
        return client
    }

    /// Sends one text frame, masked as a client must.
    func sendText(_ text: String) throws {
        let payload = Array(text.utf8)
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count < 65536 {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((payload.count >> shift) & 0xFF)) }
        }
        let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try send(frame)
    }

    /// The next text message (pings answered, fragments joined).
    func receiveText() throws -> String {
        var message: [UInt8] = []
        while true {
            let head = try take(2)
            let final = head[0] & 0x80 != 0
            let opcode = head[0] & 0x0F
            var length = Int(head[1] & 0x7F)
            if length == 126 {
                let bytes = try take(2)
                length = Int(bytes[0]) << 8 | Int(bytes[1])
            } else if length == 127 {
                length = try take(8).reduce(0) { $0 << 8 | Int($1) }
            }
            let masked = head[1] & 0x80 != 0
            let mask = masked ? try take(4) : []
            var payload = try take(length)
            if masked { payload = payload.enumerated().map { $0.element ^ mask[$0.offset % 4] } }
            switch opcode {
            case 0x8:
                closeStatus = payload.count >= 2 ? Int(payload[0]) << 8 | Int(payload[1]) : nil
                closeReason = String(decoding: payload.dropFirst(2), as: UTF8.self)
                throw Failure("the server closed the WebSocket (\(closeStatus.map(String.init) ?? "no code"))")
            case 0x9:
                try send([0x8A, 0x80 | UInt8(payload.count)] + [0, 0, 0, 0] + payload)
            case 0xA: break
            default:
                message += payload
                if final { return String(decoding: message, as: UTF8.self) }
            }
        }
    }

    private var nextID = 1

    /// A JSON-RPC request over the WebSocket, and its response (the
    /// notifications before it are skipped).
    func request(_ method: String, _ params: JSONValue = [:]) throws -> JSONValue {
        let id = nextID
        nextID += 1
        let message: JSONValue = [
            "jsonrpc": "2.0", "id": .integer(Int64(id)), "method": .string(method), "params": params,
        ]
        try sendText(String(decoding: try JSONCoding.encode(message), as: UTF8.self))
        while true {
            let text = try receiveText()
            let response = try JSONCoding.decode(JSONValue.self, from: Array(text.utf8))
            if response["id"]?.integerValue == Int64(id) { return response }
        }
    }
}

extension LoopbackClient {
    /// Sends only the head of a masked text frame that says it carries
    /// `length` bytes (and its mask): what a server that refuses the
    /// length answers before any of the payload comes.
    func sendTextFrameHead(length: Int) throws {
        var frame: [UInt8] = [0x81, 0x80 | 127]
        for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((length >> shift) & 0xFF)) }
        frame += [0x37, 0xFA, 0x21, 0x3D]
        try send(frame)
    }

    /// The status code of the close frame the server sends next (text
    /// messages before it are skipped); nil when the connection ends
    /// without one.
    func closeCode() throws -> Int? {
        while true {
            do {
                _ = try receiveText()
            } catch let failure as Failure where failure.description.hasPrefix("the server closed the WebSocket") {
                return closeStatus
            } catch is Failure {
                return nil
            }
        }
    }
}

extension LoopbackClient {
    /// Sends a JSON-RPC request with the id given, without waiting.
    func sendRequest(id: Int, _ method: String, _ params: JSONValue = [:]) throws {
        let message: JSONValue = [
            "jsonrpc": "2.0", "id": .integer(Int64(id)), "method": .string(method), "params": params,
        ]
        try sendText(String(decoding: try JSONCoding.encode(message), as: UTF8.self))
    }

    /// Sends a JSON-RPC notification.
    func sendNotification(_ method: String, _ params: JSONValue = [:]) throws {
        let message: JSONValue = ["jsonrpc": "2.0", "method": .string(method), "params": params]
        try sendText(String(decoding: try JSONCoding.encode(message), as: UTF8.self))
    }

    /// The response to request `id` (the messages before it are skipped).
    func response(to id: Int) throws -> JSONValue {
        while true {
            let response = try JSONCoding.decode(JSONValue.self, from: Array(try receiveText().utf8))
            if response["id"]?.integerValue == Int64(id) { return response }
        }
    }

    /// Whether the server sends anything within `milliseconds` (bytes
    /// already received count).
    func hasInput(withinMilliseconds milliseconds: Int32) -> Bool {
        if !bufferedIsEmpty { return true }
        var descriptor = pollfd(fd: socketDescriptor, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, milliseconds) > 0
    }

    /// Closes the socket at once, with no close frame: a tab whose browser
    /// went away.
    func abandon() {
        shutdown(socketDescriptor, Int32(SHUT_RDWR))
    }
}

extension LoopbackClient {
    /// Whether the server closes the connection (end of stream, or a
    /// reset) before the receive time-out; false when it answers or the
    /// time-out comes first.
    func closedByServer() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(socketDescriptor, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            if count == 0 { return true }
            if count < 0 { return errno == ECONNRESET }
            return false
        }
    }
}
