extension JSONWriter {
    /// Writes an array of strings (column names, table names).
    public mutating func write(strings: [String]) {
        beginArray()
        for string in strings {
            write(string: string)
        }
        endArray()
    }

    /// Writes rows of SQLite values, as results and notifications carry them.
    public mutating func write(rows: RPCRows) {
        beginArray()
        for row in rows {
            write(row: row)
        }
        endArray()
    }

    /// Writes one row of SQLite values.
    public mutating func write(row: [RPCValue]) {
        beginArray()
        for value in row {
            value.write(to: &self)
        }
        endArray()
    }
}
