/// The id of a request: a number or a string, echoed exactly in its response.
///
/// JSON-RPC lets the client choose; the server never interprets an id, it
/// only sends it back and uses it to find the request `$/cancelRequest` names.
public enum RequestID: Hashable, Sendable {
    case number(Int64)
    case string(String)

    /// The id as it is written in JSON.
    public var json: JSONValue {
        switch self {
        case .number(let number): .integer(number)
        case .string(let string): .string(string)
        }
    }

    /// The id of a JSON value, or nil when the value cannot be an id.
    ///
    /// Numbers with a fraction are refused: JSON-RPC says ids should not
    /// have one, and echoing them exactly could not be promised.
    public init?(json: JSONValue) {
        switch json {
        case .integer(let number): self = .number(number)
        case .string(let string): self = .string(string)
        default: return nil
        }
    }
}

extension RequestID: CustomStringConvertible {
    public var description: String {
        switch self {
        case .number(let number): String(number)
        case .string(let string): "\"\(string)\""
        }
    }
}

extension RequestID: Codable {
    public init(from decoder: any Decoder) throws {
        let json = try JSONValue(from: decoder)
        guard let id = RequestID(json: json) else {
            throw DecodingError.typeMismatch(
                RequestID.self,
                .init(codingPath: decoder.codingPath, debugDescription: "expected an integer or a string"))
        }
        self = id
    }

    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }
}

extension RequestID {
    /// Writes the id as JSON.
    public func write(to writer: inout JSONWriter) {
        switch self {
        case .number(let number): writer.write(integer: number)
        case .string(let string): writer.write(string: string)
        }
    }
}
