/// Encodes `Encodable` values into ``JSONValue`` trees, or JSON text.
///
/// It replaces `JSONEncoder`: keyed containers become objects, unkeyed
/// containers arrays. An optional property that is nil is left out (the
/// synthesized `encode(to:)` calls `encodeIfPresent`), and `encodeNil`
/// writes a null. Integers become ``JSONValue/integer(_:)`` (a `UInt64`
/// above `Int64.max` a ``JSONValue/double(_:)``), `Double` and `Float`
/// become doubles. A `Float` is converted through its shortest decimal
/// form, so that `Float(0.1)` is written `0.1` as `JSONEncoder` writes it.
/// A ``JSONValue`` is inserted as it is.
///
/// ```swift
/// struct Response: Encodable {
///     var id: Int
///     var result: JSONValue
///     var error: String?
/// }
///
/// let bytes = try JSONValueEncoder.encodeJSON(Response(id: 1, result: ["rows": []]))
/// // {"id":1,"result":{"rows":[]}}
/// ```
public enum JSONValueEncoder {
    /// Encodes a value into a JSON value.
    ///
    /// It throws `EncodingError.invalidValue` when the value encodes nothing.
    public static func encode(_ value: some Encodable) throws -> JSONValue {
        try ValueEncoder.encodeTopLevel(value)
    }

    /// Encodes a value into compact JSON text, with ``JSONWriter``.
    ///
    /// ```swift
    /// let bytes = try JSONValueEncoder.encodeJSON(["b": 2, "a": 1])  // {"a":1,"b":2}
    /// ```
    public static func encodeJSON(_ value: some Encodable) throws -> [UInt8] {
        let tree = try encode(value)
        var writer = JSONWriter(capacity: 256)
        writer.write(tree)
        return writer.bytes
    }
}

// MARK: - Storage

/// An object being encoded, shared by the containers that write to it.
///
/// Nested containers and super encoders are kept as pending values, made
/// JSON values at the end, so that what is encoded into them after they
/// were created is not lost.
private final class ObjectBox {
    var values: [String: JSONValue] = [:]
    var pending: [String: PendingValue] = [:]

    @inline(__always)
    func set(_ value: JSONValue, for key: String) {
        values[key] = value
        if !pending.isEmpty { pending[key] = nil }
    }

    func setPending(_ value: PendingValue, for key: String) {
        pending[key] = value
        values[key] = nil
    }

    func resolve() -> JSONValue {
        if pending.isEmpty { return .object(values) }
        var members = values
        for (key, value) in pending { members[key] = value.resolve() }
        return .object(members)
    }
}

/// An array being encoded, shared by the containers that write to it.
private final class ArrayBox {
    var values: [JSONValue] = []
    var pending: [Int: PendingValue] = [:]

    func appendPending(_ value: PendingValue) {
        pending[values.count] = value
        values.append(.null)
    }

    func resolve() -> JSONValue {
        if pending.isEmpty { return .array(values) }
        var elements = values
        for (index, value) in pending { elements[index] = value.resolve() }
        return .array(elements)
    }
}

/// A value whose content may still change: a nested container or a super encoder.
private enum PendingValue {
    case object(ObjectBox)
    case array(ArrayBox)
    case encoder(ValueEncoder)

    func resolve() -> JSONValue {
        switch self {
        case .object(let box): box.resolve()
        case .array(let box): box.resolve()
        case .encoder(let encoder): encoder.resolve() ?? .object([:])
        }
    }
}

@inline(__always)
private func integerValue<T: FixedWidthInteger>(_ integer: T) -> JSONValue {
    if let exact = Int64(exactly: integer) { return .integer(exact) }
    return .double(Double(integer))
}

/// A float as the double of its shortest decimal form, as Foundation writes it.
private func floatValue(_ float: Float) -> JSONValue {
    guard float.isFinite, let double = Double(float.description) else { return .double(Double(float)) }
    return .double(double)
}

// MARK: - Encoder

/// The encoder of one value, which is also its single-value container, and
/// the node of its coding path.
private final class ValueEncoder: CodingPathNode, Encoder, SingleValueEncodingContainer {
    enum Storage {
        case empty
        case value(JSONValue)
        case object(ObjectBox)
        case array(ArrayBox)
    }

