/// A JSON-RPC error code.
///
/// A struct rather than an enum, so that codes can be added without
/// breaking anyone: the standard JSON-RPC codes, the Language Server
/// Protocol's, and sqlive's own in the -32000 range.
///
/// ```swift
/// throw ResponseError(.unknownLiveQuery, "no live query named leaders")
/// ```
public struct ErrorCode: RawRepresentable, Hashable, Sendable, Codable {
    public var rawValue: Int

    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    public init(from decoder: any Decoder) throws {
        rawValue = try Int(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        try rawValue.encode(to: encoder)
    }

    // JSON-RPC 2.0

    /// The message is not JSON.
    public static let parseError = ErrorCode(rawValue: -32700)
    /// The JSON is not a valid request object.
    public static let invalidRequest = ErrorCode(rawValue: -32600)
    /// No such method.
    public static let methodNotFound = ErrorCode(rawValue: -32601)
    /// The params are missing a field or have one of the wrong type.
    public static let invalidParams = ErrorCode(rawValue: -32602)
    /// A bug in the server.
    public static let internalError = ErrorCode(rawValue: -32603)

    // Language Server Protocol

    /// A request came before `initialize`.
    public static let serverNotInitialized = ErrorCode(rawValue: -32002)
    /// The request was cancelled by `$/cancelRequest`.
    public static let requestCancelled = ErrorCode(rawValue: -32800)

    // sqlive

    /// SQLite refused a statement or failed to run it; `data` holds SQLite's codes.
    public static let sqliteError = ErrorCode(rawValue: -32001)
    /// No database is open.
    public static let noDatabase = ErrorCode(rawValue: -32010)
    /// No live query has this name.
    public static let unknownLiveQuery = ErrorCode(rawValue: -32011)
    /// A live query with this name already exists.
    public static let liveQueryNameTaken = ErrorCode(rawValue: -32012)
    /// A result is larger than the most one message carries
    /// (`maximumMessageLength`); nothing of it was sent.
    public static let resultTooLarge = ErrorCode(rawValue: -32013)
    /// A live query's refresh ran past its time budget and was stopped
    /// (`liveQuery/error`); it runs again at the next change of what it reads.
    public static let tooSlowToKeepLive = ErrorCode(rawValue: -32014)
}

extension ErrorCode: CustomStringConvertible {
    public var description: String { String(rawValue) }
}
