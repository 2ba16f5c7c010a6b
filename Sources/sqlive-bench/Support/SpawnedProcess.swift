import Foundation
import Glibc
import SQLiveLocks

/// The part of Foundation's `Process` the benchmarks use, over
/// `posix_spawn` and `waitpid`.
///
/// Foundation's `Process.run` on Linux reads past the end of a directory
/// entry while it lists `/proc/self/fd` (swift-corelibs-foundation
/// PR #5472, not in Swift 6.3.1): a `memcpy` that crashed the test process
/// now and then, and could crash a benchmark run the same way. Standard
/// streams are a `Pipe`, a `FileHandle` (`nullDevice` included) or this
/// process's. Children are started one at a time here (the benchmarks
/// start them from one task), with no signal blocked or ignored.
final class SpawnedProcess: @unchecked Sendable {
    // Mutable State: set before `run()` by the one scenario that owns it;
    // `pid` once, by `run()`; `status` once reaped, under the lock.
    var executableURL: URL?
    var arguments: [String] = []
    var environment: [String: String]?
    var standardInput: Any?
    var standardOutput: Any?
    var standardError: Any?
    private var pid: pid_t = 0
    private let status = Locked<Int32?>(nil)

    func run() throws {
        guard let executable = executableURL?.path else {
            throw BenchmarkCheckFailed(description: "a child process without an executable")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        func attach(_ stream: Any?, to target: Int32, reading: Bool) {
            switch stream {
            case let pipe as Pipe:
                let end = reading ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                posix_spawn_file_actions_adddup2(&actions, end.fileDescriptor, target)
                // Neither end may leak into a child started later.
                for handle in [pipe.fileHandleForReading, pipe.fileHandleForWriting] {
                    _ = fcntl(handle.fileDescriptor, F_SETFD, FD_CLOEXEC)
                }
            case let handle as FileHandle where handle === FileHandle.nullDevice || handle.fileDescriptor < 0:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", reading ? O_RDONLY : O_WRONLY, 0)
            case let handle as FileHandle:
                posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, target)
            default:
                break  // inherited
            }
        }
        attach(standardInput, to: 0, reading: true)
        attach(standardOutput, to: 1, reading: false)
        attach(standardError, to: 2, reading: false)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGPIPE, SIGCHLD, SIGHUP] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let words = [executable] + arguments
        let argv = words.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for pointer in envp ?? [] { free(pointer) } }
        let code =
            envp.map { envp in posix_spawn(&pid, executable, &actions, &attributes, argv, envp) }
            ?? posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard code == 0 else {
            throw BenchmarkCheckFailed(description: "cannot start \(executable): \(String(cString: strerror(code)))")
        }
        // The child has its copies: close ours of its ends, as Process does,
        // so that a reader sees the end of the output when the child exits.
        if let pipe = standardInput as? Pipe { try? pipe.fileHandleForReading.close() }
        for case let pipe as Pipe in [standardOutput, standardError] { try? pipe.fileHandleForWriting.close() }
    }

    var processIdentifier: Int32 { pid }

    var isRunning: Bool { pid != 0 && reap(blocking: false) == nil }

    func waitUntilExit() {
        _ = reap(blocking: true)
    }

    /// The exit status, or 128 + the signal that ended it; waits for it.
    var terminationStatus: Int32 { reap(blocking: true) ?? -1 }

    /// Sends SIGTERM.
    func terminate() {
        if isRunning { kill(pid, SIGTERM) }
    }

    private func reap(blocking: Bool) -> Int32? {
        guard pid != 0 else { return nil }
        return status.withLock { status in
            if let status { return status }
            var raw: Int32 = 0
            while true {
                let result = waitpid(pid, &raw, blocking ? 0 : WNOHANG)
                if result == pid { break }
                if result == 0 { return nil }
                if errno == EINTR { continue }
                return nil
            }
            let exit = (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
            status = exit
            return exit
        }
    }
}
