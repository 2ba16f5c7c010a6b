import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The part of Foundation's `Process` the tests use, over `posix_spawn`.
///
/// Foundation's `Process.run` on Linux reads past the end of a directory
/// entry while it lists `/proc/self/fd` (swift-corelibs-foundation
/// PR #5472, not in Swift 6.3.1): a `memcpy` that crashes the test process
/// now and then (SIGSEGV or SIGBUS at a page boundary; seen here in about
/// one full run in five). This starts children with `Spawn.spawn` instead;
/// standard streams are a `Pipe`, a `FileHandle` (`nullDevice` included)
/// or this process's.
public final class SpawnedProcess: @unchecked Sendable {
    // Mutable State: set before `run()` by the one test that owns it; `child` once, by `run()`.
    public var executableURL: URL?
    public var arguments: [String] = []
    public var environment: [String: String]?
    public var currentDirectoryURL: URL?
    public var standardInput: Any?
    public var standardOutput: Any?
    public var standardError: Any?
    private var child: Spawn.Child?

    public init() {}

    public func run() throws {
        guard let executable = executableURL?.path else {
            throw CommandFailure(command: "?", status: -1, stderr: "no executable")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        func attach(_ stream: Any?, to descriptor: Int32, reading: Bool) {
            switch stream {
            case let pipe as Pipe:
                let end = reading ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                posix_spawn_file_actions_adddup2(&actions, end.fileDescriptor, descriptor)
                // This side's end must not leak into the child.
                let other = reading ? pipe.fileHandleForWriting : pipe.fileHandleForReading
                _ = fcntl(other.fileDescriptor, F_SETFD, FD_CLOEXEC)
            case let handle as FileHandle:
                posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, descriptor)
            default:
                break  // inherited
            }
        }
        attach(standardInput, to: 0, reading: true)
        attach(standardOutput, to: 1, reading: false)
        attach(standardError, to: 2, reading: false)
        let words =
            currentDirectoryURL.map { ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", $0.path, executable] + arguments }
            ?? [executable] + arguments
        child = try Spawn.spawn(words, actions: &actions, environment: environment)
        // The child has its copies: close ours of its ends, as Process does,
        // so that a reader sees the end of the output when the child exits.
        if let pipe = standardInput as? Pipe { try? pipe.fileHandleForReading.close() }
        for case let pipe as Pipe in [standardOutput, standardError] { try? pipe.fileHandleForWriting.close() }
    }

    public var processIdentifier: Int32 { child?.processIdentifier ?? 0 }

    public var isRunning: Bool { child.map { $0.isRunning } ?? false }

    public func waitUntilExit() {
        _ = child?.waitUntilExit()
    }

    /// The exit status, or 128 + the signal that ended it (as the tests read Foundation's).
    public var terminationStatus: Int32 { child?.waitUntilExit() ?? -1 }

    public func terminate() {
        if let child { kill(child.processIdentifier, SIGTERM) }
    }
}
