import Foundation
import SQLiveLocks
import SQLiveTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The tests' one launcher (swift-subprocess underneath): what every test
/// that starts a process relies on.
@Suite("The tests' launcher", .timeLimit(.minutes(1)))
struct LauncherTests {
    @Test("A program runs to completion: its input given, its output and error collected, its exit status")
    func runsToCompletion() async throws {
        let outcome = try await Launcher.run("/bin/sh", ["-c", "cat; echo err >&2; exit 3"], input: "in")
        #expect(outcome.stdout == "in")
        #expect(outcome.stderr == "err\n")
        #expect(outcome.status == 3)
    }

    @Test("A child killed by a signal reports 128 + the signal, as a shell does")
    func killedBySignal() async throws {
        let child = try Launcher.start("/bin/sleep", ["30"], stdout: .null, stderr: .null)
        #expect(child.isRunning)
        child.send(SIGKILL)
        #expect(await child.exit() == 128 + SIGKILL)
        #expect(!child.isRunning)
    }

    @Test("A child gets its environment, its directory, and no descriptor but its three standard ones")
    func environmentDirectoryDescriptors() async throws {
        let directory = try TemporaryDirectory()
        // A descriptor of this process that a leaky launch would hand on.
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { for end in ends { close(end) } }
        let output = directory.path("out")
        let child = try Launcher.start(
            "/bin/sh", ["-c", "echo \"$GREETING\"; pwd; ls /proc/self/fd | sort -n | tr '\\n' ' '"],
            stdout: .file(output), environment: ["GREETING": "hello", "PATH": "/usr/bin:/bin"],
            directory: directory.url.path)
        #expect(await child.exit() == 0)
        let lines = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n")
        #expect(lines.first == "hello")
        #expect(lines.dropFirst().first.map(String.init) == directory.url.resolvingSymlinksInPath().path)
        // 0, 1, 2, and the descriptor `ls` opened to list them.
        #expect(lines.last.map { $0.split(separator: " ").count } == 4, "\(lines)")
    }

    @Test("A thread of its own may block on a launch, and many may at once")
    func blockingFromThreads() async throws {
        let results = Locked<[Int32]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let group = DispatchGroup()
            for index in 0..<8 {
                group.enter()
                Thread.detachNewThread {
                    let status = (try? Launcher.runBlocking("/bin/sh", ["-c", "exit \(index)"]).status) ?? -1
                    results.withLock { $0.append(status) }
                    group.leave()
                }
            }
            group.notify(queue: .global()) { done.resume() }
        }
        #expect(results.withLock { $0.sorted() } == Array(0..<8))
    }
}
