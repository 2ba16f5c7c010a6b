import SQLiveEngine

/// What Tab completion knows about the database: tables, views and their columns.
public struct CompletionSchema: Hashable, Sendable {
    public struct Relation: Hashable, Sendable {
        public var name: String
        public var columns: [String]

        public init(name: String, columns: [String]) {
            self.name = name
            self.columns = columns
        }
    }

    public var relations: [Relation]

    public init(relations: [Relation] = []) {
        self.relations = relations
    }

    public init(_ schema: SchemaInfo) {
        relations = schema.relations.map { Relation(name: $0.name, columns: $0.columns.map(\.name)) }
    }

    func relation(named name: String) -> Relation? {
        relations.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
    }
}
