import Foundation
import SQLiveLocks

/// A language-server client for the benchmarks: the real binary over
/// pipes, `Content-Length` frames, every message received kept with the
/// time it arrived (a reading thread of its own).
final class LSPClient: Sendable {
    struct Received: @unchecked Sendable {
        var message: [String: Any]
        var at: Int64
        /// The body's length on the wire, in bytes.
        var length = 0
    }

    let process: SpawnedProcess
    private let input: FileHandle
    // Mutable State: guarded by the condition's mutex; the reading thread
    // appends, waiters take.
    private struct State {
        var received: [Received] = []
        var taken = Set<Int>()
        var closed = false
    }
    private let state = Condition(State())
    private let nextID = Locked(1)

    init(executable: String, arguments: [String]) throws {
        process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let toServer = Pipe()
        let fromServer = Pipe()
        process.standardInput = toServer
        process.standardOutput = fromServer
        process.standardError = FileHandle.nullDevice
        try process.run()
        input = toServer.fileHandleForWriting
        let descriptor = fromServer.fileHandleForReading.fileDescriptor
        let thread = Thread { [state] in
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                bytes += chunk[0..<count]
                while let separator = Self.headerEnd(bytes) {
                    let header = String(decoding: bytes[..<separator], as: UTF8.self)
                    let length =
                        header.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                        .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                    guard bytes.count >= separator + 4 + length else { break }
                    let body = Data(bytes[(separator + 4)..<(separator + 4 + length)])
                    bytes.removeFirst(separator + 4 + length)
                    let at = Monotonic.now()
                    if let message = try? JSONSerialization.jsonObject(with: body) as? [String: Any] {
                        state.withLock { $0.received.append(Received(message: message, at: at, length: length)) }
                        state.broadcast()
                    }
                }
            }
            state.withLock { $0.closed = true }
            state.broadcast()
        }
        thread.start()
    }

    private static func headerEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    /// Sends a message; returns when it was written.
    @discardableResult
    func send(_ message: [String: Any]) throws -> Int64 {
        var message = message
        message["jsonrpc"] = "2.0"
        let body = try JSONSerialization.data(withJSONObject: message)
        let frame = Data("Content-Length: \(body.count)\r\n\r\n".utf8) + body
        let at = Monotonic.now()
        input.write(frame)
        return at
    }

    /// Sends a request; returns its id and when it was sent.
    func request(_ method: String, _ params: [String: Any]) throws -> (id: Int, sent: Int64) {
        let id = nextID.withLock { id in
            defer { id += 1 }
            return id
        }
        let sent = try send(["id": id, "method": method, "params": params])
        return (id, sent)
    }

    /// Waits for the first message not taken yet that matches.
    func wait(_ what: String, timeout: Duration = .seconds(120), _ predicate: ([String: Any]) -> Bool) throws
        -> Received
    {
        let deadline = ContinuousClock.now + timeout
        let found = state.wait { state -> Condition<State>.Step<Received?> in
            for (index, item) in state.received.enumerated() where !state.taken.contains(index) {
                if predicate(item.message) {
                    state.taken.insert(index)
                    return .done(item)
                }
            }
            if state.closed { return .done(nil) }
            let left = ContinuousClock.now.duration(to: deadline)
            return left > .zero ? .waitAtMost(left) : .done(nil)
        }
        guard let found else { throw BenchmarkCheckFailed(description: "no \(what) from sqlive --lsp") }
        return found
    }

    /// A request's response.
    func response(to id: Int) throws -> Received {
        try wait("response to \(id)") { ($0["id"] as? Int) == id && $0["method"] == nil }
    }

    func stop() {
        try? input.close()
        process.waitUntilExit()
    }
}
