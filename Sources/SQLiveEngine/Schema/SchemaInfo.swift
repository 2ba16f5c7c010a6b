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
}
