/// A message from the client, as its envelope tells.
///
/// Decoding the envelope with Foundation's `JSONDecoder` fails only for
/// text that is not JSON: a message that is not a valid request or
/// notification decodes as `.invalid`, keeping its id when it has a usable
/// one, so that the error can be answered to the right request.
public enum IncomingMessage: Hashable, Sendable, Decodable {
    /// A request: the server answers it exactly once.
    case request(id: RequestID, method: String, params: JSONValue?)
    /// A notification: the server never answers it.
    case notification(method: String, params: JSONValue?)
    /// A response to a request of the server's; sqlive sends none, so it
    /// only logs them.
    case response(id: RequestID?)
    /// Not a valid message. `id` is nil when no id could be read, and the
    /// error is then answered with a null id (or not at all, for something
    /// that reads as a notification).
    case invalid(id: RequestID?, error: ResponseError)

    private enum Key: String, CodingKey {
        case jsonrpc, id, method, params, result, error
    }

    /// Decodes the envelope of one message (not a batch).
    ///
    /// Members are read as `JSONValue`s: a member of the wrong kind makes
    /// the message `.invalid`, never a decoding error.
    ///
    /// - throws: `DecodingError` only for a value that cannot be read at
    ///   all (a number out of every range): the text is not usable JSON.
    public init(from decoder: any Decoder) throws {
        let members: KeyedDecodingContainer<Key>
        do {
            members = try decoder.container(keyedBy: Key.self)
        } catch {
            let found = try JSONValue(from: decoder).kindDescription
            self = .invalid(id: nil, error: .invalidRequest("expected a request object, found \(found)"))
            return
        }
        func member(_ key: Key) throws -> JSONValue? {
            // Present and null is not absent: `"id": null` is an invalid id.
            guard members.contains(key) else { return Optional.none }
            return try members.decode(JSONValue.self, forKey: key)
        }
        let rawID = try member(.id)
        let id = rawID.flatMap(RequestID.init(json:))
        let rawMethod = try member(.method)
        let method = rawMethod?.stringValue
        let params = try member(.params)
        let hasResult = members.contains(.result)
        let hasError = members.contains(.error)

        guard try member(.jsonrpc) == .string("2.0") else {
            self = .invalid(id: id, error: .invalidRequest("'jsonrpc' must be \"2.0\""))
            return
        }
        if rawID != nil && id == nil {
            self = .invalid(id: nil, error: .invalidRequest("'id' must be an integer or a string"))
            return
        }
        if rawMethod != nil && method == nil {
            self = .invalid(id: id, error: .invalidRequest("'method' must be a string"))
            return
        }
        self = Self.classify(id: id, method: method, params: params, hasResult: hasResult, hasError: hasError)
    }

    /// The message that a well-formed envelope's members make.
    private static func classify(
        id: RequestID?, method: String?, params: JSONValue?, hasResult: Bool, hasError: Bool
    ) -> IncomingMessage {
        switch (id, method, hasResult, hasError) {
        case (let id?, let method?, false, false):
            return .request(id: id, method: method, params: params)
        case (nil, let method?, false, false):
            return .notification(method: method, params: params)
        case (let id, nil, true, false), (let id, nil, false, true):
            return .response(id: id)
        case (let id, nil, false, false):
            return .invalid(id: id, error: .invalidRequest("missing 'method'"))
        case (let id, _, true, true):
            return .invalid(id: id, error: .invalidRequest("a message cannot have both 'result' and 'error'"))
        case (let id, _?, _, _):
            return .invalid(id: id, error: .invalidRequest("a request cannot have 'result' or 'error'"))
        }
    }
}

/// The content of one frame: a message, or a batch of them.
public enum IncomingContent: Hashable, Sendable, Decodable {
    case message(IncomingMessage)
    /// A JSON-RPC batch; it may be empty, which is an invalid request.
    case batch([IncomingMessage])

    public init(from decoder: any Decoder) throws {
        if var elements = try? decoder.unkeyedContainer() {
            var messages: [IncomingMessage] = []
            while !elements.isAtEnd {
                messages.append(try elements.decode(IncomingMessage.self))
            }
            self = .batch(messages)
        } else {
            self = .message(try IncomingMessage(from: decoder))
        }
    }

    /// Decodes the content of a frame.
    ///
    /// - throws: A -32700 parse error, for text that is not UTF-8 JSON.
    public static func decode(_ content: [UInt8]) throws(ResponseError) -> IncomingContent {
        do {
            return try JSONCoding.decode(IncomingContent.self, from: content)
        } catch {
            throw .parseError(JSONCoding.describe(error))
        }
    }
}
