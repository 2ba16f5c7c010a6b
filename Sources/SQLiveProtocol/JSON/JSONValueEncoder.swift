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
        try ValueEncoder.encodeTopLevel(value).jsonValue
    }

    /// Encodes a value into compact JSON text, with ``JSONWriter``.
    ///
    /// ```swift
    /// let bytes = try JSONValueEncoder.encodeJSON(["b": 2, "a": 1])  // {"a":1,"b":2}
    /// ```
    public static func encodeJSON(_ value: some Encodable) throws -> [UInt8] {
        // Written from the encoder's own tree: no dictionary is made.
        let node = try ValueEncoder.encodeTopLevel(value)
        var writer = JSONWriter(capacity: 256)
        writer.write(node: node)
        return writer.bytes
    }
}

// MARK: - Storage

/// A value being encoded.
///
/// Objects and arrays are references, shared by the containers that write
/// to them, so that what is encoded into a nested container after it was
/// made is not lost; they become JSON values, or JSON text, at the end.
private enum Node {
    case value(JSONValue)
    case object(ObjectBox)
    case array(ArrayBox)
    /// A super encoder: whatever it encodes, an empty object if nothing.
    case encoder(ValueEncoder)

    static var emptyObject: Node { .value(.object([:])) }

    var jsonValue: JSONValue {
        switch self {
        case .value(let value):
            return value
        case .object(let box):
            var members = [String: JSONValue](minimumCapacity: box.entries.count)
            // In order: when a key repeats, the last member wins.
            for entry in box.entries { members[entry.key] = entry.node.jsonValue }
            return .object(members)
        case .array(let box):
            return .array(box.elements.map(\.jsonValue))
        case .encoder(let encoder):
            return (encoder.node ?? Node.emptyObject).jsonValue
        }
    }
}

// Invariant: the boxes and encoders below live for one call of `encode`
// and are reached only by the thread running it, so their storage is
// marked `@exclusivity(unchecked)`: the dynamic exclusivity checks cost
// about 15% of encoding a response, and could never fire.

/// The members of an object being encoded, in the order they were encoded.
private final class ObjectBox {
    @exclusivity(unchecked) var entries: [(key: String, node: Node)] = []

    @inline(__always)
    func append(_ key: String, _ node: Node) {
        if entries.capacity == 0 { entries.reserveCapacity(8) }
        entries.append((key: key, node: node))
    }
}

/// The elements of an array being encoded.
private final class ArrayBox {
    @exclusivity(unchecked) var elements: [Node] = []
}

