/// The plan SQLite chose for a query, from `EXPLAIN QUERY PLAN`.
///
/// The plan is a tree: each node has an `id` and the `id` of its parent
/// (0 for top-level nodes). `rendered` prints it the way sqlite3 does:
///
/// ```text
/// QUERY PLAN
/// |--SCAN games
/// `--SEARCH players USING INDEX players_gameID (gameID=?)
/// ```
public struct QueryPlan: Hashable, Sendable {
    public struct Node: Hashable, Sendable {
        public var id: Int
        public var parent: Int
        public var detail: String

        public init(id: Int, parent: Int, detail: String) {
            self.id = id
            self.parent = parent
            self.detail = detail
        }
    }

    /// The nodes in SQLite's order (a parent before its children).
    public var nodes: [Node]

    public init(nodes: [Node]) {
        self.nodes = nodes
    }

    /// The plan as sqlite3's `.eqp on` and `EXPLAIN QUERY PLAN` print it.
    public var rendered: String {
        var lines = ["QUERY PLAN"]
        func render(parent: Int, prefix: String) {
            let children = nodes.filter { $0.parent == parent && $0.id != parent }
            for (offset, child) in children.enumerated() {
                let isLast = offset == children.count - 1
                lines.append(prefix + (isLast ? "`--" : "|--") + child.detail)
                render(parent: child.id, prefix: prefix + (isLast ? "   " : "|  "))
            }
        }
        render(parent: 0, prefix: "")
        return lines.joined(separator: "\n")
    }
}

/// One instruction of a statement's bytecode program, from `EXPLAIN`.
public struct BytecodeInstruction: Hashable, Sendable {
    public var addr: Int
    public var opcode: String
    public var p1: Int
    public var p2: Int
    public var p3: Int
    public var p4: String?
    public var p5: Int
    public var comment: String?

    /// The column names of `EXPLAIN`, in order.
    public static let columns = ["addr", "opcode", "p1", "p2", "p3", "p4", "p5", "comment"]

    /// The instruction as a row of values, in `columns` order.
    public var values: [SQLValue] {
        [
            .integer(Int64(addr)), .text(opcode), .integer(Int64(p1)), .integer(Int64(p2)),
            .integer(Int64(p3)), p4.map(SQLValue.text) ?? .null, .integer(Int64(p5)),
            comment.map(SQLValue.text) ?? .null,
        ]
    }
}
