import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A pipe that wakes a `poll` loop: whoever has news writes a byte to it
/// (`post`); the loop polls `readDescriptor`, drains it and looks at what
/// changed. The REPL's session loop (live-query events, Ctrl-C, window
/// resizes), the file watchers' stop signal and their inotify events use one.
/// Both ends neither block nor pass to child processes; both close when the
/// pipe is released.
public final class WakePipe: Sendable {
    /// The pipe could not be made (no descriptors left).
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    public let readDescriptor: Int32
    private let writeDescriptor: Int32
    /// Set by `post`, cleared by `drainIfPosted`: lets the session skip a
    /// system call per statement when nothing was posted.
    private let posted = Atomic<Bool>(false)

    public init() throws(Unavailable) {
        var fds: [Int32] = [0, 0]
        if pipe(&fds) != 0 {
            throw Unavailable(description: "cannot create a pipe: \(String(cString: strerror(errno)))")
        }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        readDescriptor = fds[0]
        writeDescriptor = fds[1]
    }

    /// Wakes the loop. Never blocks: a full pipe already wakes it.
    public func post() {
        posted.store(true, ordering: .releasing)
        var byte: UInt8 = 1
        _ = Glibc.write(writeDescriptor, &byte, 1)
    }

    /// Empties the pipe.
    public func drain() {
        posted.store(false, ordering: .relaxed)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { buffer in
            while Glibc.read(readDescriptor, buffer.baseAddress!, buffer.count) > 0 {}
        }
    }

    /// Empties the pipe if anything was posted since the last drain.
    ///
    /// A byte posted just after the check stays in the pipe: loops that
    /// `poll` the pipe call `drain`, which always reads.
    public func drainIfPosted() {
        if posted.exchange(false, ordering: .acquiring) { drain() }
    }

    /// Waits until the pipe is posted or the timeout passes; true when posted.
    @discardableResult
    public func wait(timeout: Duration) -> Bool {
        var descriptor = pollfd(fd: readDescriptor, events: Int16(POLLIN), revents: 0)
        let (seconds, attoseconds) = timeout.components
        let exact = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        let milliseconds = max(0, Int32(min(exact.rounded(.up), Double(Int32.max))))
        let result = poll(&descriptor, 1, milliseconds)
        if result > 0 { drain() }
        return result > 0
    }

    deinit {
        close(readDescriptor)
        close(writeDescriptor)
    }
}
