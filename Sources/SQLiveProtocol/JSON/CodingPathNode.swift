/// A coding path as a linked list from the innermost key to the root.
///
/// Decoders and encoders keep their path as a node, and make the array of
/// keys only when it is asked for: most values are coded without an error,
/// and never need it.
///
/// ```swift
/// let root = CodingPathNode(parent: nil, key: nil)
/// let node = CodingPathNode(parent: root, key: IndexKey(index: 1))
/// node.path.map(\.stringValue)  // ["Index 1"]
/// ```
class CodingPathNode {
    /// The node of the enclosing value, or nil at the root.
    final let parent: CodingPathNode?
    /// The last key of the path, or nil at the root.
    final let key: (any CodingKey)?

    init(parent: CodingPathNode?, key: (any CodingKey)?) {
        self.parent = parent
        self.key = key
    }

    /// The keys from the root.
    final var path: [any CodingKey] {
        var keys: [any CodingKey] = []
        var node: CodingPathNode? = self
        while let current = node {
            if let key = current.key { keys.append(key) }
            node = current.parent
        }
        keys.reverse()
        return keys
    }

    /// The path followed by one more key.
    final func path(appending key: any CodingKey) -> [any CodingKey] {
        var keys = path
        keys.append(key)
        return keys
    }
}

/// The key of an element of an unkeyed container: "Index 3", as Foundation.
struct IndexKey: CodingKey, Sendable {
    let index: Int

    init(index: Int) { self.index = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.index = intValue }

    var stringValue: String { "Index \(index)" }
    var intValue: Int? { index }
}

/// A key given as a string: "super", or the key of a dictionary.
struct StringKey: CodingKey, Sendable {
    let stringValue: String

    init(_ string: String) { self.stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { self.stringValue = String(intValue) }

    var intValue: Int? { nil }

    static let `super` = StringKey("super")
}
