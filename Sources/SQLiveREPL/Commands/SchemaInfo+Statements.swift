import SQLiveEngine

extension SchemaInfo {
    /// The `CREATE` statements of every object whose name matches a
    /// `LIKE` pattern (all of them without one), as `.schema` prints them.
    func createStatements(matching pattern: String? = nil) -> [String] {
        let objects: [(name: String, table: String, sql: String?)] =
            relations.map { ($0.name, $0.name, $0.sql) } + indexes.map { ($0.name, $0.table, $0.sql) }
            + triggers.map { ($0.name, $0.table, $0.sql) }
        return objects.compactMap { object in
            guard let sql = object.sql else { return nil }
            if let pattern, !NamePattern.like(pattern, object.name) && !NamePattern.like(pattern, object.table) {
                return nil
            }
            return sql + ";"
        }
    }
}
