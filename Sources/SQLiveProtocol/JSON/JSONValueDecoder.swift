/// Decodes `Decodable` values from a ``JSONValue`` tree.
///
/// It replaces `JSONDecoder` once the JSON text is parsed by ``JSONReader``,
/// and throws the same `DecodingError`s, with the same coding paths:
/// `keyNotFound` for a missing key, `valueNotFound` for a null where a value
/// is required, `typeMismatch` for a value of the wrong kind, `dataCorrupted`
/// for a number that is not an integer or is out of the range of the integer
/// type asked for.
///
/// Any integer type decodes from an integer in its range, or from a double
/// with an integral value (`2.0`); `Double` and `Float` from any number;
/// `String` only from a string, `Bool` only from a Boolean. A
/// ``JSONValue`` field receives its subtree as it is.
///
/// ```swift
/// struct Params: Decodable {
///     var sql: String
///     var maxRows: Int?
/// }
///
/// let request = try JSONReader.parse(#"{"params": {"sql": "SELECT 1"}}"#)
/// let params = try JSONValueDecoder.decode(Params.self, from: request["params"] ?? .null)
/// ```
public enum JSONValueDecoder {
    /// Decodes a value of the given type from a JSON value.
    public static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try ValueDecoder.decode(T.self, from: value, parent: nil, key: nil)
    }
}

// MARK: - Decoder

/// The decoder of one value, which is also its single-value container, and
/// the node of its coding path.
final class ValueDecoder: CodingPathNode, Decoder, SingleValueDecodingContainer {
    let value: JSONValue

    init(value: JSONValue, parent: CodingPathNode?, key: (any CodingKey)?) {
        self.value = value
        super.init(parent: parent, key: key)
    }

    /// Decodes a value at `parent` + `key`, taking a shortcut for JSON values.
    @inline(__always)
    static func decode<T: Decodable>(
        _ type: T.Type, from value: JSONValue, parent: CodingPathNode?, key: (any CodingKey)?
    ) throws -> T {
        if T.self == JSONValue.self { return unsafeBitCast(value, to: T.self) }
        if T.self == [String: JSONValue].self, case .object(let members) = value {
            return unsafeBitCast(members, to: T.self)
        }
        if T.self == [JSONValue].self, case .array(let elements) = value {
            return unsafeBitCast(elements, to: T.self)
        }
        return try T(from: ValueDecoder(value: value, parent: parent, key: key))
    }

    var codingPath: [any CodingKey] { path }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else {
            throw mismatch([String: Any].self, value, path, what: "a keyed decoding container")
        }
        return KeyedDecodingContainer(KeyedContainer<Key>(members: members, node: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else {
            throw mismatch([Any].self, value, path, what: "an unkeyed decoding container")
        }
        return UnkeyedContainer(elements: elements, node: self)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: Single value

    func decodeNil() -> Bool {
        if case .null = value { return true }
        return false
    }

    func decode(_ type: Bool.Type) throws -> Bool { try unboxBool(value) { path } }
    func decode(_ type: String.Type) throws -> String { try unboxString(value) { path } }
    func decode(_ type: Double.Type) throws -> Double { try unboxDouble(value) { path } }
    func decode(_ type: Float.Type) throws -> Float { try unboxFloat(value) { path } }
    func decode(_ type: Int.Type) throws -> Int { try unboxInteger(value, Int.self) { path } }
    func decode(_ type: Int8.Type) throws -> Int8 { try unboxInteger(value, Int8.self) { path } }
    func decode(_ type: Int16.Type) throws -> Int16 { try unboxInteger(value, Int16.self) { path } }
    func decode(_ type: Int32.Type) throws -> Int32 { try unboxInteger(value, Int32.self) { path } }
    func decode(_ type: Int64.Type) throws -> Int64 { try unboxInteger(value, Int64.self) { path } }
    func decode(_ type: UInt.Type) throws -> UInt { try unboxInteger(value, UInt.self) { path } }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try unboxInteger(value, UInt8.self) { path } }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try unboxInteger(value, UInt16.self) { path } }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try unboxInteger(value, UInt32.self) { path } }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try unboxInteger(value, UInt64.self) { path } }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try Self.decode(T.self, from: value, parent: parent, key: key)
    }
}