extension JSONWriter {
    /// Writes a node as its JSON value would be written, without making it.
    fileprivate mutating func write(node: Node) {
        switch node {
        case .value(let value):
            writeValue(value)
        case .object(let box):
            writeObject(box.entries)
        case .array(let box):
            bytes.append(UInt8(ascii: "["))
            var first = true
            for element in box.elements {
                if first { first = false } else { bytes.append(UInt8(ascii: ",")) }
                write(node: element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .encoder(let encoder):
            write(node: encoder.node ?? Node.emptyObject)
        }
    }

    /// Writes members sorted by key; when a key repeats, the last one wins.
    private mutating func writeObject(_ entries: [(key: String, node: Node)]) {
        let count = entries.count
        if count == 1 {
            bytes.append(UInt8(ascii: "{"))
            appendString(entries[0].key)
            bytes.append(UInt8(ascii: ":"))
            write(node: entries[0].node)
            bytes.append(UInt8(ascii: "}"))
            return
        }
        // Keys equal as strings but not as bytes ("é", "e\u{301}") are
        // merged as a dictionary merges them, by the dictionary's path.
        for entry in entries where !isASCII(entry.key) {
            writeValue(Node.object(ObjectBox(entries)).jsonValue)
            return
        }
        bytes.append(UInt8(ascii: "{"))
        withUnsafeTemporaryAllocation(of: Int.self, capacity: count) { order in
            // The indices sorted by key, then by position.
            if count <= 16 {
                // An insertion sort, for the usual small objects.
                for i in 0..<count {
                    var j = i
                    while j > 0 && utf8Compare(entries[order[j - 1]].key, entries[i].key) > 0 {
                        order[j] = order[j - 1]
                        j -= 1
                    }
                    order[j] = i
                }
            } else {
                _ = order.initialize(from: 0..<count)
                var sortable = order
                sortable.sort { a, b in
                    let comparison = utf8Compare(entries[a].key, entries[b].key)
                    return comparison != 0 ? comparison < 0 : a < b
                }
            }
            var first = true
            for i in 0..<count {
                let entry = entries[order[i]]
                if i + 1 < count && utf8Compare(entry.key, entries[order[i + 1]].key) == 0 { continue }
                if first { first = false } else { bytes.append(UInt8(ascii: ",")) }
                appendString(entry.key)
                bytes.append(UInt8(ascii: ":"))
                write(node: entry.node)
            }
        }
        bytes.append(UInt8(ascii: "}"))
    }
}

extension ObjectBox {
    convenience init(_ entries: [(key: String, node: Node)]) {
        self.init()
        self.entries = entries
    }
}

/// Whether a string is all ASCII.
private func isASCII(_ string: String) -> Bool {
    if let result = string.utf8.withContiguousStorageIfAvailable({ utf8 in
        utf8.allSatisfy { $0 < 0x80 }
    }) {
        return result
    }
    return string.utf8.allSatisfy { $0 < 0x80 }
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
    /// What was encoded, or nil.
    @exclusivity(unchecked) var node: Node?

    var codingPath: [any CodingKey] { path }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    static func encodeTopLevel<T: Encodable>(_ value: T) throws -> Node {
        if let direct = directValue(value) { return .value(direct) }
        let encoder = ValueEncoder(parent: nil, key: nil)
        try value.encode(to: encoder)
        guard let node = encoder.node else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: [], debugDescription: "Top-level \(T.self) did not encode any values."))
        }
        return node
    }

    /// Encodes a value at `parent` + `key`.
    @inline(__always)
    static func encode<T: Encodable>(_ value: T, parent: CodingPathNode?, key: (any CodingKey)?) throws -> Node {
        if let direct = directValue(value) { return .value(direct) }
        let encoder = ValueEncoder(parent: parent, key: key)
        try value.encode(to: encoder)
        return encoder.node ?? Node.emptyObject
    }

    /// The JSON value of a JSON value, of an array or a dictionary of them,
    /// or of an array of common scalars, made without an encoder.
    @inline(__always)
    static func directValue<T: Encodable>(_ value: T) -> JSONValue? {
        if T.self == JSONValue.self { return unsafeBitCast(value, to: JSONValue.self) }
        if T.self == [String: JSONValue].self { return .object(unsafeBitCast(value, to: [String: JSONValue].self)) }
        if T.self == [JSONValue].self { return .array(unsafeBitCast(value, to: [JSONValue].self)) }
        if T.self == [[JSONValue]].self {
            return .array(unsafeBitCast(value, to: [[JSONValue]].self).map(JSONValue.array))
        }
        if T.self == [String].self { return .array(unsafeBitCast(value, to: [String].self).map(JSONValue.string)) }
        if T.self == [Int].self { return .array(unsafeBitCast(value, to: [Int].self).map { .integer(Int64($0)) }) }
        if T.self == [Int64].self { return .array(unsafeBitCast(value, to: [Int64].self).map(JSONValue.integer)) }
        if T.self == [Double].self { return .array(unsafeBitCast(value, to: [Double].self).map(JSONValue.double)) }
        if T.self == [Bool].self { return .array(unsafeBitCast(value, to: [Bool].self).map(JSONValue.bool)) }
        return nil
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let box: ObjectBox
        if case .object(let existing) = node {
            box = existing
        } else {
            box = ObjectBox()
            node = .object(box)
        }
        return KeyedEncodingContainer(KeyedContainer<Key>(box: box, node: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let box: ArrayBox
        if case .array(let existing) = node {
            box = existing
        } else {
            box = ArrayBox()
            node = .array(box)
        }
        return UnkeyedContainer(box: box, node: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    // MARK: Single value

    func encodeNil() { node = .value(.null) }
    func encode(_ value: Bool) { node = .value(.bool(value)) }
    func encode(_ value: String) { node = .value(.string(value)) }
    func encode(_ value: Double) { node = .value(.double(value)) }
    func encode(_ value: Float) { node = .value(floatValue(value)) }
    func encode(_ value: Int) { node = .value(.integer(Int64(value))) }
    func encode(_ value: Int8) { node = .value(.integer(Int64(value))) }
    func encode(_ value: Int16) { node = .value(.integer(Int64(value))) }
    func encode(_ value: Int32) { node = .value(.integer(Int64(value))) }
    func encode(_ value: Int64) { node = .value(.integer(value)) }
    func encode(_ value: UInt) { node = .value(integerValue(value)) }
    func encode(_ value: UInt8) { node = .value(.integer(Int64(value))) }
    func encode(_ value: UInt16) { node = .value(.integer(Int64(value))) }
    func encode(_ value: UInt32) { node = .value(.integer(Int64(value))) }
    func encode(_ value: UInt64) { node = .value(integerValue(value)) }

    func encode<T: Encodable>(_ value: T) throws {
        node = try Self.encode(value, parent: parent, key: key)
    }
}

// MARK: - Keyed container

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let box: ObjectBox
    let node: CodingPathNode

    var codingPath: [any CodingKey] { node.path }

    mutating func encodeNil(forKey key: Key) { box.append(key.stringValue, .value(.null)) }
    mutating func encode(_ value: Bool, forKey key: Key) { box.append(key.stringValue, .value(.bool(value))) }
    mutating func encode(_ value: String, forKey key: Key) { box.append(key.stringValue, .value(.string(value))) }
    mutating func encode(_ value: Double, forKey key: Key) { box.append(key.stringValue, .value(.double(value))) }
    mutating func encode(_ value: Float, forKey key: Key) { box.append(key.stringValue, .value(floatValue(value))) }
    mutating func encode(_ value: Int, forKey key: Key) { box.append(key.stringValue, .value(.integer(Int64(value)))) }
    mutating func encode(_ value: Int8, forKey key: Key) { box.append(key.stringValue, .value(.integer(Int64(value)))) }
    mutating func encode(_ value: Int16, forKey key: Key) {
        box.append(key.stringValue, .value(.integer(Int64(value))))
    }
    mutating func encode(_ value: Int32, forKey key: Key) {
        box.append(key.stringValue, .value(.integer(Int64(value))))
    }
    mutating func encode(_ value: Int64, forKey key: Key) { box.append(key.stringValue, .value(.integer(value))) }
    mutating func encode(_ value: UInt, forKey key: Key) { box.append(key.stringValue, .value(integerValue(value))) }
    mutating func encode(_ value: UInt8, forKey key: Key) {
        box.append(key.stringValue, .value(.integer(Int64(value))))
    }
    mutating func encode(_ value: UInt16, forKey key: Key) {
        box.append(key.stringValue, .value(.integer(Int64(value))))
    }
    mutating func encode(_ value: UInt32, forKey key: Key) {
        box.append(key.stringValue, .value(.integer(Int64(value))))
    }
    mutating func encode(_ value: UInt64, forKey key: Key) { box.append(key.stringValue, .value(integerValue(value))) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let encoded = try ValueEncoder.encode(value, parent: node, key: key)
        box.append(key.stringValue, encoded)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = ObjectBox()
        box.append(key.stringValue, .object(nested))
        return KeyedEncodingContainer(
            KeyedContainer<NestedKey>(box: nested, node: CodingPathNode(parent: node, key: key)))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = ArrayBox()
        box.append(key.stringValue, .array(nested))
        return UnkeyedContainer(box: nested, node: CodingPathNode(parent: node, key: key))
    }

    mutating func superEncoder() -> any Encoder {
        let encoder = ValueEncoder(parent: node, key: StringKey.super)
        box.append(StringKey.super.stringValue, .encoder(encoder))
        return encoder
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        let encoder = ValueEncoder(parent: node, key: key)
        box.append(key.stringValue, .encoder(encoder))
        return encoder
    }
}

// MARK: - Unkeyed container

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let box: ArrayBox
    let node: CodingPathNode

    var codingPath: [any CodingKey] { node.path }
    var count: Int { box.elements.count }

    mutating func encodeNil() { box.elements.append(.value(.null)) }
    mutating func encode(_ value: Bool) { box.elements.append(.value(.bool(value))) }
    mutating func encode(_ value: String) { box.elements.append(.value(.string(value))) }
    mutating func encode(_ value: Double) { box.elements.append(.value(.double(value))) }
    mutating func encode(_ value: Float) { box.elements.append(.value(floatValue(value))) }
    mutating func encode(_ value: Int) { box.elements.append(.value(.integer(Int64(value)))) }
    mutating func encode(_ value: Int8) { box.elements.append(.value(.integer(Int64(value)))) }
    mutating func encode(_ value: Int16) { box.elements.append(.value(.integer(Int64(value)))) }
    mutating func encode(_ value: Int32) { box.elements.append(.value(.integer(Int64(value)))) }
    mutating func encode(_ value: Int64) { box.elements.append(.value(.integer(value))) }
    mutating func encode(_ value: UInt) { box.elements.append(.value(integerValue(value))) }
    mutating func encode(_ value: UInt8) { box.elements.append(.value(.integer(Int64(value)))) }
    mutating func encode(_ value: UInt16) { box.elements.append(.value(.integer(Int64(value)))) }
    mutating func encode(_ value: UInt32) { box.elements.append(.value(.integer(Int64(value)))) }
    mutating func encode(_ value: UInt64) { box.elements.append(.value(integerValue(value))) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let encoded = try ValueEncoder.encode(value, parent: node, key: IndexKey(index: count))
        box.elements.append(encoded)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = ObjectBox()
        let path = CodingPathNode(parent: node, key: IndexKey(index: count))
        box.elements.append(.object(nested))
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(box: nested, node: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = ArrayBox()
        let path = CodingPathNode(parent: node, key: IndexKey(index: count))
        box.elements.append(.array(nested))
        return UnkeyedContainer(box: nested, node: path)
    }

    mutating func superEncoder() -> any Encoder {
        let encoder = ValueEncoder(parent: node, key: IndexKey(index: count))
        box.elements.append(.encoder(encoder))
        return encoder
    }
}
