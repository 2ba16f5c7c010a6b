import Foundation

/// Standard input and output, set up for the protocol.
enum StandardIO {
    /// Keeps the real standard output for the protocol, and points file
    /// descriptor 1 at standard error.
    ///
    /// From then on, a stray `print` (ours, a library's) lands in the log
    /// instead of corrupting the stream of frames.
    ///
    /// - returns: A descriptor for the real standard output.
    static func takeOverStandardOutput() -> Int32 {
        fflush(nil)
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

    /// Reads a descriptor until its end, handing each chunk read to
    /// `consume`, which answers whether to read on; an interrupted read is
    /// made again, a failed one logged. The descriptor is not closed.
    ///
    /// - returns: Whether `consume` stopped the reading (false: the input ended).
    static func read(_ fileDescriptor: Int32, _ consume: (ArraySlice<UInt8>) -> Bool) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Foundation.read(fileDescriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                if !consume(buffer[0..<count]) { return true }
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                if count < 0 { ServerLog.warning("cannot read the input: \(String(cString: strerror(errno)))") }
                return false
            }
        }
    }
}