// MARK: - Keyed container

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: JSONValue]
    let node: CodingPathNode

    var codingPath: [any CodingKey] { node.path }
    var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    @inline(__always)
    func value(_ key: Key) throws -> JSONValue {
        guard let value = members[key.stringValue] else {
            throw DecodingError.keyNotFound(
                key,
                DecodingError.Context(
                    codingPath: node.path,
                    debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
        }
        return value
    }

    /// The value of a key, or nil when it is absent or null.
    @inline(__always)
    func present(_ key: Key) -> JSONValue? {
        guard let value = members[key.stringValue] else { return nil }
        if case .null = value { return nil }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        if case .null = try value(key) { return true }
        return false
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try unboxBool(value(key)) { node.path(appending: key) }
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try unboxString(value(key)) { node.path(appending: key) }
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try unboxDouble(value(key)) { node.path(appending: key) }
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try unboxFloat(value(key)) { node.path(appending: key) }
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        try unboxInteger(value(key), Int.self) { node.path(appending: key) }
    }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
        try unboxInteger(value(key), Int8.self) { node.path(appending: key) }
    }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
        try unboxInteger(value(key), Int16.self) { node.path(appending: key) }
    }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
        try unboxInteger(value(key), Int32.self) { node.path(appending: key) }
    }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        try unboxInteger(value(key), Int64.self) { node.path(appending: key) }
    }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
        try unboxInteger(value(key), UInt.self) { node.path(appending: key) }
    }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
        try unboxInteger(value(key), UInt8.self) { node.path(appending: key) }
    }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
        try unboxInteger(value(key), UInt16.self) { node.path(appending: key) }
    }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
        try unboxInteger(value(key), UInt32.self) { node.path(appending: key) }
    }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
        try unboxInteger(value(key), UInt64.self) { node.path(appending: key) }
    }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try ValueDecoder.decode(T.self, from: value(key), parent: node, key: key)
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        guard let value = present(key) else { return nil }
        return try unboxBool(value) { node.path(appending: key) }
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let value = present(key) else { return nil }
        return try unboxString(value) { node.path(appending: key) }
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        guard let value = present(key) else { return nil }
        return try unboxDouble(value) { node.path(appending: key) }
    }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        guard let value = present(key) else { return nil }
        return try unboxFloat(value) { node.path(appending: key) }
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        guard let value = present(key) else { return nil }
        return try unboxInteger(value, Int.self) { node.path(appending: key) }
    }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? {
        guard let value = present(key) else { return nil }
        return try unboxInteger(value, Int8.self) { node.path(appending: key) }
    }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
        guard let value = present(key) else { return nil }
        return try unboxInteger(value, Int16.self) { node.path(appending: key) }
    }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
        guard let value = present(key) else { return nil }
        return try unboxInteger(value, Int32.self) { node.path(appending: key) }
    }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        guard let value = present(key) else { return nil }
        return try unboxInteger(value, Int64.self) { node.path(appending: key) }
    }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? {
        guard let value = present(key) else { return nil }
        return try unboxInteger(value, UInt.self) { node.path(appending: key) }
    }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? {
        guard let value = present(key) else { return nil }
        return try unboxInteger(value, UInt8.self) { node.path(appending: key) }
    }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
        guard let value = present(key) else { return nil }
        return try unboxInteger(value, UInt16.self) { node.path(appending: key) }
    }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
        guard let value = present(key) else { return nil }
        return try unboxInteger(value, UInt32.self) { node.path(appending: key) }
    }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
        guard let value = present(key) else { return nil }
        return try unboxInteger(value, UInt64.self) { node.path(appending: key) }
    }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let value = present(key) else { return nil }
        return try ValueDecoder.decode(T.self, from: value, parent: node, key: key)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try ValueDecoder(value: value(key), parent: node, key: key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ValueDecoder(value: value(key), parent: node, key: key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        ValueDecoder(value: members[StringKey.super.stringValue] ?? .null, parent: node, key: StringKey.super)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        ValueDecoder(value: members[key.stringValue] ?? .null, parent: node, key: key)
    }
}

