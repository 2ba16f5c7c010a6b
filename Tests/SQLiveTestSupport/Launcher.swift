import Foundation
import Subprocess
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// The tests' one way to start a program: swift-subprocess, from blocking
/// code as well as async code.
///
/// swift-subprocess is asynchronous, and a launch needs Swift
/// concurrency's pool to finish: every `run` awaits an unstructured task of
/// its own (`withUncancelledTask`), which runs on the pool whatever the
/// caller's executor. So async code awaits (`run`, `Child.exit()`), and
/// never blocks a pool thread while a child runs: with the pool's threads
/// (two here) blocked, no launch ends. Code on a thread of its own (a
/// writer in lockstep, a dispatch queue) may block (`runBlocking`,
/// `waitUntilExit`): each launch runs in a task that prefers
/// `LauncherExecutor`, so it needs nothing of the blocked caller's thread.
///
/// A child gets only its standard streams (swift-subprocess closes every
/// other descriptor in it) and no blocked or ignored signal, whatever the
/// calling thread's mask (a tmux server that cannot receive SIGTERM would
/// outlive its test).
public enum Launcher {
    /// What a program printed, and how it ended.
    public struct Outcome: Sendable {
        /// The exit status, or 128 + the signal that ended it.
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// Where one of a child's standard streams goes.
    public enum Stream: Sendable {
        /// This process's own stream.
        case inherit
        /// `/dev/null`.
        case null
        /// A file: read from for standard input; created or truncated for output.
        case file(String)
        /// A descriptor of this process (one end of a pipe); closed here
        /// once the child has its copy when `closeAfterLaunch`.
        case descriptor(Int32, closeAfterLaunch: Bool)
    }

    /// SIGPIPE ignored in this process, once: a child that exits without
    /// reading all of its input makes the write to it fail (EPIPE) instead
    /// of killing the test process. (A child starts with every signal at
    /// its default.)
    private static let ignoreBrokenPipes: Void = {
        signal(SIGPIPE, SIG_IGN)
    }()

    /// Runs a program to completion, `input` on its standard input, and
    /// collects what it printed.
    public static func run(
        _ executable: String, _ arguments: [String], input: String = "", environment: [String: String]? = nil
    ) async throws -> Outcome {
        _ = ignoreBrokenPipes
        let result = try await Subprocess.run(
            .path(FilePath(executable)), arguments: Arguments(arguments),
            environment: subprocessEnvironment(environment), input: .string(input),
            output: .string(limit: 1 << 28), error: .string(limit: 1 << 28))
        return Outcome(
            status: status(result.terminationStatus), stdout: result.standardOutput, stderr: result.standardError)
    }

    /// `run`, blocking the calling thread: only on a thread of its own,
    /// never on one of Swift concurrency's pool (a launch needs the pool to
    /// finish).
    public static func runBlocking(
        _ executable: String, _ arguments: [String], input: String = "", environment: [String: String]? = nil
    ) throws -> Outcome {
        _ = ignoreBrokenPipes
        return try LauncherExecutor.shared.wait {
            let result = try await Subprocess.run(
                .path(FilePath(executable)), arguments: Arguments(arguments),
                environment: subprocessEnvironment(environment), input: .string(input),
                output: .string(limit: 1 << 28), error: .string(limit: 1 << 28))
            return Outcome(
                status: status(result.terminationStatus), stdout: result.standardOutput,
                stderr: result.standardError)
        }
    }

    /// Starts a program with its standard streams where they are asked to
    /// go, in `environment` (this process's when `nil`) and `directory`.
    public static func start(
        _ executable: String, _ arguments: [String], stdin: Stream = .null, stdout: Stream = .inherit,
        stderr: Stream = .inherit, environment: [String: String]? = nil, directory: String? = nil
    ) throws -> Child {
        _ = ignoreBrokenPipes
        // What this function opened, closed here if a later step fails
        // (once the launch began, swift-subprocess closes what it was given).
        var opened: [FileDescriptor] = []
        func open(_ stream: Stream, writing: Bool, standard: FileDescriptor) throws -> (FileDescriptor, Bool) {
            let made = try descriptor(for: stream, writing: writing, standard: standard)
            if case .file = stream { opened.append(made.descriptor) }
            if case .null = stream { opened.append(made.descriptor) }
            return made
        }
        let input: (descriptor: FileDescriptor, close: Bool)
        let output: (descriptor: FileDescriptor, close: Bool)
        var error: (descriptor: FileDescriptor, close: Bool)
        do {
            input = try open(stdin, writing: false, standard: .standardInput)
            output = try open(stdout, writing: true, standard: .standardOutput)
            error = try open(stderr, writing: true, standard: .standardError)
            if error.descriptor == output.descriptor {
                // One descriptor for both (`2>&1`): the child's second copy
                // comes from a duplicate, since swift-subprocess closes the
                // original once it made the first.
                error = (try error.descriptor.duplicate(), true)
            }
        } catch {
            for descriptor in opened { try? descriptor.close() }
            throw error
        }
        let configuration = Configuration(
            executable: .path(FilePath(executable)), arguments: Arguments(arguments),
            environment: subprocessEnvironment(environment), workingDirectory: directory.map { FilePath($0) })
        let child = Child()
        child.launch = Task(executorPreference: LauncherExecutor.shared) {
            do {
                let result = try await Subprocess.run(
                    configuration,
                    input: .fileDescriptor(input.descriptor, closeAfterSpawningProcess: input.close),
                    output: .fileDescriptor(output.descriptor, closeAfterSpawningProcess: output.close),
                    error: .fileDescriptor(error.descriptor, closeAfterSpawningProcess: error.close)
                ) { execution in
                    child.didStart(execution.processIdentifier.value)
                }
                child.didExit(status(result.terminationStatus))
            } catch {
                child.didFail(error)
            }
        }
        try child.waitUntilStarted(command: ([executable] + arguments).joined(separator: " "))
        return child
    }

