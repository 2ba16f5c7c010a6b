/// A value that reads itself from parsed JSON, faster than through
/// `Decodable`, when the JSON is as usual.
///
/// The hot params (`query/execute`'s) are read this way. The fast path
/// reads only what it is sure of and answers nil for anything else, and
/// the caller then decodes through `Decodable`, whose errors name the
/// faulty field. What it reads must be what `Decodable` would decode:
/// tests compare the two.
public protocol JSONReadable {
    /// The value, or nil when the JSON is not plainly what the fast path
    /// reads (an unusual shape, a wrong type): decode it then.
    init?(json: JSONValue)
}

extension JSONCoding {
    /// Decodes params from a `JSONValue`: through their fast path when
    /// they have one and it reads them, through `Decodable` otherwise.
    ///
    /// - throws: `DecodingError`, as `decode(_:from:)` throws it.
    public static func decodeParams<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        if let readable = type as? any JSONReadable.Type, let read = readable.init(json: value) as? T {
            return read
        }
        return try decode(type, from: value)
    }
}