// MARK: - Unkeyed container

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let node: CodingPathNode
    private(set) var currentIndex = 0

    init(elements: [JSONValue], node: CodingPathNode) {
        self.elements = elements
        self.node = node
    }

    var codingPath: [any CodingKey] { node.path }
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    /// The path of the current element.
    var elementPath: [any CodingKey] { node.path(appending: IndexKey(index: currentIndex)) }

    /// The current element, which must exist.
    @inline(__always)
    func current<T>(_ type: T.Type) throws -> JSONValue {
        guard currentIndex < elements.count else {
            throw DecodingError.valueNotFound(
                T.self, DecodingError.Context(codingPath: elementPath, debugDescription: "Unkeyed container is at end.")
            )
        }
        return elements[currentIndex]
    }

    /// Decodes the current element and moves past it once decoded.
    @inline(__always)
    mutating func next<T>(_ type: T.Type, _ unbox: (JSONValue, () -> [any CodingKey]) throws -> T) throws -> T {
        let result = try unbox(current(T.self)) { elementPath }
        currentIndex += 1
        return result
    }

    /// Decodes the current element if it is not null, and moves past it.
    @inline(__always)
    mutating func nextIfPresent<T>(
        _ type: T.Type, _ unbox: (JSONValue, () -> [any CodingKey]) throws -> T
    ) throws -> T? {
        guard currentIndex < elements.count else { return nil }
        if case .null = elements[currentIndex] {
            currentIndex += 1
            return nil
        }
        return try next(T.self, unbox)
    }

    mutating func decodeNil() throws -> Bool {
        if case .null = try current(Any?.self) {
            currentIndex += 1
            return true
        }
        return false
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type, unboxBool) }
    mutating func decode(_ type: String.Type) throws -> String { try next(type, unboxString) }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type, unboxDouble) }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type, unboxFloat) }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type) { try unboxInteger($0, type, $1) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type) { try unboxInteger($0, type, $1) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type) { try unboxInteger($0, type, $1) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type) { try unboxInteger($0, type, $1) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type) { try unboxInteger($0, type, $1) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type) { try unboxInteger($0, type, $1) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) { try unboxInteger($0, type, $1) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 {
        try next(type) { try unboxInteger($0, type, $1) }
    }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 {
        try next(type) { try unboxInteger($0, type, $1) }
    }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 {
        try next(type) { try unboxInteger($0, type, $1) }
    }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (node, index) = (node, currentIndex)
        return try next(type) { value, _ in
            try ValueDecoder.decode(T.self, from: value, parent: node, key: IndexKey(index: index))
        }
    }

    mutating func decodeIfPresent(_ type: Bool.Type) throws -> Bool? { try nextIfPresent(type, unboxBool) }
    mutating func decodeIfPresent(_ type: String.Type) throws -> String? { try nextIfPresent(type, unboxString) }
    mutating func decodeIfPresent(_ type: Double.Type) throws -> Double? { try nextIfPresent(type, unboxDouble) }
    mutating func decodeIfPresent(_ type: Float.Type) throws -> Float? { try nextIfPresent(type, unboxFloat) }
    mutating func decodeIfPresent(_ type: Int.Type) throws -> Int? {
        try nextIfPresent(type) { try unboxInteger($0, type, $1) }
    }
    mutating func decodeIfPresent(_ type: Int64.Type) throws -> Int64? {
        try nextIfPresent(type) { try unboxInteger($0, type, $1) }
    }
    mutating func decodeIfPresent<T: Decodable>(_ type: T.Type) throws -> T? {
        let (node, index) = (node, currentIndex)
        return try nextIfPresent(type) { value, _ in
            try ValueDecoder.decode(T.self, from: value, parent: node, key: IndexKey(index: index))
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let decoder = ValueDecoder(
            value: try current(KeyedDecodingContainer<NestedKey>.self), parent: node,
            key: IndexKey(index: currentIndex))
        let container = try decoder.container(keyedBy: type)
        currentIndex += 1
        return container
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let decoder = ValueDecoder(
            value: try current((any UnkeyedDecodingContainer).self), parent: node, key: IndexKey(index: currentIndex))
        let container = try decoder.unkeyedContainer()
        currentIndex += 1
        return container
    }

    mutating func superDecoder() throws -> any Decoder {
        let decoder = ValueDecoder(
            value: try current((any Decoder).self), parent: node, key: IndexKey(index: currentIndex))
        currentIndex += 1
        return decoder
    }
}

// MARK: - Conversions

/// The error for a value of the wrong kind: `valueNotFound` for null,
/// `typeMismatch` otherwise.
private func mismatch(
    _ type: Any.Type, _ value: JSONValue, _ path: [any CodingKey], what: String? = nil
) -> DecodingError {
    let expected = what ?? "\(type)"
    if case .null = value {
        return DecodingError.valueNotFound(
            type,
            DecodingError.Context(codingPath: path, debugDescription: "Expected \(expected) but found null instead."))
    }
    return DecodingError.typeMismatch(
        type,
        DecodingError.Context(
            codingPath: path,
            debugDescription: "Expected to decode \(expected) but found \(value.kindDescription) instead."
        ))
}

@inline(__always)
private func unboxBool(_ value: JSONValue, _ path: () -> [any CodingKey]) throws -> Bool {
    if case .bool(let bool) = value { return bool }
    throw mismatch(Bool.self, value, path())
}

@inline(__always)
private func unboxString(_ value: JSONValue, _ path: () -> [any CodingKey]) throws -> String {
    if case .string(let string) = value { return string }
    throw mismatch(String.self, value, path())
}

@inline(__always)
private func unboxDouble(_ value: JSONValue, _ path: () -> [any CodingKey]) throws -> Double {
    switch value {
    case .double(let double): return double
    case .integer(let integer): return Double(integer)
    default: throw mismatch(Double.self, value, path())
    }
}

private func unboxFloat(_ value: JSONValue, _ path: () -> [any CodingKey]) throws -> Float {
    let double = try unboxDouble(value) { path() }
    if double.isFinite && double.magnitude > Double(Float.greatestFiniteMagnitude) {
        throw DecodingError.dataCorrupted(
            DecodingError.Context(codingPath: path(), debugDescription: "The number \(value) does not fit in Float."))
    }
    return Float(double)
}

@inline(__always)
private func unboxInteger<T: FixedWidthInteger>(
    _ value: JSONValue, _ type: T.Type, _ path: () -> [any CodingKey]
) throws -> T {
    switch value {
    case .integer(let integer):
        if let result = T(exactly: integer) { return result }
    case .double(let double):
        if let result = T(exactly: double) { return result }
    default:
        throw mismatch(T.self, value, path())
    }
    throw DecodingError.dataCorrupted(
        DecodingError.Context(
            codingPath: path(),
            debugDescription: "The number \(value) is not an integer, or is out of the range of \(T.self)."))
}
