import Foundation

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

extension QueryPlan {
    /// A step of a plan that costs more than it might, in words.
    public struct Hint: Hashable, Sendable {
        public enum Kind: Hashable, Sendable {
            /// Every row of a table is read.
            case fullScan(table: String)
            /// Rows are sorted or deduplicated after they are read.
            case temporaryBTree(purpose: String)
            /// SQLite builds an index for this statement alone, each run.
            case automaticIndex(table: String)
        }
        /// The node the hint is about.
        public var node: Int
        public var kind: Kind
        /// What it means and what would help, for a person.
        public var explanation: String
    }

    /// The costly steps: full scans of tables, temporary b-trees,
    /// automatic indexes.
    ///
    /// Plans name tables by their aliases; `resolve` gives the table an
    /// alias stands for, and its row count when known.
    ///
    /// ```swift
    /// plan.hints { _ in ("players", 10_000) }.map(\.explanation)
    /// // ["full scan of players (as p, about 10000 rows): every row is read; ..."]
    /// ```
    public func hints(resolve: (String) -> (table: String, rows: Int?)? = { _ in nil }) -> [Hint] {
        nodes.compactMap { node -> Hint? in
            let words = node.detail.split(separator: " ").map(String.init)
            if words.first == "SCAN", words.count >= 2, words[1] != "CONSTANT", !node.detail.contains("VIRTUAL TABLE"),
                !words[1].hasPrefix("(")
            {
                let alias = words[1]
                let resolved = resolve(alias)
                let table = resolved?.table ?? alias
                var notes: [String] = []
                if table.caseInsensitiveCompare(alias) != .orderedSame { notes.append("as \(alias)") }
                if let rows = resolved?.rows { notes.append("about \(rows) rows") }
                let size = notes.isEmpty ? "" : " (\(notes.joined(separator: ", ")))"
                let what =
                    node.detail.contains("COVERING INDEX") ? "every entry of an index is read" : "every row is read"
                return Hint(
                    node: node.id, kind: .fullScan(table: table),
                    explanation: "full scan of \(table)\(size): \(what); an index on the columns "
                        + "the statement filters or joins \(table) on would let SQLite search instead")
            }
            if node.detail.hasPrefix("USE TEMP B-TREE FOR ") {
                let purpose = String(node.detail.dropFirst("USE TEMP B-TREE FOR ".count))
                return Hint(
                    node: node.id, kind: .temporaryBTree(purpose: purpose),
                    explanation:
                        "temporary b-tree for \(purpose): the rows are \(purpose.contains("DISTINCT") ? "deduplicated" : "sorted") "
                        + "after they are read; when that order is one of a table's columns, an index in that order "
                        + "would give them ready")
            }
            if node.detail.contains("AUTOMATIC"),
                let index = words.firstIndex(of: "SEARCH") ?? words.firstIndex(of: "BLOOM"),
                index + 1 < words.count
            {
                let table = words[index] == "BLOOM" && index + 3 < words.count ? words[index + 3] : words[index + 1]
                return Hint(
                    node: node.id, kind: .automaticIndex(table: table),
                    explanation: "automatic index on \(table): SQLite builds an index for this statement alone, "
                        + "each time it runs; a permanent index would save that work")
            }
            return nil
        }
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
