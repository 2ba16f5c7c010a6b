import Foundation

/// The protocol's JSON: Foundation's `JSONDecoder` and `JSONEncoder`, set up
/// once for every message.
///
/// Output has its keys sorted, so the same value always gives the same text,
/// and slashes unescaped, so SQL and paths read as written. Integers are
/// exact over 64 bits; doubles are written in the shortest form that reads
/// back to the same value, without a `.0` when they are integral (`1`, not
/// `1.0`). JSON has no infinities: a non-finite double is written as the
/// string `"Infinity"`, `"-Infinity"` or `"NaN"`.
///
/// Input must be UTF-8 without a byte order mark, as the Language Server
/// Protocol asks; Foundation reads `Int64.min` and `Int64.max` exactly, and
/// refuses nesting deeper than 512 arrays and objects with an error rather
/// than a crash.
///
/// ```swift
/// let text = try JSONCoding.encode(["id": .integer(Int64.max)] as JSONValue)
/// let value = try JSONCoding.decode(JSONValue.self, from: text)
/// ```
public enum JSONCoding {
    /// An encoder with the protocol's settings.
    public static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return encoder
    }

    /// Encodes a value as compact JSON text, in UTF-8.
    ///
    /// - throws: `EncodingError`, for values nested too deep.
    public static func encode(_ value: some Encodable) throws -> [UInt8] {
        Array(try makeEncoder().encode(value))
    }

    /// Decodes a value from JSON text received from a client.
    ///
    /// The text is checked to be UTF-8 first: Foundation reads the bytes of
    /// a string only when it is decoded, and accepts a byte order mark.
    ///
    /// - throws: `DecodingError`; `.dataCorrupted` with an empty coding path
    ///   for text that is not JSON.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "a byte order mark"))
        }
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "invalid UTF-8"))
        }
        return try JSONDecoder().decode(type, from: Data(bytes))
    }

    /// Decodes a value from a `JSONValue`, through its JSON text.
    ///
    /// This is how params, held as a `JSONValue` until their method's
    /// handler runs, are decoded: errors carry the coding path of the faulty
    /// field within the params.
    ///
    /// - throws: `DecodingError`.
    public static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        let text = try encode(value)
        do {
            return try JSONDecoder().decode(type, from: Data(text))
        } catch DecodingError.dataCorrupted(let context)
            where context.codingPath.isEmpty && context.debugDescription == notJSONDescription
        {
            // The text was written just above, so it is JSON: Foundation says
            // it is not, without a path, only for a number that does not fit
            // the integer type asked for.
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: [], debugDescription: "a number is not an integer, or is out of its field's range",
                    underlyingError: context.underlyingError))
        }
    }

    /// What Foundation's `JSONDecoder` says of text that is not JSON.
    private static let notJSONDescription = "The given data was not valid JSON."

    /// A value as a `JSONValue`, through its JSON text.
    ///
    /// - throws: `EncodingError` or `DecodingError`.
    public static func jsonValue(of value: some Encodable) throws -> JSONValue {
        try decode(JSONValue.self, from: encode(value))
    }

    /// A decoding error as a short explanation, for a parse error's message.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        let context: DecodingError.Context
        switch error {
        case .dataCorrupted(let errorContext), .typeMismatch(_, let errorContext),
            .valueNotFound(_, let errorContext), .keyNotFound(_, let errorContext):
            context = errorContext
        @unknown default:
            return "\(error)"
        }
        var description = context.debugDescription
        if description == notJSONDescription { description = "not valid JSON" }
        if let underlying = context.underlyingError as? NSError,
            let detail = underlying.userInfo[NSDebugDescriptionErrorKey] as? String
        {
            description += ": \(detail)"
        }
        if !context.codingPath.isEmpty {
            description = "\(ResponseError.fieldPath(context.codingPath)): \(description)"
        }
        return description
    }
}
