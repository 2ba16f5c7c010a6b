import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Reading a pipe without Foundation's traps.
///
/// `FileHandle.availableData` and `readDataToEndOfFile` end the process
/// with a fatal error when `read` returns `EINTR`, and in the test process
/// it does: libdispatch's signal sources (Foundation's `Process` watches
/// SIGCHLD with one, the REPL suites SIGINT and SIGWINCH) install handlers
/// without `SA_RESTART`. These retry instead.
extension FileHandle {
    /// The next bytes the pipe has (blocking until there are some); empty at its end.
    public func readChunk(maximum: Int = 65536) -> Data {
        var buffer = [UInt8](repeating: 0, count: maximum)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fileDescriptor, $0.baseAddress, maximum) }
            if count >= 0 { return Data(buffer[0..<count]) }
            if errno == EINTR { continue }
            return Data()
        }
    }

    /// Every byte until the pipe's end.
    public func readToEndRetrying() -> Data {
        var data = Data()
        while true {
            let chunk = readChunk()
            if chunk.isEmpty { return data }
            data.append(chunk)
        }
    }
}
