/// Writes Language Server Protocol frames.
public enum MessageFraming {
    /// A frame: the `Content-Length` header, then the content.
    public static func frame(_ content: [UInt8]) -> [UInt8] {
        var frame = Array("Content-Length: \(content.count)\r\n\r\n".utf8)
        frame.append(contentsOf: content)
        return frame
    }

    /// A frame holding a message; nil when the message cannot be encoded
    /// (see `OutgoingMessage.encoded()`).
    public static func frame(_ message: OutgoingMessage) -> [UInt8]? {
        message.encoded().map(frame)
    }

    /// A frame holding a JSON value, as a client sends it.
    ///
    /// - throws: `EncodingError`, for values nested too deep.
    public static func frame(_ value: JSONValue) throws -> [UInt8] {
        frame(try JSONCoding.encode(value))
    }
}
