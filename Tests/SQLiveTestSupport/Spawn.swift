import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a program to completion with `posix_spawn`: standard input from a
/// file, standard output and error to files, then `waitpid`.
///
/// Foundation's `Process` and `FileHandle` are not used here: `Process.run`
/// over-reads `/proc/self/fd` entries and crashes now and then
/// (swift-corelibs-foundation PR #5472), and `readDataToEndOfFile` traps on
/// an interrupted read (`EINTR`). Files and
/// `waitpid` retried on `EINTR` have neither problem.
public enum Spawn {
    public struct Outcome: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    public static func run(
        _ executable: String, _ arguments: [String], input: String = "", environment: [String: String]? = nil
    ) throws -> Outcome {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sqlive-spawn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let inputPath = directory.appendingPathComponent("in").path
        let outputPath = directory.appendingPathComponent("out").path
        let errorPath = directory.appendingPathComponent("err").path
        try Data(input.utf8).write(to: URL(fileURLWithPath: inputPath))
        let child = try start(
            executable, arguments, stdin: inputPath, stdout: outputPath, stderr: errorPath, environment: environment)
        let status = child.waitUntilExit()
        let stdout = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let stderr = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
        return Outcome(status: status, stdout: stdout, stderr: stderr)
    }

    /// Starts a program with its standard streams on files (`nil`: /dev/null),
    /// in `environment` (this process's when `nil`) and `directory`.
    public static func start(
        _ executable: String, _ arguments: [String], stdin: String?, stdout: String, stderr: String,
        environment: [String: String]? = nil, directory: String? = nil
    ) throws -> Child {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin ?? "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // In another directory: through the shell's `cd` (glibc's addchdir is not visible to Swift).
        let words =
            directory.map { ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", $0, executable] + arguments }
            ?? [executable] + arguments
        return try spawn(words, actions: &actions, environment: environment)
    }

    /// `posix_spawn` of `words` (the program's path first) with the file
    /// actions, in `environment` (this process's when `nil`), under the
    /// spawn lock. No signal is blocked or ignored in the child, whatever
    /// the calling thread's mask (a test runner's thread blocks most, and
    /// a tmux server that cannot receive SIGTERM outlives its test).
    public static func spawn(
        _ words: [String], actions: inout posix_spawn_file_actions_t, environment: [String: String]? = nil
    ) throws -> Child {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGPIPE, SIGCHLD, SIGWINCH, SIGHUP] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = words.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for pointer in envp ?? [] { free(pointer) } }
        var pid: pid_t = 0
        let code = SpawnLock.withLock {
            if let envp { return posix_spawn(&pid, words[0], &actions, &attributes, argv, envp) }
            return posix_spawn(&pid, words[0], &actions, &attributes, argv, environ)
        }
        guard code == 0 else {
            throw CommandFailure(
                command: words.joined(separator: " "), status: -1, stderr: String(cString: strerror(code)))
        }
        return Child(pid: pid)
    }

    /// A child started by `start`: wait for it, or signal it.
    public final class Child: @unchecked Sendable {
        public let processIdentifier: pid_t
        // Mutable State: guarded by the lock; the exit status once reaped.
        private let lock = NSLock()
        private var status: Int32?

        init(pid: pid_t) {
            processIdentifier = pid
        }

        /// Whether it still runs (reaps it when it ended).
        public var isRunning: Bool { reap(blocking: false) == nil }

        /// Its exit status (128 + N when killed by signal N); waits for it.
        public var terminationStatus: Int32 { waitUntilExit() }

        @discardableResult
        public func waitUntilExit() -> Int32 { reap(blocking: true) ?? -1 }

        /// Sends SIGTERM.
        public func terminate() {
            if isRunning { kill(processIdentifier, SIGTERM) }
        }

        private func reap(blocking: Bool) -> Int32? {
            lock.lock()
            defer { lock.unlock() }
            if let status { return status }
            var raw: Int32 = 0
            while true {
                let result = waitpid(processIdentifier, &raw, blocking ? 0 : WNOHANG)
                if result == processIdentifier { break }
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

/// One child process started at a time, across every test: a pipe made
/// close-on-exec under it is never inherited by a child started meanwhile.
/// (The tests start no process through Foundation's `Process`, whose `run`
/// over-reads `/proc/self/fd` and crashes now and then: `SpawnedProcess`.)
public enum SpawnLock {
    private static let lock = NSLock()

    static func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}

extension Spawn {
    /// A child whose standard input (and output, when asked) are pipes to
    /// this process; its standard error is this process's. Reads and writes
    /// retry on `EINTR`; the pipes are close-on-exec on this side, so no
    /// other child inherits them.
    public final class PipedChild: @unchecked Sendable {
        public let child: Child
        /// This side's ends (immutable after init; closed by `closeInput`
        /// and `deinit` under the lock).
        private var input: Int32
        private let output: Int32
        private let lock = NSLock()

        public init(_ executable: String, _ arguments: [String], readsOutput: Bool = true) throws {
            var inputPipe: [Int32] = [-1, -1]
            var outputPipe: [Int32] = [-1, -1]
            guard Self.closeOnExecPipe(&inputPipe) else {
                throw CommandFailure(command: executable, status: -1, stderr: "pipe")
            }
            if readsOutput {
                guard Self.closeOnExecPipe(&outputPipe) else {
                    close(inputPipe[0])
                    close(inputPipe[1])
                    throw CommandFailure(command: executable, status: -1, stderr: "pipe")
                }
            }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_adddup2(&actions, inputPipe[0], 0)
            if readsOutput {
                posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 1)
            } else {
                posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            }
            let child: Child
            do {
                child = try Spawn.spawn([executable] + arguments, actions: &actions)
            } catch {
                for end in inputPipe + (readsOutput ? outputPipe : []) { close(end) }
                throw error
            }
            close(inputPipe[0])
            if readsOutput { close(outputPipe[1]) }
            self.child = child
            input = inputPipe[1]
            output = readsOutput ? outputPipe[0] : -1
        }

        deinit {
            closeInput()
            if output >= 0 { close(output) }
        }

        /// A pipe whose ends are close-on-exec (set under the spawn lock, so
        /// no child started meanwhile inherits them).
        private static func closeOnExecPipe(_ ends: inout [Int32]) -> Bool {
            SpawnLock.withLock {
                guard pipe(&ends) == 0 else { return false }
                for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
                return true
            }
        }

        /// Writes all of the text to the child's input (nothing once it is closed).
        public func write(_ text: String) {
            lock.lock()
            defer { lock.unlock() }
            guard input >= 0 else { return }
            var bytes = Array(text.utf8)[...]
            while !bytes.isEmpty {
                let written = bytes.withUnsafeBytes { Glibc.write(input, $0.baseAddress, $0.count) }
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                bytes = bytes.dropFirst(written)
            }
        }

        /// Reads what the child printed; empty at the end of its output.
        public func read() -> Data {
            guard output >= 0 else { return Data() }
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(output, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                return count > 0 ? Data(buffer[0..<count]) : Data()
            }
        }

        /// Closes the child's input: it sees the end of it.
        public func closeInput() {
            lock.lock()
            defer { lock.unlock() }
            if input >= 0 {
                close(input)
                input = -1
            }
        }
    }
}
