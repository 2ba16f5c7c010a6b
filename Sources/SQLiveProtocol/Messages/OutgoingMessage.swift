/// A message the server sends: a response, a notification, or the
/// responses to a batch.
///
/// Results and params are kept as the Codable values the handlers return,
/// and encoded once, when the message is written: the envelope and any
/// `JSONWritable` payload straight into a `JSONWriter`, other payloads
/// through `JSONValueEncoder`. Keys come out sorted either way.
///
/// ```swift
/// let message = OutgoingMessage.response(id: .number(1), result: EmptyResult())
/// let text = try message.encoded()  // {"id":1,"jsonrpc":"2.0","result":{}}, in UTF-8
/// ```
public struct OutgoingMessage: Sendable {
    private enum Content: Sendable {
        case result(id: RequestID, any Encodable & Sendable)
        case error(id: RequestID?, ResponseError)
        case notification(method: String, params: any Encodable & Sendable)
        case request(id: RequestID, method: String)
        case batch([OutgoingMessage])
    }

    private let content: Content

    /// A successful response.
    public static func response(id: RequestID, result: some Encodable & Sendable) -> OutgoingMessage {
        OutgoingMessage(content: .result(id: id, result))
    }

    /// An error response; a nil id is written as `null`, for errors about
    /// a message whose id could not be read.
    public static func response(id: RequestID?, error: ResponseError) -> OutgoingMessage {
        OutgoingMessage(content: .error(id: id, error))
    }

    /// A response, success or error.
    public static func response(id: RequestID, _ result: Result<any Encodable & Sendable, ResponseError>)
        -> OutgoingMessage
    {
        switch result {
        case .success(let value): OutgoingMessage(content: .result(id: id, value))
        case .failure(let error): response(id: id, error: error)
        }
    }

    /// A notification.
    public static func notification(method: String, params: some Encodable & Sendable) -> OutgoingMessage {
        OutgoingMessage(content: .notification(method: method, params: params))
    }

    /// A request of the server's, without params (`workspace/inlayHint/refresh`).
    public static func request(id: RequestID, method: String) -> OutgoingMessage {
        OutgoingMessage(content: .request(id: id, method: method))
    }

    /// The responses to a batch, sent as one array.
    public static func batch(_ responses: [OutgoingMessage]) -> OutgoingMessage {
        OutgoingMessage(content: .batch(responses))
    }

    /// The message as JSON text, in UTF-8.
    ///
    /// - throws: `EncodingError`, when a payload cannot be encoded.
    public func encoded() throws -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        try write(to: &writer)
        return writer.bytes
    }

    /// The message as JSON text, or what replaces it when it cannot be
    /// encoded.
    ///
    /// Encoding should never fail; if it does, `report` is told, a response
    /// becomes a -32603 error for the same request (so the client is never
    /// left waiting), and a notification is dropped (nil).
    public func encoded(reportingFailure report: (any Error) -> Void) -> [UInt8]? {
        do {
            return try encoded()
        } catch {
            report(error)
            // The replacement holds no value of the handlers': it encodes.
            return try? replacement()?.encoded()
        }
    }

    /// The message as JSON text, at most `maximumLength` bytes: a longer
    /// response becomes a -32013 error for the same request; a longer
    /// notification or request is dropped (nil), and `report` told.
    public func encoded(maximumLength: Int, reportingFailure report: (String) -> Void) -> [UInt8]? {
        guard let bytes = encoded(reportingFailure: { report("cannot encode a message: \($0)") }) else { return nil }
        guard bytes.count > maximumLength else { return bytes }
        let what = "\(bytes.count) bytes, more than the \(maximumLength) a message may be"
        switch content {
        case .result(let id, _), .error(let id?, _):
            report("a response of \(what): sent as an error")
            let error = ResponseError(
                .resultTooLarge,
                "the response is \(what); select fewer rows (maxRows, LIMIT) or smaller values "
                    + "(length(x), substr(x, 1, 1000))")
            return try? OutgoingMessage.response(id: id, error: error).encoded()
        default:
            report("dropped a message of \(what)")
            return nil
        }
    }

    /// Writes the message, keys sorted.
    public func write(to writer: inout JSONWriter) throws {
        switch content {
        case .result(let id, let result):
            writer.beginObject()
            writer.key("id")
            id.write(to: &writer)
            writer.key("jsonrpc")
            writer.write(string: "2.0")
            writer.key("result")
            try Self.write(result, to: &writer)
            writer.endObject()
        case .error(let id, let error):
            writer.beginObject()
            writer.key("error")
            writer.write(error.json)
            writer.key("id")
            if let id { id.write(to: &writer) } else { writer.writeNull() }
            writer.key("jsonrpc")
            writer.write(string: "2.0")
            writer.endObject()
        case .notification(let method, let params):
            writer.beginObject()
            writer.key("jsonrpc")
            writer.write(string: "2.0")
            writer.key("method")
            writer.write(string: method)
            writer.key("params")
            try Self.write(params, to: &writer)
            writer.endObject()
        case .request(let id, let method):
            writer.beginObject()
            writer.key("id")
            id.write(to: &writer)
            writer.key("jsonrpc")
            writer.write(string: "2.0")
            writer.key("method")
            writer.write(string: method)
            writer.endObject()
        case .batch(let responses):
            writer.beginArray()
            for response in responses {
                try response.write(to: &writer)
            }
            writer.endArray()
        }
    }

    /// Writes a payload: directly when it knows how, through a JSONValue
    /// otherwise.
    private static func write(_ payload: any Encodable & Sendable, to writer: inout JSONWriter) throws {
        if let writable = payload as? any JSONWritable {
            writable.write(to: &writer)
        } else {
            writer.write(try JSONValueEncoder.encode(payload))
        }
    }

    /// What replaces the message when it cannot be encoded.
    private func replacement() -> OutgoingMessage? {
        if (try? encoded()) != nil { return self }
        switch content {
        case .result(let id, _):
            return .response(id: id, error: .internalError("cannot encode the result"))
        case .error(let id, let error):
            return .response(id: id, error: ResponseError(error.code, error.message))
        case .notification, .request:
            return nil
        case .batch(let responses):
            return .batch(responses.compactMap { $0.replacement() })
        }
    }
}

/// A value that writes its own JSON, faster than through `Encodable`.
///
/// The hot payloads (query results, live-query notifications, rows) write
/// themselves straight into the writer. What they write must be what their
/// `Encodable` conformance encodes, keys sorted: tests compare the two.
public protocol JSONWritable {
    func write(to writer: inout JSONWriter)
}
