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
}
