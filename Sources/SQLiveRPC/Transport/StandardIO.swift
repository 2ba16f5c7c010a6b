import Foundation

/// Standard input and output, set up for the protocol.
enum StandardIO {
    /// Keeps the real standard output for the protocol, and points file
    /// descriptor 1 at standard error.
    ///
    /// From then on, a stray `print` (ours, a library's) lands in the log
    /// instead of corrupting the stream of frames. Writing to a client that
    /// went away fails with `EPIPE` instead of killing the process.
    ///
    /// - returns: A descriptor for the real standard output.
    static func takeOverStandardOutput() -> Int32 {
        fflush(nil)
        signal(SIGPIPE, SIG_IGN)
        let saved = dup(STDOUT_FILENO)
        guard saved >= 0 else {
            ServerLog.warning("cannot duplicate standard output: \(String(cString: strerror(errno)))")
            return STDOUT_FILENO
        }
        if dup2(STDERR_FILENO, STDOUT_FILENO) < 0 {
            ServerLog.warning("cannot redirect standard output: \(String(cString: strerror(errno)))")
        }
        return saved
    }

    /// The bytes of a file descriptor, chunk by chunk, until end of file.
    ///
    /// A thread of its own does the blocking reads, so that waiting for the
    /// client occupies none of Swift's cooperative threads.
    static func chunks(of fileDescriptor: Int32) -> AsyncStream<[UInt8]> {
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fileDescriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    continuation.yield(Array(buffer[0..<count]))
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    if count < 0 {
                        ServerLog.warning("cannot read the input: \(String(cString: strerror(errno)))")
                    }
                    continuation.finish()
                    return
                }
            }
        }
        thread.name = "sqlive.rpc.reader"
        thread.start()
        return stream
    }
}
