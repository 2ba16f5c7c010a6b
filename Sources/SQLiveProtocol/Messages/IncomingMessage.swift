/// A message from the client, as its envelope tells.
///
/// The frame's text is parsed once, into a `JSONValue`; reading the
/// envelope from it never fails: a message that is not a valid request or
/// notification reads as `.invalid`, keeping its id when it has a usable
/// one, so that the error can be answered to the right request. Params
/// stay parsed JSON until their method's handler decodes them.
public enum IncomingMessage: Hashable, Sendable {
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

    /// Reads the envelope of one message (not a batch).
    public init(json: JSONValue) {
        guard case .object(let members) = json else {
            self = .invalid(id: nil, error: .invalidRequest("expected a request object, found \(json.kindDescription)"))
            return
        }
        // Present and null is not absent: `"id": null` is an invalid id.
        let rawID = members["id"]
        let id = rawID.flatMap(RequestID.init(json:))
        let rawMethod = members["method"]
        let method = rawMethod?.stringValue
        guard members["jsonrpc"] == .string("2.0") else {
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
        self = Self.classify(
            id: id, method: method, params: members["params"], hasResult: members["result"] != nil,
            hasError: members["error"] != nil)
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
public enum IncomingContent: Hashable, Sendable {
    case message(IncomingMessage)
    /// A JSON-RPC batch; it may be empty, which is an invalid request.
    case batch([IncomingMessage])

    /// Reads the content of a frame from its parsed JSON.
    public init(json: JSONValue) {
        if case .array(let elements) = json {
            self = .batch(elements.map(IncomingMessage.init(json:)))
        } else {
            self = .message(IncomingMessage(json: json))
        }
    }

    /// Parses and reads the content of a frame.
    ///
    /// - throws: A -32700 parse error, for text that is not UTF-8 JSON.
    public static func decode(_ content: [UInt8]) throws(ResponseError) -> IncomingContent {
        do {
            return IncomingContent(json: try JSONReader.parse(content))
        } catch {
            throw .parseError(error.description)
        }
    }
}
