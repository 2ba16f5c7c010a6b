extension ResponseError {
    /// The -32602 error for params that could not be decoded, naming the
    /// faulty field by its path, as in `params[1]` or `clientInfo.name`.
    ///
    /// The path is the coding path of Foundation's `DecodingError`. A type
    /// mismatch is told by the type expected ("expected a string"), unless
    /// the params' own types explain it in their own words.
    public init(decoding error: any Error) {
        guard let error = error as? DecodingError else {
            self = .invalidParams("\(error)")
            return
        }
        switch error {
        case .keyNotFound(let key, let context):
            self = .invalidParams("missing field", field: Self.fieldPath(context.codingPath + [key]))
        case .valueNotFound(_, let context):
            self = .invalidParams("must not be null", field: Self.fieldPath(context.codingPath))
        case .typeMismatch(let type, let context):
            let field = context.codingPath.isEmpty ? nil : Self.fieldPath(context.codingPath)
            // Foundation's descriptions start "Expected to decode"; ours
            // (RPCParameters, RequestID) "expected", and say more.
            let ownWords = context.debugDescription.hasPrefix("expected ")
            self = .invalidParams(ownWords ? context.debugDescription : Self.expectation(type), field: field)
        case .dataCorrupted(let context):
            let field = context.codingPath.isEmpty ? nil : Self.fieldPath(context.codingPath)
            self = .invalidParams(context.debugDescription, field: field)
        @unknown default:
            self = .invalidParams("\(error)")
        }
    }

    /// What a value of a type must be, as people say it: "expected a string".
    static func expectation(_ type: Any.Type) -> String {
        let kind =
            switch type {
            case is String.Type: "a string"
            case is Bool.Type: "true or false"
            case is any FixedWidthInteger.Type: "an integer"
            case is any BinaryFloatingPoint.Type: "a number"
            case is [Any].Type: "an array"
            // Foundation asks for a dictionary for any keyed container.
            case is [String: Any].Type: "an object"
            default: "a value of type \(type)"
            }
        return "expected \(kind)"
    }

    /// A coding path as people write it: `results[0].name`.
    static func fieldPath(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text.isEmpty ? "params" : text
    }
}
