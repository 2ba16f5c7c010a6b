/// A request the server answers: a method name, its params and its result.
///
/// Each request is one type in `Requests/`, named after its method, and
/// listed in `MessageRegistry`.
///
/// ```swift
/// public enum LiveQueryPauseRequest: RequestType {
///     public static let method = "liveQuery/pause"
///     public struct Params: Codable, Sendable { public var name: String }
///     public typealias Result = EmptyResult
/// }
/// ```
public protocol RequestType: Sendable {
    associatedtype Params: Codable & Sendable
    associatedtype Result: Codable & Sendable
    /// The method name, as in `"query/execute"`.
    static var method: String { get }
    /// Reads the params from their JSON: through `Decodable`, or first
    /// through their fast path when they have one (`JSONReadable`).
    ///
    /// The default implementations settle which, per type, when the
    /// conformance is made: a server calls this for every message, and a
    /// cast to find out at each call would cost a conformance lookup.
    ///
    /// - throws: `DecodingError`, naming the faulty field.
    static func decodeParams(from json: JSONValue) throws -> Params
}

extension RequestType {
    public static func decodeParams(from json: JSONValue) throws -> Params {
        try JSONCoding.decode(Params.self, from: json)
    }
}

extension RequestType where Params: JSONReadable {
    public static func decodeParams(from json: JSONValue) throws -> Params {
        if let params = Params(json: json) { return params }
        return try JSONCoding.decode(Params.self, from: json)
    }
}

/// A notification: a method name and its params, never answered.
public protocol NotificationType: Sendable {
    associatedtype Params: Codable & Sendable
    static var method: String { get }
}

/// Params for methods that take none (`{}` or nothing at all).
public struct EmptyParams: Codable, Hashable, Sendable {
    public init() {}
    public init(from decoder: any Decoder) throws {}
    public func encode(to encoder: any Encoder) throws {
        _ = encoder.container(keyedBy: NoKeys.self)
    }
}

/// The result `{}` of methods that have nothing to say but success.
public struct EmptyResult: Codable, Hashable, Sendable {
    public init() {}
    public init(from decoder: any Decoder) throws {}
    public func encode(to encoder: any Encoder) throws {
        _ = encoder.container(keyedBy: NoKeys.self)
    }
}

/// The result `null`, as `shutdown` answers.
public struct NullResult: Codable, Hashable, Sendable {
    public init() {}
    public init(from decoder: any Decoder) throws {}
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encodeNil()
    }
}

/// The keys of an empty object.
private enum NoKeys: CodingKey {}
