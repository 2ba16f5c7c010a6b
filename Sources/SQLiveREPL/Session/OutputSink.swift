import Foundation
import SQLiveLocks
import SystemPackage

/// Writes a session's output to standard output and standard error.
///
/// The elapsed-time indicator shares standard error with messages, and a
/// terminal with standard output: the sink clears the indicator before any
/// other write, and shows it only when nothing else was written for a
/// second, so the two never garble each other.
///
/// Results (`write`) go to standard output, or to the file that `.output`
/// or `.once` named (`redirectResults`); what belongs to the terminal
/// (`writeTerminal`: live queries' prints, the timer, the banner) always
/// goes to standard output, as the sqlite3 shell's `printf`s do.
///
/// A scripted session's sink is *buffered*, as the C shell's stdio is when
/// its output is not a terminal: standard output is written in chunks of
/// 64 KiB, not once per statement. Whatever is pending is written before
/// anything goes to standard error (so the two keep their order), before
/// the session waits (for input, or in `.wait`) and when it ends: `flush()`.
final class OutputSink: Sendable {
    /// Standard output was closed (`sqlive ... | head`): stop writing.
    struct Closed: Error {}

    // Mutable State: guarded by the mutex. Writes come from the session
    // thread; the indicator from its timer's queue.
    private struct State {
        var indicatorShown = false
        var lastOutput = ContinuousClock.now
        var closed = false
        /// Output not written yet (buffered sinks only).
        var pending: [UInt8] = []
        /// Where results go instead of standard output.
        var redirection: Redirection?
        var failedWrites = 0
    }

    /// A file results are written to, in chunks.
    ///
    /// A regular file is written under another name beside it and renamed
    /// to `path` once whole and synced (when the redirection ends), so a
    /// failed write (a full disk) never leaves a truncated file posing as
    /// complete: the old file stays, the partial one is removed. A FIFO or
    /// a device (`/dev/stdout`) is written directly.
    private struct Redirection {
        var path: String
        var descriptor: Int32
        /// The file written until it is renamed to `path`; `nil` when `path`
        /// itself is written.
        var temporary: String?
        var pending: [UInt8] = []
        /// A write failed: the rest is dropped (the error was reported once).
        var failed = false
        /// `.output |COMMAND`: the shell running the command, which reads
        /// `descriptor`'s other end; waited for when the pipe closes.
        var process: pid_t?
    }
    private let state = Locked(State())
    /// Whether standard output is written in chunks (scripted sessions).
    let buffered: Bool
    private static let chunkSize = 1 << 16

    init(buffered: Bool = false) {
        self.buffered = buffered
    }

    /// Whether the elapsed-time indicator shows now.
    var isIndicatorShown: Bool { state.withLock { $0.indicatorShown } }

    /// Whether standard output was closed.
    var isClosed: Bool { state.withLock { $0.closed } }

    /// Writes results: to standard output, or to the file `.output` named.
    func write(_ text: String) throws(Closed) {
        var text = text
        if !text.withUTF8({ output(UnsafeRawBufferPointer($0), results: true) }) { throw Closed() }
    }

    /// Writes results' bytes: to standard output, or to the file `.output` named.
    func write(_ bytes: UnsafeRawBufferPointer) throws(Closed) {
        if !output(bytes, results: true) { throw Closed() }
    }

    /// Writes to standard output, wherever results go.
    func writeTerminal(_ text: String) throws(Closed) {
        var text = text
        if !text.withUTF8({ output(UnsafeRawBufferPointer($0), results: false) }) { throw Closed() }
    }

