/// A JSON value, with integers kept apart from other numbers.
///
/// The protocol carries SQLite values, and an SQLite `INTEGER` is an exact
/// 64-bit integer: ``JSONReader`` reads a number written without fraction
/// nor exponent that fits an `Int64` as an `.integer`, any other number
/// (`1.0`, `1e2`) as a `.double`, and ``JSONValueDecoder`` hands the parsed
/// value over as it is. Through another decoder (Foundation's), `init(from:)`
/// reads an integral number such as `1.0` as an integer: the value is the
/// same, only its kind is lost. Objects are unordered; ``JSONWriter``
/// writes their keys sorted.
///
/// ```swift
/// let value: JSONValue = .object(["id": .integer(Int64.max), "name": .string("games")])
/// ```
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The member of an object, or nil.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The element of an array, or nil.
    public subscript(index: Int) -> JSONValue? {
        if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
        return nil
    }

    /// The string, if the value is a string.
    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    /// The integer, if the value is an integer (or a double without a fraction).
    public var integerValue: Int64? {
        switch self {
        case .integer(let integer): integer
        case .double(let double): Int64(exactly: double)
        default: nil
        }
    }

    /// The number, if the value is a number.
    public var doubleValue: Double? {
        switch self {
        case .integer(let integer): Double(integer)
        case .double(let double): double
        default: nil
        }
    }

    /// The Boolean, if the value is a Boolean.
    public var boolValue: Bool? {
        if case .bool(let bool) = self { return bool }
        return nil
    }

    /// The elements, if the value is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The members, if the value is an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// What the value is, as error messages name it: "a string", "an object"...
    public var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a Boolean"
        case .integer, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue: CustomStringConvertible {
    /// The value as compact JSON text, with sorted keys, as ``JSONWriter`` writes it.
    public var description: String {
        var writer = JSONWriter(capacity: 64)
        writer.write(self)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

extension JSONValue: Codable {
    /// Decodes any JSON value, through a single-value container.
    ///
    /// Each kind is tried in turn. A value of no kind is a number out of
    /// every range (`1e400`) or a string with an unpaired surrogate escape
    /// (`"\ud800"`): it is refused with its coding path.
    public init(from decoder: any Decoder) throws {
        // From sqlive's own decoder, the value is there already, kind and
        // all: `1.0` stays a double, which trying Int64 first would lose.
        if let decoder = decoder as? ValueDecoder {
            self = decoder.value
            return
        }
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let integer = try? container.decode(Int64.self) {
            self = .integer(integer)
        } else if let double = try? container.decode(Double.self) {
            self = .double(double)
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let array = try Self.decodeIfOfKind([JSONValue].self, container) {
            self = .array(array)
        } else if let object = try Self.decodeIfOfKind([String: JSONValue].self, container) {
            self = .object(object)
        } else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: "a number out of range or a string with an invalid escape"))
        }
    }

    /// The container's value as an array or an object, or nil when it is of
    /// another kind; an error within it (a nested value of no kind) is thrown.
    private static func decodeIfOfKind<T: Decodable>(
        _ type: T.Type, _ container: any SingleValueDecodingContainer
    ) throws -> T? {
        do {
            return try container.decode(type)
        } catch DecodingError.typeMismatch(_, let context)
            where context.codingPath.count == container.codingPath.count
        {
            return nil
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let bool): try container.encode(bool)
        case .integer(let integer): try container.encode(integer)
        case .double(let double): try container.encode(double)
        case .string(let string): try container.encode(string)
        case .array(let array): try container.encode(array)
        case .object(let object): try container.encode(object)
        }
    }
}
