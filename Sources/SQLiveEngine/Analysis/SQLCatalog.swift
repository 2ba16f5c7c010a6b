import Foundation

/// What an editor needs to know of a schema: tables and views, their
/// columns, keys and indexes, and what SQLite's statistics say of their size.
public struct SQLCatalog: Hashable, Sendable {
    public struct Relation: Hashable, Sendable {
        public var name: String
        public var kind: SchemaInfo.Relation.Kind
        public var columns: [SchemaInfo.Column]
        public var indexes: [Index]
        /// The row count `sqlite_stat1` holds, when `ANALYZE` ran.
        public var estimatedRows: Int?

        public init(
            name: String, kind: SchemaInfo.Relation.Kind, columns: [SchemaInfo.Column], indexes: [Index] = [],
            estimatedRows: Int? = nil
        ) {
            self.name = name
            self.kind = kind
            self.columns = columns
            self.indexes = indexes
            self.estimatedRows = estimatedRows
        }

        /// The column of that name, ignoring case as SQLite does.
        public func column(named name: String) -> SchemaInfo.Column? {
            columns.first(named: name)
        }
    }

    public struct Index: Hashable, Sendable {
        public var name: String
        public var columns: [String]
        public var isUnique: Bool
        /// `"c"` for `CREATE INDEX`, `"u"` for a UNIQUE constraint, `"pk"` for
        /// a PRIMARY KEY.
        public var origin: String
    }

    /// Tables and views, sorted by name.
    public var relations: [Relation]

    public init(relations: [Relation]) {
        self.relations = relations
    }

    /// The tables and views of a schema, without indexes or statistics.
    public init(_ schema: SchemaInfo) {
        relations = schema.relations.map { Relation(name: $0.name, kind: $0.kind, columns: $0.columns) }
    }

    /// The table or view of that name, ignoring case.
    public func relation(named name: String) -> Relation? {
        relations.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
    }
}

extension Array where Element == SchemaInfo.Column {
    /// The column of that name, ignoring case as SQLite does.
    public func first(named name: String) -> SchemaInfo.Column? {
        first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
    }
}
