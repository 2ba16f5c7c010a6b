/// Describes the schema of the open database: tables and views with their
/// columns, then indexes and triggers.
///
/// SQLite's internal tables (`sqlite_%`) are left out.
///
/// ```json
/// --> {"jsonrpc": "2.0", "id": 3, "method": "database/schema"}
/// <-- {"jsonrpc": "2.0", "id": 3, "result": {"tables": [{"name": "games", "type": "table",
///      "columns": [{"name": "id", "type": "INTEGER", "notNull": false, "primaryKey": true, ...}]}], ...}}
/// ```
public enum DatabaseSchemaRequest: RequestType {
    public static let method = "database/schema"

    public typealias Params = EmptyParams

    public struct Result: Codable, Sendable {
        /// Tables and views, sorted by name.
        public var tables: [Table]
        public var indexes: [SchemaObject]
        public var triggers: [SchemaObject]

        public init(tables: [Table], indexes: [SchemaObject], triggers: [SchemaObject]) {
            self.tables = tables
            self.indexes = indexes
            self.triggers = triggers
        }
    }

    public struct Table: Codable, Sendable {
        public var name: String
        /// `"table"` or `"view"`.
        public var type: String
        public var columns: [Column]
        /// The `CREATE` statement.
        public var sql: String?

        public init(name: String, type: String, columns: [Column], sql: String? = nil) {
            self.name = name
            self.type = type
            self.columns = columns
            self.sql = sql
        }
    }

    public struct Column: Codable, Sendable {
        public var name: String
        /// The declared type, as written in `CREATE TABLE` (may be empty).
        public var type: String
        public var notNull: Bool
        /// Whether the column is part of the primary key.
        public var primaryKey: Bool
        /// Its 1-based position in the primary key, or 0.
        public var primaryKeyIndex: Int

        public init(name: String, type: String, notNull: Bool, primaryKey: Bool, primaryKeyIndex: Int) {
            self.name = name
            self.type = type
            self.notNull = notNull
            self.primaryKey = primaryKey
            self.primaryKeyIndex = primaryKeyIndex
        }
    }

    /// An index or a trigger.
    public struct SchemaObject: Codable, Sendable {
        public var name: String
        public var table: String
        public var sql: String?

        public init(name: String, table: String, sql: String? = nil) {
            self.name = name
            self.table = table
            self.sql = sql
        }
    }
}
