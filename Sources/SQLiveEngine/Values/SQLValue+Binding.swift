import GRDBSQLite

extension SQLValue {
    /// SQLite copies the bytes before the call returns.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    /// Binds the value to a statement's parameter (1-based `index`). Empty
    /// text and an empty blob stay text and a blob: SQLite binds NULL for a
    /// null pointer, whatever the length.
    func bind(to statement: OpaquePointer, at index: Int32) {
        switch self {
        case .null:
            sqlite3_bind_null(statement, index)
        case .integer(let integer):
            sqlite3_bind_int64(statement, index, integer)
        case .real(let real):
            sqlite3_bind_double(statement, index, real)
        case .text(var text):
            text.withUTF8 { Self.bindText(UnsafeRawBufferPointer($0), to: statement, at: index) }
        case .blob(let data):
            data.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress, !bytes.isEmpty else {
                    sqlite3_bind_zeroblob(statement, index, 0)
                    return
                }
                sqlite3_bind_blob64(statement, index, base, UInt64(bytes.count), Self.transient)
            }
        }
    }

    /// Binds UTF-8 text (bytes that are not UTF-8 are kept as they are) to
    /// a statement's parameter (1-based `index`).
    static func bindText(_ bytes: UnsafeRawBufferPointer, to statement: OpaquePointer, at index: Int32) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            sqlite3_bind_text(statement, index, "", 0, transient)
            return
        }
        sqlite3_bind_text(statement, index, base.assumingMemoryBound(to: CChar.self), Int32(bytes.count), transient)
    }
}
