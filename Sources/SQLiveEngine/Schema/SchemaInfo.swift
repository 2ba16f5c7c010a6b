/// The schema of a database: what completion and `database/schema` show.
public struct SchemaInfo: Hashable, Sendable {
    /// A table or a view, with its columns.
    public struct Relation: Hashable, Sendable {
        public enum Kind: String, Hashable, Sendable {
            case table, view
        }
        public var name: String
        public var kind: Kind
        public var columns: [Column]
        /// The `CREATE` statement, as stored in `sqlite_master`.
        public var sql: String?
    }

    public struct Column: Hashable, Sendable {
        public var name: String
        /// The declared type, as written in `CREATE TABLE` (may be empty).
        public var type: String
        public var notNull: Bool
        /// The column's position in the primary key (1-based), or 0.
        public var primaryKeyIndex: Int
        public var isPrimaryKey: Bool { primaryKeyIndex > 0 }

        public init(name: String, type: String = "", notNull: Bool = false, primaryKeyIndex: Int = 0) {
            self.name = name
            self.type = type
            self.notNull = notNull
            self.primaryKeyIndex = primaryKeyIndex
        }
    }

    /// An index or a trigger, attached to a table.
    public struct Object: Hashable, Sendable {
        public var name: String
        public var table: String
        public var sql: String?
    }

    /// Tables and views, sorted by name.
    public var relations: [Relation]
    public var indexes: [Object]
    public var triggers: [Object]

    /// The tables, without views.
    public var tables: [Relation] { relations.filter { $0.kind == .table } }
    /// The views.
    public var views: [Relation] { relations.filter { $0.kind == .view } }

    /// The `CREATE` statements of every object whose name matches a
    /// `LIKE` pattern (all of them without one), as `.schema` prints them.
    public func createStatements(matching pattern: String? = nil) -> [String] {
        let objects: [(name: String, table: String, sql: String?)] =
            relations.map { ($0.name, $0.name, $0.sql) } + indexes.map { ($0.name, $0.table, $0.sql) }
            + triggers.map { ($0.name, $0.table, $0.sql) }
        return objects.compactMap { object in
            guard let sql = object.sql else { return nil }
            if let pattern, !Self.like(pattern, object.name) && !Self.like(pattern, object.table) { return nil }
            return sql + ";"
        }
    }

    /// SQL `LIKE` matching, as `.tables` and `.schema` filter names:
    /// case-insensitive, `%` any run, `_` any character.
    ///
    /// One pass with a single backtrack point (the last `%`): at most
    /// pattern × text steps, whatever the pattern (`%a%a%a%…b` included).
    public static func like(_ pattern: String, _ text: String) -> Bool {
        let pattern = Array(pattern.lowercased())
        let text = Array(text.lowercased())
        var p = 0
        var t = 0
        var star: Int?
        var resume = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == "%" {
                star = p
                p += 1
                resume = t
            } else if p < pattern.count, pattern[p] == "_" || pattern[p] == text[t] {
                p += 1
                t += 1
            } else if let star {
                // Let the last `%` take one more character.
                p = star + 1
                resume += 1
                t = resume
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == "%" { p += 1 }
        return p == pattern.count
    }
}
