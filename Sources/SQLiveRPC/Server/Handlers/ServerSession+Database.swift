import SQLiveEngine
import SQLiveProtocol

extension ServerSession {
    /// `database/schema`.
    func schema(_ params: EmptyParams) async throws(ResponseError) -> DatabaseSchemaRequest.Result {
        let database = try openDatabase()
        let schema: SchemaInfo
        do {
            schema = try await database.schema()
        } catch {
            throw ResponseError(error)
        }
        return DatabaseSchemaRequest.Result(
            tables: schema.relations.map { relation in
                DatabaseSchemaRequest.Table(
                    name: relation.name, type: relation.kind.rawValue,
                    columns: relation.columns.map { column in
                        DatabaseSchemaRequest.Column(
                            name: column.name, type: column.type, notNull: column.notNull,
                            primaryKey: column.isPrimaryKey, primaryKeyIndex: column.primaryKeyIndex)
                    },
                    sql: relation.sql)
            },
            indexes: schema.indexes.map { .init(name: $0.name, table: $0.table, sql: $0.sql) },
            triggers: schema.triggers.map { .init(name: $0.name, table: $0.table, sql: $0.sql) })
    }
}
