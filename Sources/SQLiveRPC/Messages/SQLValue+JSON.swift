import Foundation
import SQLiveEngine

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
/// SQLite itself treats them.
public struct RPCValue: Hashable, Sendable, Codable {
    public var value: SQLValue

    public init(_ value: SQLValue) {
        self.value = value
    }

    /// The key of the object that holds a BLOB.
    public static let blobKey = "$blob"

    /// The value as JSON.
    public var json: JSONValue {
        switch value {
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
        case .null: value = .null
        case .bool(let bool): value = .integer(bool ? 1 : 0)
        case .integer(let integer): value = .integer(integer)
        case .double(let double): value = .real(double)
        case .string(let string): value = .text(string)
        case .object(let members):
            guard members.count == 1, case .string(let base64)? = members[Self.blobKey] else {
                throw DescribedError("expected null, a number, a string or {\"$blob\": base64}, found an object")
            }
            guard let data = Data(base64Encoded: base64) else {
                throw DescribedError("'$blob' is not valid base64")
            }
            value = .blob(data)
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
/// `"@id"` and `"$id"` all bind `:id`, `@id` and `$id`.
public struct RPCParameters: Hashable, Sendable, Codable {
    public var parameters: QueryParameters

    public init(_ parameters: QueryParameters) {
        self.parameters = parameters
    }

    public init(from decoder: any Decoder) throws {
        let json = try JSONValue(from: decoder)
        switch json {
        case .array:
            parameters = .positional(try [RPCValue](from: decoder).map(\.value))
        case .object:
            let values = try [String: RPCValue](from: decoder)
            var named: [String: SQLValue] = [:]
            for (name, value) in values {
                var name = Substring(name)
                if let first = name.first, ":@$".contains(first) { name = name.dropFirst() }
                named[String(name)] = value.value
            }
            parameters = .named(named)
        default:
            throw DecodingError.typeMismatch(
                QueryParameters.self,
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: "expected an array or an object, found \(json.kindDescription)"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch parameters {
        case .positional(let values): try values.map(RPCValue.init).encode(to: encoder)
        case .named(let values): try values.mapValues(RPCValue.init).encode(to: encoder)
        }
    }
}

/// Rows of values, as they are written in results and notifications.
public typealias RPCRows = [[RPCValue]]

extension Array where Element == [SQLValue] {
    /// The rows in their protocol form.
    public var rpcRows: RPCRows { map { $0.map(RPCValue.init) } }
}
