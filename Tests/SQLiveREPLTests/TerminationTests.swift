import Foundation
import SQLiveTestSupport
import Testing

/// Numbers out of range and termination signals, through the real binary.
@Suite("Ranges and termination", .serialized, .timeLimit(.minutes(5)))
struct TerminationTests {
    @Test("Numbers out of range are usage errors, never a crash")
    func numbersOutOfRange() async throws {
        let directory = try TemporaryDirectory()
        let cases: [(String, String)] = [
            (".wait --timeout 1e19", "--timeout must be between 0 and 31536000 seconds (a year), not 1e19"),
            (".wait w --timeout 9.3e18", "not 9.3e18"),
            (".wait --timeout -1", "not -1"),
            (".wait --timeout nan", "not nan"),
            (".wait --timeout inf", "not inf"),
            (".exit 256", "an exit code is a number from 0 to 255, not 256"),
            (".exit -1", "not -1"),
            (".exit 99999999999", "not 99999999999"),
        ]
        for (command, message) in cases {
            let output = try await Processes.sqlive(["-c", command, "-c", "SELECT 'after';"], directory: directory)
            #expect(output.status == 1, "\(command)")
            #expect(output.stderr.contains(message), "\(command): \(output.stderr)")
            #expect(output.stdout == "after\n", "\(command)")
        }
        let exit = try await Processes.sqlive(["-c", ".exit 255"], directory: directory)
        #expect(exit.status == 255)
    }

    /// The demo's directories left in a temporary directory.
    func demoDirectories(in directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("sqlive-demo-") }
    }

    @Test(
        "A scripted demo ended by SIGTERM or SIGHUP removes its files, even while reading a pipe that stays open",
        arguments: [SIGTERM, SIGHUP])
    func scriptedDemoCleansUp(signal: Int32) async throws {
        let directory = try TemporaryDirectory()
        let temporary = directory.file("tmp")
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: Processes.sqlive)
        process.arguments = ["--demo"]
        process.environment = Processes.environment(["TMPDIR": temporary], directory: directory)
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { try? input.fileHandleForWriting.close() }
        #expect(try await Processes.waitUntil { try !demoDirectories(in: temporary).isEmpty })
        // A statement that waits for the demo's writer; then the pipe stays open, unread.
        input.fileHandleForWriting.write(Data(".wait leaderboard --timeout 30\n".utf8))
        try await Task.sleep(for: .milliseconds(200))
        kill(process.processIdentifier, signal)
        #expect(await Processes.wait(process, timeout: .seconds(30)))
        #expect(await process.exit() == 128 + signal)
        #expect(try demoDirectories(in: temporary).isEmpty)
    }

    @Test("A scripted demo ended by SIGTERM during an endless statement is interrupted and cleaned up")
    func scriptedDemoWaiting() async throws {
        let directory = try TemporaryDirectory()
        let temporary = directory.file("tmp")
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: Processes.sqlive)
        process.arguments = [
            "--demo", "-c", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c;",
        ]
        process.environment = Processes.environment(["TMPDIR": temporary], directory: directory)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        #expect(try await Processes.waitUntil { try !demoDirectories(in: temporary).isEmpty })
        try await Task.sleep(for: .milliseconds(200))
        kill(process.processIdentifier, SIGTERM)
        #expect(await Processes.wait(process, timeout: .seconds(30)))
        #expect(await process.exit() == 128 + SIGTERM)
        #expect(try demoDirectories(in: temporary).isEmpty)
    }

    @Test("An interactive demo ended by SIGTERM restores the terminal and removes its files")
    func interactiveDemoCleansUp() async throws {
        let directory = try TemporaryDirectory()
        let temporary = directory.file("tmp")
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        let tmux = TmuxSession(
            environment: Processes.environment(["TERM": "xterm-256color", "TMPDIR": temporary], directory: directory))
        defer { tmux.kill() }
        let script =
            "'\(Processes.sqlive)' --demo; echo \"exited $?\"; stty -a | tr ' ' '\\n' | grep -x -- '-\\?echo'; sleep 60"
        try await tmux.start(["/bin/sh", "-c", script])
        _ = try await tmux.waitForScreen { $0.contains { $0.hasPrefix("-- leaderboard v1") } }
        let shell = try await tmux.tmux(["list-panes", "-t", "main", "-F", "#{pane_pid}"]).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let child = try #require(try await Processes.childProcess(of: shell))
        kill(child, SIGTERM)
        // The shell prints the exit status, then `echo` or `-echo` from stty.
        let screen = try await tmux.waitForScreen { $0.last?.hasSuffix("echo") == true }
        #expect(screen.contains("exited 143"))
        // The terminal echoes again: readline's settings were undone.
        #expect(screen.last == "echo")
        #expect(try demoDirectories(in: temporary).isEmpty)
    }
}
