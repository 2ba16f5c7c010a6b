import Foundation
import GRDBSQLite

extension TableLayout {
    /// The layouts of the ordinary tables of `main` (not views, not virtual
    /// tables), by lowercased name, and how text is stored; read inside the
    /// caller's read transaction.
    static func loadAll(_ connection: OpaquePointer) throws(RawSQLiteError) -> (
        layouts: [String: TableLayout], encoding: SQLiteRecord.TextEncoding
    ) {
        let encoding: SQLiteRecord.TextEncoding =
            switch try values(connection, "PRAGMA main.encoding").first?.first {
            case .text("UTF-16le"): .utf16le
            case .text("UTF-16be"): .utf16be
            default: .utf8
            }
        // Two statements for every table (the table-valued pragmas joined), not two per table.
        var keyIndexed = Set<String>()
        for row in try values(
            connection,
            "SELECT t.name FROM pragma_table_list AS t, pragma_index_list(t.name, 'main') AS i "
                + "WHERE t.schema = 'main' AND t.type IN ('table', 'shadow') AND i.origin = 'pk'")
        {
            if case .text(let name) = row[0] { keyIndexed.insert(name) }
        }
        var order: [String] = []
        var found: [String: (withoutRowid: Bool, columns: [Column])] = [:]
        for row in try values(
            connection,
            "SELECT t.name, t.wr, x.name, x.type, x.pk, x.hidden, x.dflt_value "
                + "FROM pragma_table_list AS t, pragma_table_xinfo(t.name, 'main') AS x "
                + "WHERE t.schema = 'main' AND t.type IN ('table', 'shadow') ORDER BY t.name, x.cid")
        {
            guard case .text(let table) = row[0], case .text(let column) = row[2] else { continue }
            var defaultValue = SQLValue.null
            if case .text(let expression) = row[6] {
                // ADD COLUMN allows constant defaults only.
                do {
                    defaultValue = try values(connection, "SELECT \(expression)").first?.first ?? .null
                } catch {
                    Log.monitor.warning("the default of \(table).\(column) (\(expression)): \(error.message)")
                }
            }
            if found[table] == nil {
                order.append(table)
                found[table] = (row[1].integer ?? 0 != 0, [])
            }
            found[table]!.columns.append(
                Column(
                    name: column, type: row[3].text ?? "", primaryKey: Int(row[4].integer ?? 0),
                    hidden: Int(row[5].integer ?? 0), defaultValue: defaultValue))
        }
        var layouts: [String: TableLayout] = [:]
        for table in order {
            let (withoutRowid, columns) = found[table]!
            layouts[table.lowercased()] = TableLayout(
                name: table, columns: columns, withoutRowid: withoutRowid,
                hasPrimaryKeyIndex: keyIndexed.contains(table))
        }
        return (layouts, encoding)
    }

    /// Every row of a statement, as values.
    private static func values(_ connection: OpaquePointer, _ sql: String) throws(RawSQLiteError) -> [[SQLValue]] {
        let statement = try RawStatement(on: connection, sql)
        var rows: [[SQLValue]] = []
        while true {
            switch statement.step() {
            case SQLITE_ROW:
                rows.append(SQLValue.row(of: statement.handle, columnCount: statement.columnCount))
            case SQLITE_DONE:
                return rows
            case let code:
                throw RawSQLiteError(code: code, on: connection)
            }
        }
    }
}

extension SQLValue {
    fileprivate var text: String? {
        if case .text(let text) = self { return text }
        return nil
    }

    fileprivate var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }
}
