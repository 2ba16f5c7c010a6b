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
        var table = ResultTable(
            scenario: name,
            note: "\(requests) pipelined query/execute requests of one-row SELECTs (each a distinct statement).")
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
        var shell = Double.infinity
        for _ in 0..<3 {
            let run = try ChildProcess.time(["/usr/bin/sqlite3", "-json", path], input: script)
            guard run.status == 0 else { throw BenchmarkCheckFailed(description: "sqlite3 -json failed") }
            shell = min(shell, run.seconds)
        }

        let process = Process()
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
        // Read until every response came back.
        var received = 0
        var errors = 0
        var buffer = Data()
        let reader = output.fileHandleForReading
        while received < requests + 1 {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            buffer += chunk
            while let headerEnd = buffer.range(of: Data("\r\n\r\n".utf8)) {
                let header = String(decoding: buffer[buffer.startIndex..<headerEnd.lowerBound], as: UTF8.self)
                guard
                    let lengthLine = header.split(separator: "\r\n").first(where: {
                        $0.lowercased().hasPrefix("content-length:")
                    }),
                    let length = Int(lengthLine.split(separator: ":")[1].trimmingCharacters(in: .whitespaces))
                else { throw BenchmarkCheckFailed(description: "bad frame header: \(header)") }
                guard buffer.count - (headerEnd.upperBound - buffer.startIndex) >= length else { break }
                let body = buffer[headerEnd.upperBound..<(headerEnd.upperBound + length)]
                if body.range(of: Data(#""error""#.utf8)) != nil { errors += 1 }
                if body.range(of: Data(#""id""#.utf8)) != nil { received += 1 }
                buffer = Data(buffer[(headerEnd.upperBound + length)...])
            }
        }
        let wall = Double(Monotonic.now() - start) / 1e9
        try? input.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
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