    /// Sends results to a file from now on (created, or emptied), until
    /// `resetResults`; the file results went to before is closed.
    func redirectResults(toFile path: String) throws(RedirectionFailure) {
        var status = stat()
        let special = stat(path, &status) == 0 && status.st_mode & S_IFMT != S_IFREG
        var temporary: String?
        if !special {
            // Fails as opening `path` would: a missing directory, no permission.
            let probe = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o666)
            guard probe >= 0 else {
                throw RedirectionFailure(message: "cannot write to \"\(path)\": \(String(cString: strerror(errno)))")
            }
            Glibc.close(probe)
            let directory = (path as NSString).deletingLastPathComponent
            let name = (path as NSString).lastPathComponent
            temporary =
                (directory.isEmpty ? "" : directory + "/") + ".\(name).sqlive-\(getpid())-\(Self.nextTemporary())"
        }
        let descriptor = open(temporary ?? path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            throw RedirectionFailure(message: "cannot write to \"\(path)\": \(String(cString: strerror(errno)))")
        }
        let previous = state.withLock { state in
            defer {
                state.redirection = Redirection(path: path, descriptor: descriptor, temporary: temporary)
            }
            return state.redirection
        }
        if let previous { close(previous) }
    }

    /// Sends results to a command's standard input from now on
    /// (`.output |COMMAND`, as sqlite3's `popen`): `/bin/sh -c COMMAND`,
    /// writing to this process's standard output and error; closed, and
    /// waited for, by `resetResults`.
    func redirectResults(toCommand command: String) throws(RedirectionFailure) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            throw RedirectionFailure(message: "cannot open pipe \"\(command)\"")
        }
        // Neither end goes to other children (the command itself gets the
        // read end as its standard input): it sees the end of its input
        // when this process closes the write end.
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, ends[0], 0)
        var child: pid_t = 0
        let arguments = ["/bin/sh", "-c", command]
        var pointers = arguments.map { strdup($0) } + [nil]
        defer { for pointer in pointers { free(pointer) } }
        let status = posix_spawn(&child, "/bin/sh", &actions, nil, &pointers, environ)
        Glibc.close(ends[0])
        guard status == 0 else {
            Glibc.close(ends[1])
            throw RedirectionFailure(message: "cannot open pipe \"\(command)\"")
        }
        let previous = state.withLock { state in
            defer {
                state.redirection = Redirection(
                    path: "|" + command, descriptor: ends[1], temporary: nil, process: child)
            }
            return state.redirection
        }
        if let previous { close(previous) }
    }

    private static let temporaryCounter = Locked(0)
    private static func nextTemporary() -> Int {
        temporaryCounter.withLock { counter in
            counter += 1
            return counter
        }
    }

    /// How many writes of results to a file failed (a full disk, an I/O
    /// error): the session fails, as its output is not whole.
    var failedWrites: Int { state.withLock { $0.failedWrites } }

    /// Sends results to standard output again, closing the file.
    func resetResults() {
        if let previous = state.withLock({ state in
            defer { state.redirection = nil }
            return state.redirection
        }) {
            close(previous)
        }
    }

    /// The file results go to, if any.
    var resultsFile: String? { state.withLock { $0.redirection?.path } }

    /// `.output FILE` could not open FILE.
    struct RedirectionFailure: Error {
        var message: String
    }

    private func close(_ redirection: Redirection) {
        var redirection = redirection
        Self.writePending(&redirection, errors: self)
        if let temporary = redirection.temporary {
            // Whole and on disk before it takes the name; else it goes.
            if !redirection.failed && fsync(redirection.descriptor) != 0 {
                redirection.failed = true
                writeError("Error: cannot write to \"\(redirection.path)\": \(String(cString: strerror(errno)))\n")
            }
            Glibc.close(redirection.descriptor)
            if redirection.failed || rename(temporary, redirection.path) != 0 {
                if !redirection.failed {
                    writeError(
                        "Error: cannot write to \"\(redirection.path)\": \(String(cString: strerror(errno)))\n")
                    redirection.failed = true
                }
                unlink(temporary)
            }
        } else {
            Glibc.close(redirection.descriptor)
        }
        if let process = redirection.process {
            // Its output comes before what follows, as with sqlite3's pclose.
            var status: Int32 = 0
            while waitpid(process, &status, 0) < 0 && errno == EINTR {}
        }
        if redirection.failed { state.withLock { $0.failedWrites += 1 } }
    }

    /// Writes bytes to standard output, or to the results' file; false
    /// when standard output is closed.
    private func output(_ bytes: UnsafeRawBufferPointer, results: Bool) -> Bool {
        guard !bytes.isEmpty else { return true }
        if results,
            let failed = state.withLock({ state -> Bool? in
                guard state.redirection != nil else { return nil }
                state.redirection!.pending.append(contentsOf: bytes)
                return state.redirection!.pending.count >= Self.chunkSize
            })
        {
            if failed { flushResultsFile() }
            return true
        }
        return state.withLock { state in
            if state.indicatorShown {
                Self.writeAll(2, "\r\u{1B}[2K")
                state.indicatorShown = false
            }
            state.lastOutput = .now
            guard !state.closed else { return false }
            if buffered {
                state.pending.append(contentsOf: bytes)
                if state.pending.count >= Self.chunkSize { Self.writePending(&state) }
            } else if !Self.writeAll(1, bytes) {
                state.closed = true
            }
            return !state.closed
        }
    }

    /// Writes what a buffered sink holds, and what waits for the results' file.
    func flush() {
        state.withLock { Self.writePending(&$0) }
        flushResultsFile()
    }

    /// Writes what waits for the results' file.
    private func flushResultsFile() {
        var redirection: Redirection?
        state.withLock { state in
            redirection = state.redirection
            state.redirection?.pending.removeAll(keepingCapacity: true)
        }
        guard var redirection, !redirection.pending.isEmpty else { return }
        let failedBefore = redirection.failed
        Self.writePending(&redirection, errors: self)
        if redirection.failed && !failedBefore {
            state.withLock { if $0.redirection?.descriptor == redirection.descriptor { $0.redirection?.failed = true } }
        }
    }

    /// Writes a file's pending bytes; reports the first failure on standard error.
    private static func writePending(_ redirection: inout Redirection, errors: OutputSink) {
        defer { redirection.pending.removeAll(keepingCapacity: true) }
        guard !redirection.failed, !redirection.pending.isEmpty else { return }
        let written = redirection.pending.withUnsafeBytes { writeAll(redirection.descriptor, $0) }
        if !written {
            redirection.failed = true
            errors.writeError("Error: cannot write to \"\(redirection.path)\": \(String(cString: strerror(errno)))\n")
        }
    }

    private static func writePending(_ state: inout State) {
        guard !state.pending.isEmpty else { return }
        if !state.closed, !state.pending.withUnsafeBytes({ writeAll(1, $0) }) { state.closed = true }
        state.pending.removeAll(keepingCapacity: true)
    }

    /// Writes to standard error.
    func writeError(_ text: String) {
        state.withLock { state in
            Self.writePending(&state)
            if state.indicatorShown {
                Self.writeAll(2, "\r\u{1B}[2K")
                state.indicatorShown = false
            }
            state.lastOutput = .now
            Self.writeAll(2, text)
        }
    }

    /// Shows the indicator on standard error, unless output was written in the last second.
    func showIndicator(_ text: String) {
        state.withLock { state in
            guard state.indicatorShown || ContinuousClock.now - state.lastOutput > .seconds(1) else { return }
            Self.writeAll(2, "\r\u{1B}[2K" + text)
            state.indicatorShown = true
        }
    }

    /// Removes the indicator, if shown.
    func clearIndicator() {
        state.withLock { state in
            if state.indicatorShown {
                Self.writeAll(2, "\r\u{1B}[2K")
                state.indicatorShown = false
            }
        }
    }

    /// Marks the start of a command, for the indicator's one-second delay.
    func commandDidStart() {
        state.withLock { $0.lastOutput = .now }
    }

    /// Writes every byte, retrying after signals; false when the stream is closed.
    @discardableResult
    private static func writeAll(_ fd: Int32, _ text: String) -> Bool {
        var text = text
        return text.withUTF8 { writeAll(fd, UnsafeRawBufferPointer($0)) }
    }

    /// Writes every byte (`FileDescriptor.writeEverything`); false when the stream is closed.
    private static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Bool {
        do {
            try FileDescriptor(rawValue: fd).writeEverything(buffer)
            return true
        } catch {
            return false
        }
    }
}
