/// Splits a byte stream into newline-delimited messages, as MCP's stdio
/// transport sends them: one JSON-RPC message per line, no embedded
/// newline. A carriage return before the newline is dropped, blank lines
/// are skipped, and a line longer than the maximum is reported and
/// skipped without being kept in memory.
///
/// ```swift
/// var framer = LineFramer(maximumLength: 1 << 20)
/// framer.append(Array(#"{"jsonrpc":"2.0","method":"ping","id":1}\n"#.utf8))
/// framer.next()  // .message([...])
/// ```
public struct LineFramer: Sendable {
    public enum Event: Hashable, Sendable {
        /// One line's bytes, without its newline.
        case message([UInt8])
        /// A line longer than the maximum was skipped (its length so far).
        case tooLong(Int)
    }

    public let maximumLength: Int
    private var buffer: [UInt8] = []
    /// Where the unread bytes of `buffer` start.
    private var start = 0
    /// Where to look for the next newline in `buffer`.
    private var scanned = 0
    /// Set while the rest of an over-long line is being skipped.
    private var skipping: Int?

    public init(maximumLength: Int) {
        self.maximumLength = maximumLength
    }

    public mutating func append(_ bytes: some Collection<UInt8>) {
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeSubrange(..<start)
            scanned -= start
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete event, or nil until more bytes come.
    public mutating func next() -> Event? {
        while true {
            guard let newline = buffer[scanned...].firstIndex(of: 0x0A) else {
                scanned = buffer.count
                if buffer.count - start > maximumLength {
                    // Too long already: drop it as it comes.
                    skipping = (skipping ?? 0) + buffer.count - start
                    buffer.removeAll(keepingCapacity: true)
                    start = 0
                    scanned = 0
                }
                return nil
            }
            let line = buffer[start..<newline]
            start = newline + 1
            scanned = start
            if let skipped = skipping {
                skipping = nil
                return .tooLong(skipped + line.count)
            }
            let content = line.last == 0x0D ? line.dropLast() : line
            if content.count > maximumLength { return .tooLong(content.count) }
            if content.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            return .message(Array(content))
        }
    }
}
