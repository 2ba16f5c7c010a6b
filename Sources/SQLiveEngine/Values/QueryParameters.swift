import GRDB

/// The values bound to a statement's parameters.
///
/// Positional values fill `?` and `?NNN` parameters in order; named values
/// fill `:name`, `@name` and `$name` parameters. Names are given without
/// their prefix (`"id"` binds `:id`, `@id` and `$id`).
///
/// ```swift
/// let byPosition = QueryParameters.positional([.integer(1)])
/// let byName = QueryParameters.named(["gameID": .integer(1)])
/// ```
public enum QueryParameters: Hashable, Sendable {
    case positional([SQLValue])
    case named([String: SQLValue])
    /// As the sqlite3 shell binds: each parameter the value its name
    /// (`:a`, `$a`, `@a`, `?1`, with its prefix) has in
    /// `temp.sqlite_parameters` (`.parameter set`), NULL when it has none.
    case shell

    /// No parameters at all.
    public static let none = QueryParameters.positional([])

    /// Whether no value is given.
    public var isEmpty: Bool {
        switch self {
        case .positional(let values): values.isEmpty
        case .named(let values): values.isEmpty
        case .shell: true
        }
    }

    var statementArguments: StatementArguments {
        switch self {
        case .positional(let values):
            StatementArguments(values.map(\.databaseValue))
        case .named(let values):
            StatementArguments(values.mapValues(\.databaseValue))
        case .shell:
            StatementArguments()
        }
    }
}
