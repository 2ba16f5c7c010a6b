import Foundation

/// The programs that play "another process" in the latency scenarios: each
/// commits single-row inserts into `events`, with its default settings but
/// for the pragmas a case asks for and a busy timeout.
enum ExternalWriter: String, CaseIterable, Sendable {
    /// Debian's `sqlite3` shell, driven over a pipe.
    case sqlite3CLI = "sqlite3 CLI"
    /// Python's `sqlite3` module.
    case python = "Python sqlite3"
    /// GRDB, in this executable's `writer` subcommand.
    case grdb = "GRDB"

    /// Commits `count` inserts `interval` apart, after running `pragmas`
    /// (as `synchronous = NORMAL`) on the writer's connection.
    ///
    /// After the last commit the writer keeps its connection open while
    /// `holdOpen` runs (it waits for the deliveries): a writer closing its
    /// connection touches the files, and that must not be what wakes sqlive
    /// up. This blocks until the writer is done: call it with `onOwnThread`.
    func run(
        path: String, count: Int, interval: Duration, pragmas: [String],
        holdOpen: @Sendable ([WriterCommit]) -> Void
    ) throws -> [WriterCommit] {
        let microseconds = Int(interval / .microseconds(1))
        let commits: [WriterCommit]
        switch self {
        case .sqlite3CLI:
            commits = try SQLiteCLIWriter.run(
                path: path, count: count, intervalMicroseconds: microseconds, pragmas: pragmas, holdOpen: holdOpen)
        case .python:
            commits = try PythonWriter.run(
                path: path, count: count, interval: interval, pragmas: pragmas, holdOpen: holdOpen)
        case .grdb:
            let process = ChildProcess.writer(
                path: path, count: count, intervalMicroseconds: microseconds, pragmas: pragmas, holdOpen: true)
            commits = try ChildProcess.runWriter(process, count: count, holdOpen: holdOpen)
        }
        guard commits.count == count else {
            throw BenchmarkCheckFailed(description: "\(rawValue) made \(commits.count) of \(count) commits")
        }
        return commits
    }
}