    var storage = Storage.empty

    var codingPath: [any CodingKey] { path }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// The encoded value, or nil when nothing was encoded.
    func resolve() -> JSONValue? {
        switch storage {
        case .empty: nil
        case .value(let value): value
        case .object(let box): box.resolve()
        case .array(let box): box.resolve()
        }
    }

    static func encodeTopLevel<T: Encodable>(_ value: T) throws -> JSONValue {
        if let direct = directValue(value) { return direct }
        let encoder = ValueEncoder(parent: nil, key: nil)
        try value.encode(to: encoder)
        guard let result = encoder.resolve() else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: [], debugDescription: "Top-level \(T.self) did not encode any values."))
        }
        return result
    }

    /// Encodes a value at `parent` + `key`.
    @inline(__always)
    static func encode<T: Encodable>(_ value: T, parent: CodingPathNode?, key: (any CodingKey)?) throws -> JSONValue {
        if let direct = directValue(value) { return direct }
        let encoder = ValueEncoder(parent: parent, key: key)
        try value.encode(to: encoder)
        return encoder.resolve() ?? .object([:])
    }

    /// The JSON value of a JSON value, an array or a dictionary of them.
    @inline(__always)
    static func directValue<T: Encodable>(_ value: T) -> JSONValue? {
        if T.self == JSONValue.self { return unsafeBitCast(value, to: JSONValue.self) }
        if T.self == [String: JSONValue].self { return .object(unsafeBitCast(value, to: [String: JSONValue].self)) }
        if T.self == [JSONValue].self { return .array(unsafeBitCast(value, to: [JSONValue].self)) }
        return nil
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let box: ObjectBox
        if case .object(let existing) = storage {
            box = existing
        } else {
            box = ObjectBox()
            storage = .object(box)
        }
        return KeyedEncodingContainer(KeyedContainer<Key>(box: box, node: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let box: ArrayBox
        if case .array(let existing) = storage {
            box = existing
        } else {
            box = ArrayBox()
            storage = .array(box)
        }
        return UnkeyedContainer(box: box, node: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    // MARK: Single value

    func encodeNil() { storage = .value(.null) }
    func encode(_ value: Bool) { storage = .value(.bool(value)) }
    func encode(_ value: String) { storage = .value(.string(value)) }
    func encode(_ value: Double) { storage = .value(.double(value)) }
    func encode(_ value: Float) { storage = .value(floatValue(value)) }
    func encode(_ value: Int) { storage = .value(.integer(Int64(value))) }
    func encode(_ value: Int8) { storage = .value(.integer(Int64(value))) }
    func encode(_ value: Int16) { storage = .value(.integer(Int64(value))) }
    func encode(_ value: Int32) { storage = .value(.integer(Int64(value))) }
    func encode(_ value: Int64) { storage = .value(.integer(value)) }
    func encode(_ value: UInt) { storage = .value(integerValue(value)) }
    func encode(_ value: UInt8) { storage = .value(.integer(Int64(value))) }
    func encode(_ value: UInt16) { storage = .value(.integer(Int64(value))) }
    func encode(_ value: UInt32) { storage = .value(.integer(Int64(value))) }
    func encode(_ value: UInt64) { storage = .value(integerValue(value)) }

    func encode<T: Encodable>(_ value: T) throws {
        storage = .value(try Self.encode(value, parent: parent, key: key))
    }
}

// MARK: - Keyed container

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let box: ObjectBox
    let node: CodingPathNode

    var codingPath: [any CodingKey] { node.path }

    mutating func encodeNil(forKey key: Key) { box.set(.null, for: key.stringValue) }
    mutating func encode(_ value: Bool, forKey key: Key) { box.set(.bool(value), for: key.stringValue) }
    mutating func encode(_ value: String, forKey key: Key) { box.set(.string(value), for: key.stringValue) }
    mutating func encode(_ value: Double, forKey key: Key) { box.set(.double(value), for: key.stringValue) }
    mutating func encode(_ value: Float, forKey key: Key) { box.set(floatValue(value), for: key.stringValue) }
    mutating func encode(_ value: Int, forKey key: Key) { box.set(.integer(Int64(value)), for: key.stringValue) }
    mutating func encode(_ value: Int8, forKey key: Key) { box.set(.integer(Int64(value)), for: key.stringValue) }
    mutating func encode(_ value: Int16, forKey key: Key) { box.set(.integer(Int64(value)), for: key.stringValue) }
    mutating func encode(_ value: Int32, forKey key: Key) { box.set(.integer(Int64(value)), for: key.stringValue) }
    mutating func encode(_ value: Int64, forKey key: Key) { box.set(.integer(value), for: key.stringValue) }
    mutating func encode(_ value: UInt, forKey key: Key) { box.set(integerValue(value), for: key.stringValue) }
    mutating func encode(_ value: UInt8, forKey key: Key) { box.set(.integer(Int64(value)), for: key.stringValue) }
    mutating func encode(_ value: UInt16, forKey key: Key) { box.set(.integer(Int64(value)), for: key.stringValue) }
    mutating func encode(_ value: UInt32, forKey key: Key) { box.set(.integer(Int64(value)), for: key.stringValue) }
    mutating func encode(_ value: UInt64, forKey key: Key) { box.set(integerValue(value), for: key.stringValue) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        box.set(try ValueEncoder.encode(value, parent: node, key: key), for: key.stringValue)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = ObjectBox()
        box.setPending(.object(nested), for: key.stringValue)
        return KeyedEncodingContainer(
            KeyedContainer<NestedKey>(box: nested, node: CodingPathNode(parent: node, key: key)))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = ArrayBox()
        box.setPending(.array(nested), for: key.stringValue)
        return UnkeyedContainer(box: nested, node: CodingPathNode(parent: node, key: key))
    }

    mutating func superEncoder() -> any Encoder {
        let encoder = ValueEncoder(parent: node, key: StringKey.super)
        box.setPending(.encoder(encoder), for: StringKey.super.stringValue)
        return encoder
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        let encoder = ValueEncoder(parent: node, key: key)
        box.setPending(.encoder(encoder), for: key.stringValue)
        return encoder
    }
}

// MARK: - Unkeyed container

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let box: ArrayBox
    let node: CodingPathNode

    var codingPath: [any CodingKey] { node.path }
    var count: Int { box.values.count }

    mutating func encodeNil() { box.values.append(.null) }
    mutating func encode(_ value: Bool) { box.values.append(.bool(value)) }
    mutating func encode(_ value: String) { box.values.append(.string(value)) }
    mutating func encode(_ value: Double) { box.values.append(.double(value)) }
    mutating func encode(_ value: Float) { box.values.append(floatValue(value)) }
    mutating func encode(_ value: Int) { box.values.append(.integer(Int64(value))) }
    mutating func encode(_ value: Int8) { box.values.append(.integer(Int64(value))) }
    mutating func encode(_ value: Int16) { box.values.append(.integer(Int64(value))) }
    mutating func encode(_ value: Int32) { box.values.append(.integer(Int64(value))) }
    mutating func encode(_ value: Int64) { box.values.append(.integer(value)) }
    mutating func encode(_ value: UInt) { box.values.append(integerValue(value)) }
    mutating func encode(_ value: UInt8) { box.values.append(.integer(Int64(value))) }
    mutating func encode(_ value: UInt16) { box.values.append(.integer(Int64(value))) }
    mutating func encode(_ value: UInt32) { box.values.append(.integer(Int64(value))) }
    mutating func encode(_ value: UInt64) { box.values.append(integerValue(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        box.values.append(try ValueEncoder.encode(value, parent: node, key: IndexKey(index: count)))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = ObjectBox()
        let path = CodingPathNode(parent: node, key: IndexKey(index: count))
        box.appendPending(.object(nested))
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(box: nested, node: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = ArrayBox()
        let path = CodingPathNode(parent: node, key: IndexKey(index: count))
        box.appendPending(.array(nested))
        return UnkeyedContainer(box: nested, node: path)
    }

    mutating func superEncoder() -> any Encoder {
        let encoder = ValueEncoder(parent: node, key: IndexKey(index: count))
        box.appendPending(.encoder(encoder))
        return encoder
    }
}
