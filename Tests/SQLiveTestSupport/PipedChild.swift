import Foundation
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// A child whose standard input (and output, when asked) are pipes to this
/// process; its standard error is this process's. Reads and writes retry
/// on `EINTR`.
public final class PipedChild: @unchecked Sendable {
    public let child: Launcher.Child
    // Mutable State: `input` is closed (set to -1) by `closeInput` and
    // `deinit`, under the lock; `output` never changes.
    private var input: Int32
    private let output: Int32
    private let lock = NSLock()

    public init(_ executable: String, _ arguments: [String], readsOutput: Bool = true) throws {
        let inputPipe = try Self.pipe()
        var outputPipe: (read: Int32, write: Int32)?
        do {
            if readsOutput { outputPipe = try Self.pipe() }
        } catch {
            close(inputPipe.read)
            close(inputPipe.write)
            throw error
        }
        do {
            child = try Launcher.start(
                executable, arguments, stdin: .descriptor(inputPipe.read, closeAfterLaunch: true),
                stdout: outputPipe.map { .descriptor($0.write, closeAfterLaunch: true) } ?? .null)
        } catch {
            // The child's ends were given away: swift-subprocess closed
            // them when the launch failed. Only ours are left.
            close(inputPipe.write)
            if let outputPipe { close(outputPipe.read) }
            throw error
        }
        input = inputPipe.write
        output = outputPipe?.read ?? -1
    }

    deinit {
        closeInput()
        if output >= 0 { close(output) }
    }

    /// A pipe whose ends are close-on-exec (the child gets its own copy as 0 or 1).
    private static func pipe() throws -> (read: Int32, write: Int32) {
        let (read, write) = try FileDescriptor.pipe()
        for end in [read, write] { _ = fcntl(end.rawValue, F_SETFD, FD_CLOEXEC) }
        return (read.rawValue, write.rawValue)
    }

    /// Writes all of the text to the child's input (nothing once it is closed).
    public func write(_ text: String) {
        lock.withLock {
            guard input >= 0 else { return }
            _ = try? FileDescriptor(rawValue: input).writeAll(Array(text.utf8))
        }
    }

    /// Reads what the child printed; empty at the end of its output.
    public func read() -> Data {
        guard output >= 0 else { return Data() }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { bytes in
            (try? FileDescriptor(rawValue: output).read(into: bytes, retryOnInterrupt: true)) ?? 0
        }
        return Data(buffer[0..<count])
    }

    /// Closes the child's input: it sees the end of it.
    public func closeInput() {
        lock.withLock {
            if input >= 0 {
                close(input)
                input = -1
            }
        }
    }
}
