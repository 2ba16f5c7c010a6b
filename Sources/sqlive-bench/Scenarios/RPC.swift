import Foundation
import GRDB

/// Pipelined `query/execute` of one-row queries over the real binary's
/// stdio, from its start to the last answer, against `sqlite3 -json`
/// running the same statements as a script (its start included), and
/// against GRDB async reads of them in this process (one `read` each).
enum RPC: Scenario {
    static let name = "rpc"

    static func run(quick: Bool, directory: URL) async throws -> ResultTable {
        let requests = quick ? 500 : 10_000
        let runs = quick ? 2 : 5
        var table = ResultTable(
            scenario: name,
            note: "\(requests) pipelined query/execute requests of one-row SELECTs (by primary key, over 1,000 "
                + "rows); best of \(runs) alternating runs on each side.")
        guard let sqlive = ChildProcess.sqlivePath else {
            table.checks.append("skipped: no sqlive binary next to sqlive-bench")
            return table
        }
        let path = try makeDatabase(
            directory, "rpc.sqlite",
            """
            CREATE TABLE players(id INTEGER PRIMARY KEY, name TEXT, score INTEGER);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
            INSERT INTO players SELECT i, 'player ' || i, i % 100 FROM n;
            """)
        @Sendable func sql(_ index: Int) -> String {
            "SELECT id, name, score FROM players WHERE id = \(index % 1000 + 1)"
        }

        // Direct GRDB: the same statements, one read each.
        let queue = try DatabaseQueue(path: path)
        let directStart = Monotonic.now()
        for index in 1...requests {
            _ = try await queue.read { db in try Row.fetchAll(db, sql: sql(index)).count }
        }
        let direct = Double(Monotonic.now() - directStart) / 1e9
        try queue.close()

        // The sqlite3 shell in json mode, the same statements as a script.
        let script = directory.appendingPathComponent("rpc.sql").path
        try (1...requests).map { sql($0) + ";\n" }.joined().write(toFile: script, atomically: true, encoding: .utf8)

        // sqlive serving the same statements, pipelined.
        func serve() throws -> (wall: Double, received: Int, errors: Int) {
            let process = SpawnedProcess()
            process.executableURL = URL(fileURLWithPath: sqlive)
            process.arguments = ["--rpc", path]
            let input = Pipe()
            let output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            let start = Monotonic.now()
            try process.run()
            func frame(_ json: String) -> Data {
                let body = Data(json.utf8)
                return Data("Content-Length: \(body.count)\r\n\r\n".utf8) + body
            }
            var batch = frame(#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#)
            for index in 1...requests {
                batch += frame(
                    #"{"jsonrpc":"2.0","id":\#(index),"method":"query/execute","params":{"sql":"\#(sql(index))"}}"#
                )
            }
            let payload = batch
            let writer = Thread {
                input.fileHandleForWriting.write(payload)
            }
            writer.start()
            // Read until every response came back. The client's own work is
            // kept small (the shell's output goes to /dev/null unread): frames
            // are found by an offset into the bytes read, never by copying what
            // is left after each one.
            var received = 0
            var errors = 0
            var bytes: [UInt8] = []
            var position = 0
            let descriptor = output.fileHandleForReading.fileDescriptor
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            reading: while received < requests + 1 {
                let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                if position > 0 && position >= bytes.count / 2 {
                    bytes.removeFirst(position)
                    position = 0
                }
                bytes += chunk[0..<count]
                while let frame = RPCFrame.next(in: bytes, from: position) {
                    guard let length = frame.length else {
                        throw BenchmarkCheckFailed(description: "bad frame header at byte \(position)")
                    }
                    guard bytes.count - frame.bodyStart >= length else { continue reading }
                    let body = bytes[frame.bodyStart..<(frame.bodyStart + length)]
                    if RPCFrame.contains(body, #""error""#) { errors += 1 }
                    if RPCFrame.contains(body, #""id""#) { received += 1 }
                    position = frame.bodyStart + length
                }
            }
            let wall = Double(Monotonic.now() - start) / 1e9
            try? input.fileHandleForWriting.close()
            process.terminate()
            process.waitUntilExit()
            return (wall, received, errors)
        }
        // Alternating runs, so that both sides see the machine in the same mood.
        var shell = Double.infinity
        var wall = Double.infinity
        var received = 0
        var errors = 0
        for _ in 0..<runs {
            let run = try ChildProcess.time(["/usr/bin/sqlite3", "-json", path], input: script)
            guard run.status == 0 else { throw BenchmarkCheckFailed(description: "sqlite3 -json failed") }
            shell = min(shell, run.seconds)
            let served = try serve()
            (received, errors) = (served.received, served.errors)
            guard received == requests + 1, errors == 0 else { break }
            wall = min(wall, served.wall)
        }
        guard received == requests + 1, errors == 0 else {
            table.checks.append(
                "skipped: the server answered \(received) of \(requests + 1) requests, \(errors) errors")
            return table
        }
        table.add("wall time, start to last answer (s)", wall, anchor: shell, "sqlite3 -json, same statements")
        table.add(
            "time per request (µs)", wall / Double(requests) * 1e6, anchor: shell / Double(requests) * 1e6,
            "sqlite3 -json, per statement")
        table.add(
            "requests per second", Double(requests) / wall, anchor: Double(requests) / direct,
            "GRDB async reads in-process", lowerIsBetter: false)
        table.checks.append("all \(requests) requests answered without error")
        return table
    }
}

/// Finds the frames of the server's output in the bytes read so far.
private enum RPCFrame {
    /// The frame starting at `start`: where its body starts and its
    /// `Content-Length` (nil when the header has none); nil while the header
    /// is not complete.
    static func next(in bytes: [UInt8], from start: Int) -> (bodyStart: Int, length: Int?)? {
        var index = start
        while index + 4 <= bytes.count {
            if bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
                let header = String(decoding: bytes[start..<index], as: UTF8.self)
                let length = header.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }
                return (index + 4, length)
            }
            index += 1
        }
        return nil
    }

    static func contains(_ body: ArraySlice<UInt8>, _ text: String) -> Bool {
        let needle = Array(text.utf8)
        guard body.count >= needle.count else { return false }
        var index = body.startIndex
        while index + needle.count <= body.endIndex {
            if body[index] == needle[0] && body[index..<(index + needle.count)].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }
}
