import Foundation
import SQLiveProtocol
import SQLiveRPC
import SQLiveTestSupport
import Testing

/// What a long-running server holds: threads, descriptors and memory come
/// back to their baseline after databases are opened and closed.
@Suite("Server resources", .timeLimit(.minutes(5)))
struct ServerResourceTests {
    /// A process's thread count, open descriptors and resident memory.
    struct Usage: CustomStringConvertible {
        var threads: Int
        var descriptors: Int
        var residentKiB: Int

        init(pid: Int32) throws {
            let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
            func field(_ name: String) -> Int {
                let line = status.split(separator: "\n").first { $0.hasPrefix(name + ":") } ?? ""
                return Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "") ?? -1
            }
            threads = field("Threads")
            residentKiB = field("VmRSS")
            descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
        }

        var description: String { "\(threads) threads, \(descriptors) descriptors, \(residentKiB) KiB" }
    }

    @Test("A value larger than a message may be is refused with -32013, read no further, and the server goes on")
    func oversizedResults() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("blob.sqlite")
        // 70 MB of blob: 93 MB of base64, over the 64 MiB a message may be.
        try await sqlite3(path, "CREATE TABLE b(x); INSERT INTO b VALUES (randomblob(70000000)), ('small');")
        let server = try await ServerProcess.started(database: path, directory: directory.url, binary: true)
        let refused = try await server.error("query/execute", ["sql": "SELECT x FROM b"])
        #expect(refused["code"] == -32013)
        #expect(refused["message"]?.stringValue?.contains("select fewer rows") == true)
        #expect(refused["data"]?["maximumMessageLength"]?.integerValue ?? 0 > 60_000_000)
        let lengths = try await server.result("query/execute", ["sql": "SELECT length(x) FROM b"])
        #expect(lengths["results"]?[0]?["rows"] == [[70_000_000], [5]])
        let register = try await server.error("liveQuery/register", ["name": "big", "sql": "SELECT x FROM b"])
        #expect(register["code"] == -32013)
        // A live query whose result grows past the limit fails, and says why.
        _ = try await server.result("liveQuery/register", ["name": "grows", "sql": "SELECT x FROM b WHERE rowid > 1"])
        try await SQLite3CLI.run(path, "UPDATE b SET x = randomblob(70000000) WHERE rowid = 2;")
        let failed = try await server.notification("liveQuery/error") { $0["name"] == "grows" }
        #expect(failed["error"]?["code"] == -32013)
        // Memory: SQLite's own copy of the value, not three more of ours.
        let peak =
            try String(contentsOfFile: "/proc/\(server.process.processIdentifier)/status", encoding: .utf8)
            .split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
            .flatMap { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first }.flatMap { Int($0) }
            ?? 0
        if ProcessInfo.processInfo.environment["SQLIVE_SANITIZER"] == nil {
            #expect(peak < 300 * 1024, "peak resident \(peak) KiB")
        }
        _ = try await server.result("shutdown")
        server.notify("exit")
        #expect(try await server.waitForExit() == 0)
    }

    @Test("200 databases opened and closed, each with live queries and a write: back to the baseline")
    func openAndClose200() async throws {
        let directory = try TemporaryDirectory()
        var paths: [String] = []
        for index in 0..<4 {
            let path = directory.path("db\(index).sqlite")
            try await sqlite3(path, "PRAGMA journal_mode=\(index % 2 == 0 ? "wal" : "delete"); CREATE TABLE t(x);")
            paths.append(path)
        }
        let server = try await ServerProcess.started(directory: directory.url, binary: true)
        let pid = server.process.processIdentifier
        func cycle(_ index: Int) async throws {
            let path = paths[index % paths.count]
            _ = try await server.result("database/open", ["path": .string(path)])
            _ = try await server.result("liveQuery/register", ["name": "a", "sql": "SELECT count(*) FROM t"])
            _ = try await server.result("liveQuery/register", ["name": "b", "sql": "SELECT max(x) FROM t"])
            _ = try await server.result("query/execute", ["sql": .string("INSERT INTO t VALUES (\(index))")])
            _ = try await server.notification("liveQuery/changed") { $0["name"] == "a" }
        }
        for index in 0..<20 { try await cycle(index) }
        try await Task.sleep(for: .milliseconds(300))
        let baseline = try Usage(pid: pid)
        for index in 20..<220 { try await cycle(index) }
        try await Task.sleep(for: .milliseconds(300))
        let after = try Usage(pid: pid)
        // The one database still open is in both figures.
        #expect(after.descriptors <= baseline.descriptors, "baseline \(baseline); after \(after)")
        #expect(after.threads <= baseline.threads + 4, "baseline \(baseline); after \(after)")
        // AddressSanitizer keeps freed memory in quarantine (256 MB): resident
        // memory says nothing of leaks there (scripts/sanitize.sh says which sanitizer runs).
        if ProcessInfo.processInfo.environment["SQLIVE_SANITIZER"] != "address" {
            #expect(after.residentKiB <= baseline.residentKiB + 16 * 1024, "baseline \(baseline); after \(after)")
        }
        _ = try await server.result("shutdown")
        server.notify("exit")
        #expect(try await server.waitForExit() == 0)
    }
}
