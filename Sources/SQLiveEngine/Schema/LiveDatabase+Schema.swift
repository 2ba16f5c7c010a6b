import GRDB

extension LiveDatabase {
    /// Reads the schema of the main database: tables, views and their
    /// columns, indexes and triggers. SQLite's internal tables are left out.
    public func schema() async throws(SQLiveError) -> SchemaInfo {
        do {
            return try await writer.read { db in try Self.readSchema(db) }
        } catch {
            throw SQLiveError.wrap(error)
        }
    }

    static func readSchema(_ db: Database) throws -> SchemaInfo {
        let objects = try Row.fetchAll(
            db,
            sql: """
                SELECT type, name, tbl_name, sql FROM sqlite_master
                WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
                ORDER BY name
                """)
        var relations: [SchemaInfo.Relation] = []
        var indexes: [SchemaInfo.Object] = []
        var triggers: [SchemaInfo.Object] = []
        for object in objects {
            let type: String = object["type"]
            let name: String = object["name"]
            let table: String = object["tbl_name"]
            let sql: String? = object["sql"]
            switch type {
            case "table", "view":
                // table_info works for views too, and gives declared types
                // exactly as written.
                let columns = try Row.fetchAll(db, sql: "SELECT * FROM pragma_table_info(?)", arguments: [name])
                    .map { row in
                        SchemaInfo.Column(
                            name: row["name"], type: row["type"] ?? "", notNull: row["notnull"],
                            primaryKeyIndex: row["pk"])
                    }
                relations.append(
                    SchemaInfo.Relation(name: name, kind: type == "view" ? .view : .table, columns: columns, sql: sql))
            case "index":
                indexes.append(SchemaInfo.Object(name: name, table: table, sql: sql))
            case "trigger":
                triggers.append(SchemaInfo.Object(name: name, table: table, sql: sql))
            default:
                break
            }
        }
        return SchemaInfo(relations: relations, indexes: indexes, triggers: triggers)
    }
}

extension LiveDatabase {
    /// The committed schema, read as live queries read it: on the
    /// committed reader, which holds no lock in rollback-journal modes (the
    /// session's connection for an in-memory database). For watchers that
    /// must never delay another process's commit (an MCP agent's `schema`);
    /// the session's uncommitted changes are not in it.
    public func committedSchema() async throws(SQLiveError) -> SchemaInfo {
        do {
            return try await live.reader.read(.committed) { db in try Self.readSchema(db) }
        } catch {
            throw SQLiveError.wrap(error)
        }
    }
}
