import ArgumentParser
import Foundation
import GRDB

/// The GRDB writer process of the benchmarks: commits single-row inserts
/// into `events`, with GRDB's default settings.
///
/// Only the pragmas given with `--pragma` change SQLite's settings (the
/// journal mode or synchronous level a benchmark case asks for). The busy
/// timeout is 10 s, so that a reader holding a lock delays a commit rather
/// than failing it. After each commit it prints `id started returned`: the
/// row id, the `Monotonic.now()` just before the write, and the one just
/// after `write` returned, one line each, written at once. With
/// `--hold-open` it then keeps its connection open until its standard input
/// ends, as a long-lived application would: closing the connection (a WAL
/// checkpoint, the `-wal` file deleted) must not be what wakes sqlive.
struct WriterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "writer", abstract: "Commit single-row inserts (the benchmarks' other process).",
        shouldDisplay: false)

    @Argument var path: String
    @Option var count: Int
    @Option(name: .customLong("interval-us")) var intervalMicroseconds: Int = 0
    @Option(name: .customLong("pragma"), help: "A pragma for the connection, as 'synchronous = NORMAL' (repeatable).")
    var pragmas: [String] = []
    @Flag(name: .customLong("hold-open"), help: "After the last commit, keep the connection until stdin ends.")
    var holdOpen = false
    @Option(
        name: .customLong("observer-table"),
        help: ArgumentHelp(
            "Insert into this table's (grp, value, note) with GRDB's defaults (no busy timeout), go on after a "
                + "failed commit, and print a JSON summary: failures and each commit's time."))
    var observerTable: String?

    func run() throws {
        if let observerTable {
            return try runObserved(table: observerTable)
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        for pragma in pragmas {
            try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA \(pragma)") }
        }
        for index in 0..<count {
            if index > 0 && intervalMicroseconds > 0 { usleep(UInt32(intervalMicroseconds)) }
            let started = Monotonic.now()
            let id = try queue.write { db in
                try db.execute(sql: "INSERT INTO events DEFAULT VALUES")
                return db.lastInsertedRowID
            }
            let returned = Monotonic.now()
            FileHandle.standardOutput.write(Data("\(id) \(started) \(returned)\n".utf8))
        }
        if holdOpen {
            while readLine() != nil {}
        }
        try queue.close()
    }

    /// The observer-effect writer: GRDB's defaults, failures counted.
    private func runObserved(table: String) throws {
        let queue = try DatabaseQueue(path: path)
        for pragma in pragmas {
            try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA \(pragma)") }
        }
        var failed = 0
        var latencies: [Int64] = []
        for index in 0..<count {
            if index > 0 && intervalMicroseconds > 0 { usleep(UInt32(intervalMicroseconds)) }
            let started = Monotonic.now()
            do {
                try queue.write { db in
                    try db.execute(
                        sql: "INSERT INTO \(table)(grp, value, note) VALUES (?, ?, 'grdb')",
                        arguments: [index % 100, 1_000_000_000 + index])
                }
                latencies.append(Monotonic.now() - started)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
                failed += 1
            }
        }
        try queue.close()
        print("{\"failed\": \(failed), \"latencies\": [\(latencies.map(String.init).joined(separator: ","))]}")
    }
}
