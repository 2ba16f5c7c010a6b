import Foundation
import SQLiveLocks
import SQLiveProtocol
import SQLiveRPC
import SQLiveTestSupport
import Testing

/// A running server, driven over pipes as an editor would: the real
/// `sqlive --rpc` binary, or the same server served in this process
/// (`RPCServer.serve`) over a pair of pipes.
///
/// A thread reads the server's output through the same framing parser the
/// server uses and keeps every message; tests wait for the ones they expect.
/// In-process servers start in microseconds and share the test's
/// sanitizers; the binary is for what crosses a process: exit codes,
/// signals, standard error, memory.
final class ServerProcess: Sendable {
    private enum Backing {
        case process(SpawnedProcess)
        case inProcess(Task<Int32, Never>, pipes: [Pipe])
    }
    private let backing: Backing
    private let input: FileHandle
    // Mutable State: guarded by the mutex; filled by the reading threads.
    private struct State {
        var parser = FrameParser()
        var messages: [JSONValue] = []
        var consumed: Set<Int> = []
        var stderr = Data()
        var outputClosed = false
        var skippedOutputBytes = 0
        var nextID: Int64 = 1_000_000  // clear of the ids the fuzz test uses
    }
    private let state = Locked(State())

    /// How long a test waits for a message before it fails: only hangs hit it.
    static let timeout: Duration = .seconds(30)

    /// The binary's process; only for servers started as one.
    var process: SpawnedProcess {
        guard case .process(let process) = backing else { preconditionFailure("an in-process server has no process") }
        return process
    }

    /// Starts `sqlive --rpc` with more arguments, in a directory.
    convenience init(arguments: [String] = [], directory: URL, environment: [String: String] = [:]) throws {
        try self.init(
            command: SQLiveBinary.path, arguments: ["--rpc"] + arguments, directory: directory, environment: environment
        )
    }

