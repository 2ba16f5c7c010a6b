import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

extension FileDescriptor {
    /// Writes every byte of `buffer`, in as many writes as it takes:
    /// swift-system's `write` retries after a signal (`EINTR`), and a
    /// descriptor left non-blocking by another program that is full for
    /// now (`EAGAIN`) is waited for with `poll` — never a spin.
    ///
    /// The one write loop of the REPL's output and the server's messages.
    ///
    /// - throws: the `Errno` of a write that cannot go on (`EPIPE`: the
    ///   reader is gone, `EBADF`...).
    public func writeEverything(_ buffer: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < buffer.count {
            do {
                offset += try write(UnsafeRawBufferPointer(rebasing: buffer[offset...]))
            } catch let error as Errno where error == .resourceTemporarilyUnavailable || error == .wouldBlock {
                var request = pollfd(fd: rawValue, events: Int16(POLLOUT), revents: 0)
                _ = poll(&request, 1, -1)
            }
        }
    }
}