    /// A child started by `start`: wait for it, or signal it.
    public final class Child: @unchecked Sendable {
        // Mutable State: guarded by the condition's lock; each set once, by
        // the launch task (on the launcher's thread).
        private let condition = NSCondition()
        private var pid: pid_t?
        private var status: Int32?
        private var failure: (any Error)?
        /// The task that launched the child and waits for its end (owned
        /// here; it ends when the child does).
        fileprivate var launch: Task<Void, Never>?

        fileprivate init() {}

        public var processIdentifier: pid_t { condition.withLock { pid ?? 0 } }

        /// Whether it still runs.
        public var isRunning: Bool { condition.withLock { status == nil && failure == nil } }

        /// Its exit status (128 + N when killed by signal N), once it ended.
        public func exit() async -> Int32 {
            await launch?.value
            return condition.withLock { status ?? -1 }
        }

        /// `exit()`, blocking the calling thread: only on a thread of its
        /// own, never on one of Swift concurrency's pool (see `Launcher`).
        @discardableResult
        public func waitUntilExit() -> Int32 {
            condition.withLock {
                while status == nil && failure == nil { condition.wait() }
                return status ?? -1
            }
        }

        /// Sends SIGTERM.
        public func terminate() {
            send(SIGTERM)
        }

        /// Sends a signal, while it runs.
        public func send(_ signal: Int32) {
            condition.withLock {
                if let pid, status == nil { kill(pid, signal) }
            }
        }

        fileprivate func didStart(_ pid: pid_t) {
            condition.withLock {
                self.pid = pid
                condition.broadcast()
            }
        }

        fileprivate func didExit(_ status: Int32) {
            condition.withLock {
                self.status = status
                condition.broadcast()
            }
        }

        fileprivate func didFail(_ error: any Error) {
            condition.withLock {
                failure = error
                condition.broadcast()
            }
        }

        fileprivate func waitUntilStarted(command: String) throws {
            let launchFailure = condition.withLock {
                while pid == nil && failure == nil { condition.wait() }
                return pid == nil ? failure : nil
            }
            if let failure = launchFailure {
                throw CommandFailure(command: command, status: -1, stderr: "cannot start: \(failure)")
            }
        }
    }

    private static func descriptor(for stream: Stream, writing: Bool, standard: FileDescriptor) throws
        -> (descriptor: FileDescriptor, close: Bool)
    {
        switch stream {
        case .inherit:
            return (standard, false)
        case .null:
            return (try FileDescriptor.open("/dev/null", writing ? .writeOnly : .readOnly, options: .closeOnExec), true)
        case .file(let path) where writing:
            return (
                try FileDescriptor.open(
                    path, .writeOnly, options: [.create, .truncate, .closeOnExec], permissions: [.ownerReadWrite]),
                true
            )
        case .file(let path):
            return (try FileDescriptor.open(path, .readOnly, options: .closeOnExec), true)
        case .descriptor(let raw, let closeAfterLaunch):
            return (FileDescriptor(rawValue: raw), closeAfterLaunch)
        }
    }

    private static func subprocessEnvironment(_ environment: [String: String]?) -> Subprocess.Environment {
        guard let environment else { return .inherit }
        return .custom(
            Dictionary(
                uniqueKeysWithValues: environment.map { (Subprocess.Environment.Key(stringLiteral: $0.key), $0.value) })
        )
    }

    private static func status(_ termination: TerminationStatus) -> Int32 {
        switch termination {
        case .exited(let code): code
        case .signaled(let signal): 128 + signal
        }
    }
}

/// The thread every launch runs on (see `Launcher`): a task executor
/// that runs its jobs one after the other, so that code which blocks on a
/// launch never waits for Swift concurrency's pool.
///
/// Its thread lives as long as the test process (the process is its owner);
/// it sleeps when there is nothing to run.
public final class LauncherExecutor: TaskExecutor, @unchecked Sendable {
    public static let shared = LauncherExecutor()

    // Mutable State: guarded by the condition's lock.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    private init() {
        let thread = Thread { [unowned self] in serve() }
        thread.name = "sqlive-tests.launcher"
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.withLock {
            jobs.append(job)
            condition.signal()
        }
    }

    private func serve() {
        while true {
            let batch = condition.withLock {
                while jobs.isEmpty { condition.wait() }
                defer { jobs.removeAll(keepingCapacity: true) }
                return jobs
            }
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }

    /// Runs `operation` on this executor and waits for it, blocking the
    /// calling thread.
    func wait<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) throws -> T {
        let box = WaitBox<T>()
        // Waited for below: the task ends before this returns.
        Task(executorPreference: self) {
            let outcome: Result<T, any Error>
            do {
                outcome = .success(try await operation())
            } catch {
                outcome = .failure(error)
            }
            box.condition.withLock {
                box.result = outcome
                box.condition.signal()
            }
        }
        return try box.condition.withLock {
            while box.result == nil { box.condition.wait() }
            return box.result!
        }.get()
    }
}

/// What `LauncherExecutor.wait` waits for.
private final class WaitBox<T: Sendable>: @unchecked Sendable {
    // Mutable State: guarded by the condition's lock; set once, by the task.
    let condition = NSCondition()
    var result: Result<T, any Error>?
}