    /// Starts a command that serves the protocol on its standard input and
    /// output (`ssh HOST sqlive --rpc`, say), in a directory.
    convenience init(command: String, arguments: [String], directory: URL, environment: [String: String] = [:])
        throws
    {
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: command)
        process.arguments = arguments
        process.currentDirectoryURL = directory
        var processEnvironment = ProcessInfo.processInfo.environment
        processEnvironment.merge(environment) { _, new in new }
        process.environment = processEnvironment
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        self.init(backing: .process(process), input: stdin, output: stdout, stderr: stderr)
    }

    /// Serves a client in this process, over pipes; relative paths are
    /// read from `directory`.
    convenience init(inProcessDatabase database: String?, directory: URL, readonly: Bool = false) {
        let stdin = Pipe()
        let stdout = Pipe()
        let serverInput = stdin.fileHandleForReading.fileDescriptor
        let serverOutput = stdout.fileHandleForWriting.fileDescriptor
        let task = Task.detached {
            let status = await RPCServer.serve(
                input: serverInput, output: serverOutput, database: database, readonly: readonly, directory: directory)
            // The client reads the end of the output, as from a process.
            try? stdout.fileHandleForWriting.close()
            return status
        }
        self.init(backing: .inProcess(task, pipes: [stdin, stdout]), input: stdin, output: stdout, stderr: nil)
    }

    private init(backing: Backing, input stdin: Pipe, output stdout: Pipe, stderr: Pipe?) {
        self.backing = backing
        input = stdin.fileHandleForWriting
        startReading(stdout.fileHandleForReading) { state, data in
            if data.isEmpty {
                state.outputClosed = true
                return
            }
            state.parser.append(data)
            while let event = state.parser.next() {
                switch event {
                case .message(let content):
                    if let json = try? JSONCoding.decode(JSONValue.self, from: content) {
                        state.messages.append(json)
                    } else {
                        state.skippedOutputBytes += content.count
                    }
                case .skipped(let count):
                    state.skippedOutputBytes += count
                case .malformed:
                    state.skippedOutputBytes += 1
                }
            }
        }
        if let stderr {
            startReading(stderr.fileHandleForReading) { state, data in
                state.stderr.append(data)
            }
        }
    }

    /// Starts an initialized server, with a database when given: in this
    /// process, unless `binary` or extra arguments ask for the real one.
    static func started(
        database: String? = nil, directory: URL, extraArguments: [String] = [], binary: Bool = false
    ) async throws -> ServerProcess {
        let server =
            if binary || !extraArguments.isEmpty {
                try ServerProcess(arguments: (database.map { [$0] } ?? []) + extraArguments, directory: directory)
            } else {
                ServerProcess(
                    inProcessDatabase: database, directory: directory,
                    readonly: false)
            }
        let response = try await server.request("initialize", ["clientInfo": ["name": "tests"]])
        #expect(response["result"]?["serverInfo"]?["name"] == "sqlive")
        return server
    }

    private func startReading(_ handle: FileHandle, _ consume: @escaping @Sendable (inout State, Data) -> Void) {
        let thread = Thread { [weak self] in
            while true {
                let data = handle.readChunk()
                guard let self else { return }
                self.state.withLock { consume(&$0, data) }
                if data.isEmpty { return }
            }
        }
        thread.start()
    }

    /// Bytes of the server's output that were not valid frames of JSON.
    var skippedOutputBytes: Int {
        state.withLock { $0.skippedOutputBytes }
    }

    /// What the server wrote to standard error.
    var standardError: String {
        state.withLock { String(decoding: $0.stderr, as: UTF8.self) }
    }

    // MARK: - Sending

    /// Sends bytes as they are.
    func sendRaw(_ bytes: [UInt8]) {
        do {
            try input.write(contentsOf: Data(bytes))
        } catch {
            Issue.record("cannot write to the server: \(error)")
        }
    }

    /// Sends one message in a frame.
    func send(_ message: JSONValue) {
        do {
            sendRaw(try MessageFraming.frame(message))
        } catch {
            Issue.record("cannot encode \(message): \(error)")
        }
    }

    /// Sends a notification.
    func notify(_ method: String, _ params: JSONValue? = nil) {
        var message: [String: JSONValue] = ["jsonrpc": "2.0", "method": .string(method)]
        if let params { message["params"] = params }
        send(.object(message))
    }

    /// A fresh request id.
    func makeID() -> RequestID {
        state.withLock { state in
            defer { state.nextID += 1 }
            return .number(state.nextID)
        }
    }

    /// Sends a request without waiting for its response.
    @discardableResult
    func sendRequest(_ method: String, _ params: JSONValue? = nil, id: RequestID? = nil) -> RequestID {
        let id = id ?? makeID()
        var message: [String: JSONValue] = ["jsonrpc": "2.0", "id": id.json, "method": .string(method)]
        if let params { message["params"] = params }
        send(.object(message))
        return id
    }

    /// Sends a request and waits for its response (the whole message).
    func request(_ method: String, _ params: JSONValue? = nil) async throws -> JSONValue {
        let id = sendRequest(method, params)
        return try await response(to: id)
    }

    /// Sends a request and returns its result, failing the test on an error.
    func result(_ method: String, _ params: JSONValue? = nil) async throws -> JSONValue {
        let response = try await request(method, params)
        let result = try #require(response["result"], "\(method) failed: \(response)")
        return result
    }

    /// Sends a request that must fail, and returns its error object.
    func error(_ method: String, _ params: JSONValue? = nil) async throws -> JSONValue {
        let response = try await request(method, params)
        let error = try #require(response["error"], "\(method) did not fail: \(response)")
        #expect(response["result"] == nil)
        return error
    }

    /// Closes the server's standard input.
    func closeInput() {
        try? input.close()
    }

    // MARK: - Receiving

    /// Waits for the response to a request.
    func response(to id: RequestID) async throws -> JSONValue {
        try await next("the response to \(id)") { $0["id"] == id.json && $0["method"] == nil }
    }

    /// Waits for a notification whose params match, and returns its params.
    func notification(
        _ method: String, where predicate: @escaping @Sendable (JSONValue) -> Bool = { _ in true }
    ) async throws -> JSONValue {
        let message = try await next("a \(method) notification") { message in
            message["method"] == .string(method) && message["id"] == nil && predicate(message["params"] ?? .null)
        }
        return message["params"] ?? .null
    }

    /// Waits for the first message not seen yet that matches, and marks it seen.
    func next(_ what: String, where predicate: @escaping @Sendable (JSONValue) -> Bool) async throws -> JSONValue {
        let clock = ContinuousClock()
        let deadline = clock.now + Self.timeout
        while true {
            let (found, closed): (JSONValue?, Bool) = state.withLock { state in
                for (index, message) in state.messages.enumerated()
                where !state.consumed.contains(index) && predicate(message) {
                    state.consumed.insert(index)
                    return (message, false)
                }
                return (nil, state.outputClosed)
            }
            if let found { return found }
            if closed || clock.now > deadline {
                throw ServerProcessError.missing(what, closed: closed, stderr: standardError)
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Every message received so far.
    var messages: [JSONValue] {
        state.withLock { $0.messages }
    }

    /// Waits for the process to end and returns its exit code.
    func waitForExit() async throws -> Int32 {
        if case .inProcess(let task, _) = backing {
            return try await firstOf(task, or: Self.timeout)
        }
        let clock = ContinuousClock()
        let deadline = clock.now + Self.timeout
        while process.isRunning {
            if clock.now > deadline {
                process.terminate()
                throw ServerProcessError.stillRunning(stderr: standardError)
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        return await process.exit()
    }

    deinit {
        try? input.close()
        if case .process(let process) = backing, process.isRunning { process.terminate() }
    }
}

/// A task's value, or an error after a time-out.
private func firstOf(_ task: Task<Int32, Never>, or timeout: Duration) async throws -> Int32 {
    try await withThrowingTaskGroup(of: Int32.self) { group in
        group.addTask { await task.value }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw ServerProcessError.stillRunning(stderr: "(in process)")
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

enum ServerProcessError: Error, CustomStringConvertible {
    case missing(String, closed: Bool, stderr: String)
    case stillRunning(stderr: String)

    var description: String {
        switch self {
        case .missing(let what, let closed, let stderr):
            "no \(what) \(closed ? "before the server closed its output" : "in time"); stderr:\n\(stderr)"
        case .stillRunning(let stderr):
            "the server did not exit; stderr:\n\(stderr)"
        }
    }
}
