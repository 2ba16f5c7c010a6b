import Foundation
import GRDB

/// Pipelined `query/execute` of a small query over the real binary's
/// stdio, against executing the same query directly with GRDB.
enum RPC: Scenario {
    static let name = "rpc"

    static func run(quick: Bool, directory: URL) async throws -> ResultTable {
        let requests = quick ? 500 : 10_000
        var table = ResultTable(
            scenario: name, note: "\(requests) pipelined query/execute requests of a one-row query.")
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
        let sql = "SELECT id, name, score FROM players WHERE id = ?"

        // Direct GRDB: the same statements, one read each.
        let queue = try DatabaseQueue(path: path)
        let directStart = Monotonic.now()
        for index in 0..<requests {
            _ = try await queue.read { db in try Row.fetchAll(db, sql: sql, arguments: [index % 1000 + 1]).count }
        }
        let direct = Double(Monotonic.now() - directStart) / 1e9
        try queue.close()

        let process = Process()
        process.executableURL = URL(fileURLWithPath: sqlive)
        process.arguments = ["--rpc", path]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        func frame(_ json: String) -> Data {
            let body = Data(json.utf8)
            return Data("Content-Length: \(body.count)\r\n\r\n".utf8) + body
        }
        var batch = frame(#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#)
        for index in 1...requests {
            batch += frame(
                #"{"jsonrpc":"2.0","id":\#(index),"method":"query/execute","params":{"sql":"\#(sql)","params":[\#(index % 1000 + 1)]}}"#
            )
        }
        let start = Monotonic.now()
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
        table.add(
            "requests per second", Double(requests) / wall, anchor: Double(requests) / direct, "direct GRDB reads",
            lowerIsBetter: false)
        table.add(
            "time per request (µs)", wall / Double(requests) * 1e6, anchor: direct / Double(requests) * 1e6,
            "direct GRDB reads")
        table.add("overhead per request (µs)", (wall - direct) / Double(requests) * 1e6)
        table.checks.append("all \(requests) requests answered without error")
        return table
    }
}
