import Foundation
import SQLiveLocks

/// The one owner of the protocol's output: frames never interleave.
///
/// `send` encodes a message with Foundation's `JSONEncoder` and hands its
/// frame to a serial queue that writes it whole, so responses and
/// notifications sent from any task come out one frame after the other. Writing happens off Swift's cooperative
/// pool: a client slow to read never blocks a task.
public final class MessageWriter: Sendable {
    private let fileDescriptor: Int32
    private let queue = DispatchQueue(label: "sqlive.rpc.writer")
    // Mutable State: set once when writing fails (the client went away);
    // guarded by the mutex, read before each write.
    private let failed = Locked(false)

    /// A writer to a file descriptor, which it does not close.
    public init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
    }

    /// Sends one message (a response, a notification or a batch).
    ///
    /// The message is encoded by the caller's task, and written in order.
    public func send(_ message: OutgoingMessage) {
        guard let frame = MessageFraming.frame(message) else { return }
        send(frame: frame)
    }

    /// Sends bytes as they are; tests use it to write raw frames.
    public func send(frame: [UInt8]) {
        queue.async { self.write(frame) }
    }

    /// Waits until every message sent so far is written, for at most
    /// `timeout` (a client that stopped reading must not hold the exit).
    ///
    /// - returns: Whether everything was written in time.
    @discardableResult
    public func flush(timeout: Duration = .seconds(5)) -> Bool {
        let written = DispatchSemaphore(value: 0)
        queue.async { written.signal() }
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        return written.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success
    }

    private func write(_ bytes: [UInt8]) {
        guard !failed.withLock({ $0 }) else { return }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { buffer in
                Foundation.write(fileDescriptor, buffer.baseAddress, buffer.count)
            }
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                let reason = String(cString: strerror(errno))
                failed.withLock { $0 = true }
                ServerLog.warning("cannot write to the client: \(reason); further messages are dropped")
                return
            }
            offset += written
        }
    }
}
