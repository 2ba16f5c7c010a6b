import Foundation
import Glibc

/// Runs programs for the benchmarks: writer processes (this executable's
/// `writer` subcommand among them), and whole commands with their wall
/// time and peak memory.
enum ChildProcess {
    /// This executable's path, to start it again as the writer process.
    static var selfPath: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// The `sqlive` binary built next to this one, if any.
    static var sqlivePath: String? {
        let path = URL(fileURLWithPath: selfPath).deletingLastPathComponent().appendingPathComponent("sqlive").path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    /// The path of a program on `PATH`, as the shell would find it.
    static func executable(named name: String) -> String? {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return directories.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// This executable's `writer` subcommand, not started yet.
    static func writer(
        path: String, count: Int, intervalMicroseconds: Int, pragmas: [String], holdOpen: Bool
    ) -> SpawnedProcess {
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: selfPath)
        process.arguments =
            ["writer", path, "--count", "\(count)", "--interval-us", "\(intervalMicroseconds)"]
            + pragmas.flatMap { ["--pragma", $0] } + (holdOpen ? ["--hold-open"] : [])
        return process
    }

    /// Starts this executable's `writer` subcommand, its standard output piped.
    static func startWriter(
        path: String, count: Int, intervalMicroseconds: Int, pragmas: [String] = []
    ) throws -> (SpawnedProcess, Pipe) {
        let process = writer(
            path: path, count: count, intervalMicroseconds: intervalMicroseconds, pragmas: pragmas, holdOpen: false)
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        return (process, output)
    }

    /// Runs a writer process that prints `id started returned` after each
    /// commit and, after the last, keeps its connection open until its
    /// standard input ends; `holdOpen` runs in between. Blocks.
    static func runWriter(
        _ process: SpawnedProcess, count: Int, holdOpen: @Sendable ([WriterCommit]) -> Void
    ) throws -> [WriterCommit] {
        let input = Pipe()
        let output = Pipe()
        (process.standardInput, process.standardOutput) = (input, output)
        try process.run()
        var reader = LineReader(descriptor: output.fileHandleForReading.fileDescriptor)
        var commits: [WriterCommit] = []
        var unexpected: String?
        while commits.count < count, let line = reader.next() {
            guard let commit = WriterCommit(line: line[...]) else {
                unexpected = line
                break
            }
            commits.append(commit)
        }
        if commits.count == count { holdOpen(commits) }
        try input.fileHandleForWriting.close()
        while let line = reader.next() { unexpected = unexpected ?? line }
        process.waitUntilExit()
        if let unexpected {
            throw BenchmarkCheckFailed(description: "unexpected writer output: \(unexpected.prefix(300))")
        }
        guard process.terminationStatus == 0 else {
            throw BenchmarkCheckFailed(description: "a writer process ended with \(process.terminationStatus)")
        }
        return commits
    }

    /// Reads a writer process's output to its end (`id started returned`
    /// after each commit), waits for it, and parses its commits. Blocks.
    static func commits(of process: SpawnedProcess, output: Pipe) throws -> [WriterCommit] {
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchmarkCheckFailed(description: "a writer process ended with \(process.terminationStatus)")
        }
        return try WriterCommit.parse(String(decoding: data, as: UTF8.self))
    }

    /// Runs a command with its output sent to /dev/null (and its input
    /// read from a file, if given); returns its wall seconds and exit status.
    static func time(_ arguments: [String], input: String? = nil) throws -> (seconds: Double, status: Int32) {
        var pid: pid_t = 0
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        if let input { posix_spawn_file_actions_addopen(&actions, 0, input, O_RDONLY, 0) }
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let start = Monotonic.now()
        let code = posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
        guard code == 0 else { throw BenchmarkCheckFailed(description: "cannot start \(arguments[0]): \(code)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let seconds = Double(Monotonic.now() - start) / 1e9
        return (seconds, (status >> 8) & 0xFF)
    }

    /// The peak resident memory of one run of a command, in MiB: its own.
    ///
    /// `wait4`'s `ru_maxrss` for a child spawned from this process is not
    /// the child's own peak: `posix_spawn` shares this process's memory
    /// until `exec`, and Linux carries the larger high-water mark across
    /// `exec`. GNU time forks from a small process, so the figure it reads
    /// is the command's own (or time's, about 2 MiB, if larger).
    static func peakMemory(_ arguments: [String], input: String? = nil) throws -> Double? {
        let gnuTime = "/usr/bin/time"
        guard FileManager.default.isExecutableFile(atPath: gnuTime) else { return nil }
        let report = FileManager.default.temporaryDirectory.appendingPathComponent("sqlive-bench-time-\(getpid())")
        defer { try? FileManager.default.removeItem(at: report) }
        let run = try time([gnuTime, "-f", "%M", "-o", report.path] + arguments, input: input)
        guard run.status == 0, let text = try? String(contentsOf: report, encoding: .utf8),
            let kibibytes = text.split(separator: "\n").last.flatMap({ Double($0) })
        else { return nil }
        return kibibytes / 1024
    }
}
