/// A value that reads itself from parsed JSON, faster than through
/// `Decodable`, when the JSON is as usual.
///
/// The hot params (`query/execute`'s) are read this way, by
/// `RequestType.decodeParams(from:)`. The fast path reads only what it is
/// sure of and answers nil for anything else, and the caller then decodes
/// through `Decodable`, whose errors name the faulty field. What it reads must be what `Decodable` would decode:
/// tests compare the two.
public protocol JSONReadable: Sendable {
    /// The value, or nil when the JSON is not plainly what the fast path
    /// reads (an unusual shape, a wrong type): decode it then.
    init?(json: JSONValue)
}
