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

    /// SQL `LIKE` matching: case-insensitive, `%` any run, `_` any character.
    static func like(_ pattern: String, _ text: String) -> Bool {
        let pattern = Array(pattern.lowercased())
        let text = Array(text.lowercased())
        func match(_ p: Int, _ t: Int) -> Bool {
            if p == pattern.count { return t == text.count }
            switch pattern[p] {
            case "%": return (t...text.count).contains { match(p + 1, $0) }
            case "_": return t < text.count && match(p + 1, t + 1)
            case let c: return t < text.count && text[t] == c && match(p + 1, t + 1)
            }
        }
        return match(0, 0)
    }
}
