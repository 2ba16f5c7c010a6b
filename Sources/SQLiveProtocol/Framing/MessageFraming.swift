/// Writes Language Server Protocol frames.
public enum MessageFraming {
    /// A frame: the `Content-Length` header, then the content.
    public static func frame(_ content: [UInt8]) -> [UInt8] {
        var frame: [UInt8] = []
        append(content, to: &frame)
        return frame
    }

    /// Appends a frame to bytes being gathered for output.
    public static func append(_ content: [UInt8], to bytes: inout [UInt8]) {
        bytes.reserveCapacity(bytes.count + content.count + 32)
        bytes.append(contentsOf: "Content-Length: ".utf8)
        bytes.append(contentsOf: String(content.count).utf8)
        bytes.append(contentsOf: "\r\n\r\n".utf8)
        bytes.append(contentsOf: content)
    }

    /// A frame holding a JSON value, as a client sends it.
    ///
    /// - throws: `EncodingError`, for values nested too deep.
    public static func frame(_ value: JSONValue) throws -> [UInt8] {
        frame(try JSONCoding.encode(value))
    }
}
