/// The protocol's JSON: sqlive's own reader, writer and Codable bridges,
/// set up once for every message.
///
/// Text is parsed once into a `JSONValue` (`JSONReader`), and Codable
/// values are decoded from that tree (`JSONValueDecoder`), so a message's
/// params are never turned back into text to be read again. Output goes
/// through `JSONValueEncoder` and `JSONWriter`, or straight into the writer
/// for `JSONWritable` values.
///
/// Output has its keys sorted, so the same value always gives the same text,
/// and slashes unescaped, so SQL and paths read as written. Integers are
/// exact over 64 bits; doubles are written in the shortest form that reads
/// back to the same value, without a `.0` when they are integral (`1`, not
/// `1.0`). JSON has no infinities: a non-finite double is written as the
/// string `"Infinity"`, `"-Infinity"` or `"NaN"`.
///
/// Input must be UTF-8 without a byte order mark, as the Language Server
/// Protocol asks. A number written without a fraction or an exponent that
/// fits 64 bits reads as an integer, any other as a double; nesting deeper
/// than 512 arrays and objects is refused with an error rather than a crash.
///
/// ```swift
/// let text = try JSONCoding.encode(["id": .integer(Int64.max)] as JSONValue)
/// let value = try JSONCoding.decode(JSONValue.self, from: text)
/// ```
public enum JSONCoding {
    /// Encodes a value as compact JSON text, in UTF-8.
    ///
    /// - throws: `EncodingError`, from the value's own `encode(to:)`.
    public static func encode(_ value: some Encodable) throws -> [UInt8] {
        if let writable = value as? any JSONWritable {
            var writer = JSONWriter(capacity: 256)
            writable.write(to: &writer)
            return writer.bytes
        }
        return try JSONValueEncoder.encodeJSON(value)
    }

    /// Decodes a value from JSON text received from a client.
    ///
    /// - throws: `DecodingError`; `.dataCorrupted` with an empty coding path
    ///   for text that is not JSON.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        let value: JSONValue
        do {
            value = try JSONReader.parse(bytes)
        } catch {
            throw DecodingError.dataCorrupted(
                .init(codingPath: [], debugDescription: "not valid JSON: \(error.description)"))
        }
        return try decode(type, from: value)
    }

    /// Decodes a value from a `JSONValue`.
    ///
    /// This is how params, held as a `JSONValue` until their method's
    /// handler runs, are decoded: errors carry the coding path of the faulty
    /// field within the params.
    ///
    /// - throws: `DecodingError`.
    public static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        if let value = value as? T { return value }
        return try JSONValueDecoder.decode(type, from: value)
    }

    /// A value as a `JSONValue`.
    ///
    /// - throws: `EncodingError`.
    public static func jsonValue(of value: some Encodable) throws -> JSONValue {
        try JSONValueEncoder.encode(value)
    }
}
