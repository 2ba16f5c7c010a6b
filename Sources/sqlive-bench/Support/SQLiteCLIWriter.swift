import Foundation
import Glibc

/// Debian's `sqlite3` shell as a writer process, driven over a pipe.
///
/// Each commit is one line sent, `INSERT INTO events DEFAULT VALUES;
/// SELECT last_insert_rowid();`: the insert commits on its own (autocommit)
/// and the shell answers with the row id. The commit-return time is taken
/// when that answer is read, so it includes a pipe round trip (tens of µs)
/// after the commit really returned.
///
/// The shell keeps its defaults but for the case's pragmas and
/// `.timeout 10000`: without a busy handler, its commits fail at once
/// whenever sqlive holds a read lock on a rollback-journal database.
enum SQLiteCLIWriter {
    /// Makes `count` commits `intervalMicroseconds` apart, then calls
    /// `holdOpen` before closing the shell; blocks.
    static func run(
        path: String, count: Int, intervalMicroseconds: Int, pragmas: [String],
        holdOpen: @Sendable ([WriterCommit]) -> Void
    ) throws -> [WriterCommit] {
        guard let sqlite3 = ChildProcess.executable(named: "sqlite3") else {
            throw BenchmarkCheckFailed(description: "sqlite3 is not on PATH")
        }
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: sqlite3)
        process.arguments = [path]
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        (process.standardInput, process.standardOutput, process.standardError) = (input, output, errors)
        try process.run()
        let send = { (line: String) in input.fileHandleForWriting.write(Data((line + "\n").utf8)) }
        var reader = LineReader(descriptor: output.fileHandleForReading.fileDescriptor)
        var commits: [WriterCommit] = []
        var failure: String?

        // Set up, then wait for the echo: `PRAGMA journal_mode` answers a line too.
        send(([".timeout 10000"] + pragmas.map { "PRAGMA \($0);" } + ["SELECT 'ready';"]).joined(separator: "\n"))
        while let line = reader.next(), line != "ready" {}
        for index in 0..<count {
            if index > 0 { usleep(UInt32(intervalMicroseconds)) }
            let started = Monotonic.now()
            send("INSERT INTO events DEFAULT VALUES; SELECT last_insert_rowid();")
            let line = reader.next()
            let returned = Monotonic.now()
            // A failed insert leaves last_insert_rowid() where it was.
            guard let id = line.flatMap({ Int64($0) }), id > (commits.last?.id ?? 0) else {
                failure = "the sqlite3 CLI's commit \(index + 1) failed (answer: \(line ?? "none"))"
                break
            }
            commits.append(WriterCommit(id: id, started: started, returned: returned))
        }
        if failure == nil { holdOpen(commits) }
        try input.fileHandleForWriting.close()
        let messages = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        if let failure {
            throw BenchmarkCheckFailed(description: "\(failure): \(messages)")
        }
        guard process.terminationStatus == 0, messages.isEmpty else {
            throw BenchmarkCheckFailed(
                description: "the sqlite3 CLI ended with \(process.terminationStatus): \(messages)")
        }
        return commits
    }
}
