/// How a table's rows are stored, to read them back from b-tree cells:
/// which record field holds each column, the rowid alias, the primary key
/// of a `WITHOUT ROWID` table, and the value a record too short for a
/// column (made before `ALTER TABLE … ADD COLUMN`) stands for.
///
/// Loaded with the page map (`PageMapBuilder`), from the same snapshot, so
/// that it matches the schema the map was built for.
struct TableLayout: Equatable, Sendable {
    /// The table's name, as declared.
    var name: String
    /// The columns the feed shows, in table order: every column but the
    /// virtual generated ones, which no record stores.
    var columns: [String]
    var withoutRowid: Bool
    /// For each column, the record field that holds it.
    var field: [Int]
    /// The column that is an alias of the rowid (`INTEGER PRIMARY KEY`):
    /// its record field is NULL, its value the rowid.
    var rowidAlias: Int?
    /// A `WITHOUT ROWID` table's primary-key columns, in key order.
    var keyColumns: [Int]
    /// Each column's default, for records made before it was added.
    var defaults: [SQLValue]
    /// The columns of REAL affinity: SQLite stores their whole values as
    /// integers, and reads them back as reals.
    var realColumns: [Int]

    /// A stored row's key and column values; `nil` when the record is not
    /// one this layout can read.
    func row(_ cell: BTreeCells.Cell, encoding: SQLiteRecord.TextEncoding) -> (key: RowKey, values: [SQLValue])? {
        guard let record = cell.payload.withUnsafeBytes({ SQLiteRecord.values($0, encoding: encoding) }) else {
            return nil
        }
        var values = [SQLValue]()
        values.reserveCapacity(columns.count)
        for column in columns.indices {
            let index = field[column]
            values.append(index < record.count ? record[index] : defaults[column])
        }
        for column in realColumns {
            if case .integer(let whole) = values[column] { values[column] = .real(Double(whole)) }
        }
        if withoutRowid {
            guard cell.rowid == nil else { return nil }
            return (.primaryKey(keyColumns.map { values[$0] }), values)
        }
        guard let rowid = cell.rowid else { return nil }
        if let alias = rowidAlias { values[alias] = .integer(rowid) }
        return (.rowid(rowid), values)
    }

    /// The names of a key's parts: `rowid`, or the primary-key columns.
    var keyNames: [String] {
        withoutRowid ? keyColumns.map { columns[$0] } : ["rowid"]
    }

    /// One column as `PRAGMA table_xinfo` tells it.
    struct Column {
        var name: String
        var type: String
        /// Its place in the primary key (1-based), 0 when not in it.
        var primaryKey: Int
        /// 0 normal, 1 hidden (a virtual table's), 2 virtual generated, 3 stored generated.
        var hidden: Int
        var defaultValue: SQLValue
    }

    /// The layout of a table with these columns.
    ///
    /// - parameter hasPrimaryKeyIndex: whether its primary key has an
    ///   index of its own (`PRAGMA index_list`'s origin `pk`): an
    ///   `INTEGER PRIMARY KEY` without one is the rowid.
    init(name: String, columns all: [Column], withoutRowid: Bool, hasPrimaryKeyIndex: Bool) {
        self.name = name
        self.withoutRowid = withoutRowid
        let shown = all.filter { $0.hidden != 2 }
        columns = shown.map(\.name)
        defaults = shown.map(\.defaultValue)
        realColumns = shown.indices.filter { Self.hasRealAffinity(shown[$0].type) }
        let keyed = shown.indices.filter { shown[$0].primaryKey > 0 }.sorted {
            shown[$0].primaryKey < shown[$1].primaryKey
        }
        if withoutRowid {
            keyColumns = keyed
            // The key's fields first, then the other columns in order.
            var field = [Int](repeating: 0, count: shown.count)
            for (position, column) in keyed.enumerated() { field[column] = position }
            var next = keyed.count
            for column in shown.indices where !keyed.contains(column) {
                field[column] = next
                next += 1
            }
            self.field = field
            rowidAlias = nil
        } else {
            keyColumns = []
            field = Array(shown.indices)
            if keyed.count == 1, shown[keyed[0]].type.uppercased() == "INTEGER", !hasPrimaryKeyIndex {
                rowidAlias = keyed[0]
            } else {
                rowidAlias = nil
            }
        }
    }
}

extension TableLayout {
    /// Whether a declared type gives REAL affinity (fileformat's §3.1
    /// rules, in their order: INT, then CHAR/CLOB/TEXT, then BLOB or none,
    /// then REAL/FLOA/DOUB).
    static func hasRealAffinity(_ type: String) -> Bool {
        let type = type.uppercased()
        if type.contains("INT") || type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") {
            return false
        }
        if type.isEmpty || type.contains("BLOB") { return false }
        return type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB")
    }
}

/// Which row of its table a change is about.
public enum RowKey: Hashable, Sendable {
    /// A rowid table's row.
    case rowid(Int64)
    /// A `WITHOUT ROWID` table's row: its primary-key values, in key order.
    case primaryKey([SQLValue])
}
