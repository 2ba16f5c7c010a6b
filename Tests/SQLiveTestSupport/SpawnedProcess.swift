import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The part of Foundation's `Process` the tests use, started by the
/// `Launcher` (swift-subprocess).
///
/// Foundation's `Process.run` on Linux reads past the end of a directory
/// entry while it lists `/proc/self/fd` (swift-corelibs-foundation
/// PR #5472, not in Swift 6.3.1): a `memcpy` that crashed the test process
/// now and then. Standard streams here are a `Pipe`, a `FileHandle`
/// (`nullDevice` included) or this process's.
public final class SpawnedProcess: @unchecked Sendable {
    // Mutable State: set before `run()` by the one test that owns it; `child` once, by `run()`.
    public var executableURL: URL?
    public var arguments: [String] = []
    public var environment: [String: String]?
    public var currentDirectoryURL: URL?
    public var standardInput: Any?
    public var standardOutput: Any?
    public var standardError: Any?
    private var child: Launcher.Child?

    public init() {}

    public func run() throws {
        guard let executable = executableURL?.path else {
            throw CommandFailure(command: "?", status: -1, stderr: "no executable")
        }
        func stream(_ stream: Any?, reading: Bool) -> Launcher.Stream {
            switch stream {
            case let pipe as Pipe:
                // This side's end must not leak into another child.
                pipe.closeOnExec()
                let end = reading ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                return .descriptor(end.fileDescriptor, closeAfterLaunch: false)
            case let handle as FileHandle where handle === FileHandle.nullDevice || handle.fileDescriptor < 0:
                // Foundation's null device has no descriptor on Linux.
                return .null
            case let handle as FileHandle:
                return .descriptor(handle.fileDescriptor, closeAfterLaunch: false)
            default:
                return .inherit
            }
        }
        child = try Launcher.start(
            executable, arguments, stdin: stream(standardInput, reading: true),
            stdout: stream(standardOutput, reading: false), stderr: stream(standardError, reading: false),
            environment: environment, directory: currentDirectoryURL?.path)
        // The child has its copies: close ours of its ends, as Process does,
        // so that a reader sees the end of the output when the child exits.
        if let pipe = standardInput as? Pipe { try? pipe.fileHandleForReading.close() }
        for case let pipe as Pipe in [standardOutput, standardError] { try? pipe.fileHandleForWriting.close() }
    }

    public var processIdentifier: Int32 { child?.processIdentifier ?? 0 }

    public var isRunning: Bool { child.map { $0.isRunning } ?? false }

    /// Waits for it to end: its exit status, or 128 + the signal that
    /// ended it (as the tests read Foundation's).
    @discardableResult
    public func exit() async -> Int32 {
        await child?.exit() ?? -1
    }

    /// `exit()`, blocking the calling thread: only on a thread of its own
    /// (see `Launcher`).
    public func waitUntilExitBlocking() -> Int32 {
        child?.waitUntilExit() ?? -1
    }

    public func terminate() {
        child?.terminate()
    }
}
