import Foundation
import SQLiveTestSupport
import SystemPackage
import Testing

/// `sqlive FILE --changes` whose output cannot be written (a full disk:
/// `/dev/full`; a pipe nobody reads any more) exits 1 and says on standard
/// error from which commit on the rows were lost, instead of ending as if
/// it had been interrupted.
@Suite("The change feed's lost output", .timeLimit(.minutes(2)))
struct ChangeFeedOutputTests {
    @Test("A full disk or a closed pipe: exit 1, and what was lost on standard error", arguments: ["full", "closed"])
    func unwritableOutput(_ output: String) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("feed.sqlite")
        try await SQLite3CLI.run(path, "PRAGMA journal_mode=wal; CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);")
        let errors = try FileDescriptor.pipe()
        let stdout: Launcher.Stream
        if output == "full" {
            stdout = .file("/dev/full")
        } else {
            let pipe = try FileDescriptor.pipe()
            try pipe.readEnd.close()
            stdout = .descriptor(pipe.writeEnd.rawValue, closeAfterLaunch: true)
        }
        let child = try Launcher.start(
            SQLiveBinary.path, [path, "--changes"], stdout: stdout,
            stderr: .descriptor(errors.writeEnd.rawValue, closeAfterLaunch: true))
        defer { child.terminate() }
        // Commit until the feed, once it watches, fails to write a row and ends.
        let deadline = ContinuousClock.now + .seconds(60)
        var commits = 0
        while child.isRunning && ContinuousClock.now < deadline {
            commits += 1
            try await SQLite3CLI.run(path, "INSERT INTO t(v) VALUES ('row \(commits)');")
            let settle = ContinuousClock.now + .milliseconds(500)
            while child.isRunning && ContinuousClock.now < settle { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(!child.isRunning, "the feed went on after \(commits) commits it could not write")
        let status = await child.exit()
        var said = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = try buffer.withUnsafeMutableBytes { try errors.readEnd.read(into: $0) }
            if count == 0 { break }
            said += buffer[0..<count]
        }
        try errors.readEnd.close()
        let message = String(decoding: said, as: UTF8.self)
        #expect(status == 1, "\(message)")
        let reason = output == "full" ? "No space left on device" : "Broken pipe"
        #expect(message.contains("cannot write to standard output (\(reason))"), "\(message)")
        #expect(message.contains("were not all written, and no later commit is"), "\(message)")
    }
}
