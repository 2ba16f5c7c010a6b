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
        var text = bytes.map { $0 == 0 ? 0x20 : $0 }
        text.append(0)
        return text.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { sqlite3_complete($0.baseAddress!) != 0 }
        }
    }
}
