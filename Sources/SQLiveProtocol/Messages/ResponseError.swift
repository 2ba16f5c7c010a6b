/// The error object of a JSON-RPC response.
///
/// ```json
/// {"code": -32001, "message": "no such table: gmaes",
///  "data": {"sqliteCode": 1, "extendedCode": 1, "message": "no such table: gmaes", "offset": 14}}
/// ```
public struct ResponseError: Error, Hashable, Sendable, Codable {
    public var code: ErrorCode
    public var message: String
    /// More about the error: SQLite's codes, the faulty field...
    public var data: JSONValue?

    public init(_ code: ErrorCode, _ message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    /// The error as it is written in a response.
    public var json: JSONValue {
        var members: [String: JSONValue] = ["code": .integer(Int64(code.rawValue)), "message": .string(message)]
        if let data { members["data"] = data }
        return .object(members)
    }
}

extension ResponseError {
    public static func parseError(_ detail: String) -> ResponseError {
        ResponseError(.parseError, "Parse error: \(detail)")
    }

    public static func invalidRequest(_ detail: String) -> ResponseError {
        ResponseError(.invalidRequest, "Invalid request: \(detail)")
    }

    public static func methodNotFound(_ method: String) -> ResponseError {
        ResponseError(.methodNotFound, "Method not found: \(method)")
    }

    /// Invalid params, naming the faulty field in the message and in `data.field`.
    public static func invalidParams(_ detail: String, field: String? = nil) -> ResponseError {
        let message = field.map { "Invalid params: \($0): \(detail)" } ?? "Invalid params: \(detail)"
        return ResponseError(.invalidParams, message, data: field.map { ["field": .string($0)] })
    }

    public static func internalError(_ detail: String) -> ResponseError {
        ResponseError(.internalError, "Internal error: \(detail)")
    }

    public static let serverNotInitialized = ResponseError(
        .serverNotInitialized, "Server not initialized: send 'initialize' first")

    public static let requestCancelled = ResponseError(.requestCancelled, "Request cancelled")
}

extension ResponseError: CustomStringConvertible {
    public var description: String { "\(code.rawValue): \(message)" }
}
