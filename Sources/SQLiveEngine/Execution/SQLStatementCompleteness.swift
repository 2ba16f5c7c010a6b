import GRDBSQLite

/// Tells whether SQL text ends in a complete statement.
///
/// The REPL keeps reading lines until this says yes. It wraps
/// `sqlite3_complete`, which knows about string literals, comments and the
/// `BEGIN ... END` of `CREATE TRIGGER`.
public enum SQLStatementCompleteness {
    /// Whether the text ends in a complete statement (a `;` outside of
    /// literals, comments and trigger bodies).
    public static func isComplete(_ sql: String) -> Bool {
        isComplete(Array(sql.utf8))
    }

    /// Whether the bytes end in a complete statement. A NUL byte counts as
    /// any other character, not as the end of the text; bytes that are not
    /// UTF-8 count as the letters of a name, as SQLite's tokenizer reads them.
    public static func isComplete(_ bytes: [UInt8]) -> Bool {
        // A NUL-terminated copy, on the stack when it is small.
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: bytes.count + 1) { text in
            for (index, byte) in bytes.enumerated() { text[index] = CChar(bitPattern: byte == 0 ? 0x20 : byte) }
            text[bytes.count] = 0
            return sqlite3_complete(text.baseAddress!) != 0
        }
    }
}
