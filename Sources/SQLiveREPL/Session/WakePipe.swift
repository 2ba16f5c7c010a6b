import Foundation
import Synchronization

/// A pipe that wakes a `poll` loop: live-query events, Ctrl-C and window
/// resizes write a byte to it; the loop drains it and looks at what changed.
final class WakePipe: Sendable {
    let readDescriptor: Int32
    private let writeDescriptor: Int32
    /// Set by `post`, cleared by `drainIfPosted`: lets the session skip a
    /// system call per statement when nothing was posted.
    private let posted = Atomic<Bool>(false)

    init() {
        var fds: [Int32] = [0, 0]
        if pipe(&fds) != 0 {
            fatalError("sqlive: cannot create a pipe: \(String(cString: strerror(errno)))")
        }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        readDescriptor = fds[0]
        writeDescriptor = fds[1]
    }

    /// Wakes the loop. Never blocks: a full pipe already wakes it.
    func post() {
        posted.store(true, ordering: .releasing)
        var byte: UInt8 = 1
        _ = Foundation.write(writeDescriptor, &byte, 1)
    }

    /// Empties the pipe.
    func drain() {
        posted.store(false, ordering: .relaxed)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { buffer in
            while Foundation.read(readDescriptor, buffer.baseAddress!, buffer.count) > 0 {}
        }
    }

    /// Empties the pipe if anything was posted since the last drain.
    ///
    /// A byte posted just after the check stays in the pipe: loops that
    /// `poll` the pipe call `drain`, which always reads.
    func drainIfPosted() {
        if posted.exchange(false, ordering: .acquiring) { drain() }
    }

    /// Waits until the pipe is posted or the timeout passes; true when posted.
    @discardableResult
    func wait(timeout: Duration) -> Bool {
        var descriptor = pollfd(fd: readDescriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = max(0, Int32(min(timeout.milliseconds.rounded(.up), Double(Int32.max))))
        let result = poll(&descriptor, 1, milliseconds)
        if result > 0 { drain() }
        return result > 0
    }

    deinit {
        close(readDescriptor)
        close(writeDescriptor)
    }
}
