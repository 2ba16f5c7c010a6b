import SQLiveEngine

/// What Tab completion knows about the database: tables, views and their
/// columns, and the functions it offers.
public struct CompletionSchema: Hashable, Sendable {
    /// Tables and views, as the language server's completion sees them.
    public var catalog: SQLCatalog
    public var functions: [String]

    public init(catalog: SQLCatalog = SQLCatalog(relations: []), functions: [String] = SQLFunctions.common) {
        self.catalog = catalog
        self.functions = functions
    }

    public init(_ schema: SchemaInfo) {
        self.init(catalog: SQLCatalog(schema))
    }

    /// Tables by name and column names (tests, and a schema known only so far).
    public init(tables: [(name: String, columns: [String])]) {
        self.init(
            catalog: SQLCatalog(
                relations: tables.map { table in
                    SQLCatalog.Relation(name: table.name, kind: .table, columns: table.columns.map { .init(name: $0) })
                }))
    }

    var relations: [SQLCatalog.Relation] { catalog.relations }
}

/// The functions Tab offers when the database is not asked: SQLite's
/// everyday scalar, aggregate, date and JSON functions.
public enum SQLFunctions {
    public static let common: [String] = [
        "abs", "avg", "char", "coalesce", "count", "date", "datetime", "glob", "group_concat", "hex", "ifnull",
        "iif", "instr", "json", "json_array", "json_extract", "json_group_array", "json_group_object",
        "json_object", "julianday", "length", "like", "lower", "ltrim", "max", "min", "nullif", "printf",
        "quote", "random", "randomblob", "replace", "round", "rtrim", "strftime", "substr", "sum", "time",
        "total", "trim", "typeof", "unicode", "upper", "zeroblob",
    ]
}
