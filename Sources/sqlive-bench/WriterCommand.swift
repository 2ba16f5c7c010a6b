import ArgumentParser
import Foundation
import GRDB

/// The other process of the benchmarks: commits single-row inserts.
///
/// Each row stores the monotonic time taken just before its commit, so
/// that latency is measured from the commit. On exit it prints the time
/// of its last commit.
struct WriterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "writer", abstract: "Commit single-row inserts (the benchmarks' other process).",
        shouldDisplay: false)

    @Argument var path: String
    @Option var count: Int
    @Option(name: .customLong("interval-us")) var intervalMicroseconds: Int = 0

    func run() throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        var last: Int64 = 0
        for _ in 0..<count {
            try queue.write { db in
                last = Monotonic.now()
                try db.execute(sql: "INSERT INTO events(committedAt) VALUES (?)", arguments: [last])
            }
            if intervalMicroseconds > 0 { usleep(UInt32(intervalMicroseconds)) }
        }
        print(last)
    }
}
