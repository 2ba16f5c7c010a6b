import Foundation
import Glibc

/// Runs programs for the benchmarks: this executable as the writer process,
/// and whole commands with their wall time and peak memory.
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

    /// Starts this executable's `writer` subcommand; its standard output is returned when it ends.
    static func startWriter(path: String, count: Int, intervalMicroseconds: Int) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: selfPath)
        process.arguments = ["writer", path, "--count", "\(count)", "--interval-us", "\(intervalMicroseconds)"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        return (process, output)
    }

    /// Runs a command with its output sent to /dev/null; returns wall seconds and peak resident MiB.
    static func measure(_ arguments: [String]) throws -> (seconds: Double, peakMiB: Double, status: Int32) {
        var pid: pid_t = 0
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let start = Monotonic.now()
        let code = posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
        guard code == 0 else { throw BenchmarkCheckFailed(description: "cannot start \(arguments[0]): \(code)") }
        var status: Int32 = 0
        var usage = rusage()
        _ = wait4(pid, &status, 0, &usage)
        let seconds = Double(Monotonic.now() - start) / 1e9
        let exit = (status >> 8) & 0xFF
        return (seconds, Double(usage.ru_maxrss) / 1024, exit)
    }
}
