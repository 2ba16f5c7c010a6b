import Foundation

/// An SQLite value as the protocol writes it.
///
/// | SQLite | JSON |
/// |---|---|
/// | `NULL` | `null` |
/// | `INTEGER` | a number without a fraction, exact over 64 bits |
/// | `REAL` | a number, written with a fraction or an exponent |
/// | `TEXT` | a string |
/// | `BLOB` | `{"$blob": "<base64>"}` |
///
/// As a parameter, `true` and `false` bind as the integers 1 and 0, as
/// SQLite itself treats them. The type knows nothing of the engine: the
/// server converts it to and from the engine's values.
///
/// ```swift
/// let value = try RPCValue(json: ["$blob": "AP8="])  // .blob(Data([0, 255]))
/// ```
public enum RPCValue: Hashable, Sendable, Codable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    /// The key of the object that holds a BLOB.
    public static let blobKey = "$blob"

    /// The value as JSON.
    public var json: JSONValue {
        switch self {
        case .null: .null
        case .integer(let integer): .integer(integer)
        case .real(let real): .double(real)
        case .text(let text): .string(text)
        case .blob(let data): .object([Self.blobKey: .string(data.base64EncodedString())])
        }
    }

    /// Reads a value written as JSON.
    ///
    /// - throws: A description of what is wrong, for an invalid-params error.
    public init(json: JSONValue) throws(DescribedError) {
        switch json {
        case .null: self = .null
        case .bool(let bool): self = .integer(bool ? 1 : 0)
        case .integer(let integer): self = .integer(integer)
        case .double(let double): self = .real(double)
        case .string(let string): self = .text(string)
        case .object(let members):
            guard members.count == 1, case .string(let base64)? = members[Self.blobKey] else {
                throw DescribedError("expected null, a number, a string or {\"$blob\": base64}, found an object")
            }
            guard let data = Data(base64Encoded: base64) else {
                throw DescribedError("'$blob' is not valid base64")
            }
            self = .blob(data)
        case .array:
            throw DescribedError("expected null, a number, a string or {\"$blob\": base64}, found an array")
        }
    }

    public init(from decoder: any Decoder) throws {
        do {
            try self.init(json: JSONValue(from: decoder))
        } catch let error as DescribedError {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }

    /// Writes the value as JSON.
    public func write(to writer: inout JSONWriter) {
        switch self {
        case .null: writer.writeNull()
        case .integer(let integer): writer.write(integer: integer)
        case .real(let real): writer.write(double: real)
        case .text(let text): writer.write(string: text)
        case .blob(let data):
            writer.beginObject()
            writer.key(Self.blobKey)
            writer.write(string: data.base64EncodedString())
            writer.endObject()
        }
    }
}

/// A message explaining why a value was refused.
public struct DescribedError: Error, Sendable {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }
}

/// Values bound to a statement's parameters, as the protocol writes them:
/// an array for positional `?` parameters, an object for named ones.
///
/// Names may be written with or without their prefix: `"id"`, `":id"`,
/// `"@id"` and `"$id"` all bind `:id`, `@id` and `$id`; the names kept
/// here have no prefix.
public enum RPCParameters: Hashable, Sendable, Codable {
    case positional([RPCValue])
    case named([String: RPCValue])

    public init(from decoder: any Decoder) throws {
        let json = try JSONValue(from: decoder)
        switch json {
        case .array:
            self = .positional(try [RPCValue](from: decoder))
        case .object:
            let values = try [String: RPCValue](from: decoder)
            var named: [String: RPCValue] = [:]
            for (name, value) in values {
                var name = Substring(name)
                if let first = name.first, ":@$".contains(first) { name = name.dropFirst() }
                named[String(name)] = value
            }
            self = .named(named)
        default:
            throw DecodingError.typeMismatch(
                RPCParameters.self,
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: "expected an array or an object, found \(json.kindDescription)"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .positional(let values): try values.encode(to: encoder)
        case .named(let values): try values.encode(to: encoder)
        }
    }
}

/// Rows of values, as they are written in results and notifications.
public typealias RPCRows = [[RPCValue]]
