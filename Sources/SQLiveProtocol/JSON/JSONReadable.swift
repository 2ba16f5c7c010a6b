/// A value that reads itself from parsed JSON, faster than through
/// `Decodable`, when the JSON is as usual.
///
/// The hot params (`query/execute`'s) are read this way. The fast path
/// reads only what it is sure of and answers nil for anything else, and
/// the caller then decodes through `Decodable`, whose errors name the
/// faulty field. What it reads must be what `Decodable` would decode:
/// tests compare the two.
public protocol JSONReadable: Sendable {
    /// The value, or nil when the JSON is not plainly what the fast path
    /// reads (an unusual shape, a wrong type): decode it then.
    init?(json: JSONValue)
}

extension JSONCoding {
    /// Decodes params from a `JSONValue`: through their fast path when
    /// they have one and it reads them, through `Decodable` otherwise.
    ///
    /// - throws: `DecodingError`, as `decode(_:from:)` throws it.
    public static func decodeParams<T: Decodable & Sendable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try paramsReader(for: type)(value)
    }

    /// What `decodeParams` does for one type, with the question of its
    /// fast path settled once: a server makes one per method, not one per
    /// message.
    public static func paramsReader<T: Decodable & Sendable>(for type: T.Type) -> @Sendable (JSONValue) throws -> T {
        guard let readable = type as? any JSONReadable.Type else {
            return { value in try decode(T.self, from: value) }
        }
        return { value in
            if let read = readable.init(json: value) as? T { return read }
            return try decode(T.self, from: value)
        }
    }
}
