import Foundation
import SQLiveEngine

/// The pieces of SQL text `.dump` writes, as the sqlite3 shell writes them.
enum DumpText {
    /// A `CREATE` statement and its `;`: a table whose name is quoted is
    /// created `IF NOT EXISTS` (shadow tables of a virtual table may exist
    /// already), and a comment at the end is closed so that it cannot hide
    /// the `;`.
    ///
    /// ```swift
    /// DumpText.schemaLine("CREATE TABLE \"t\"(a)")   // CREATE TABLE IF NOT EXISTS "t"(a);\n
    /// ```
    static func schemaLine(_ sql: String) -> String {
        var sql = sql
        if sql.contains("/*") || sql.contains("--") {
            for ending in ["", "*/", "\n"] where SQLStatementCompleteness.isComplete(sql + ending + ";") {
                sql += ending
                break
            }
        }
        let prefix = "CREATE TABLE "
        if sql.hasPrefix(prefix), let first = sql.utf8.dropFirst(prefix.utf8.count).first,
            first == UInt8(ascii: "\"") || first == UInt8(ascii: "'")
        {
            return "CREATE TABLE IF NOT EXISTS " + sql.dropFirst(prefix.count) + ";\n"
        }
        return sql + ";\n"
    }

    /// An index's, trigger's or view's statement: its `;` goes on a line of
    /// its own when the text holds `--`, so that a comment cannot hide it.
    static func statementLine(_ sql: String) -> String {
        sql + (sql.contains("--") ? "\n;\n" : ";\n")
    }

    /// The row `.dump` writes for a virtual table: its schema entry, written directly.
    static func virtualTableLine(name: String, sql: String) -> String {
        "INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql)VALUES('table',"
            + "\(quotedLiteral(name)),\(quotedLiteral(name)),0,\(quotedLiteral(sql)));\n"
    }

    /// Text in single quotes, quotes doubled (SQLite's `%Q`).
    static func quotedLiteral(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// Appends text as an SQL string literal, as the sqlite3 shell's `.dump`
    /// writes it: in single quotes, quotes doubled, and line breaks written
    /// as `\n` (or another marker the text does not hold) put back by
    /// `replace(…, char(10))`, so that no line ending can be changed on the way.
    ///
    /// ```text
    /// 'it''s'
    /// replace('two\nlines','\n',char(10))
    /// ```
    static func appendTextLiteral(_ text: UnsafeBufferPointer<UInt8>, to output: inout OutputBuffer) {
        let quote = UInt8(ascii: "'")
        let newline = UInt8(ascii: "\n")
        let carriageReturn = UInt8(ascii: "\r")
        var newlines = false
        var carriageReturns = false
        for byte in text {
            if byte == newline { newlines = true } else if byte == carriageReturn { carriageReturns = true }
        }
        let newlineMarker = newlines ? unusedMarker(in: text, "\\n", "\\012") : []
        let carriageReturnMarker = carriageReturns ? unusedMarker(in: text, "\\r", "\\015") : []
        if newlines { output.append("replace(") }
        if carriageReturns { output.append("replace(") }
        output.append(byte: quote)
        var start = 0
        for (index, byte) in text.enumerated() where byte == quote || byte == newline || byte == carriageReturn {
            output.append(UnsafeBufferPointer(rebasing: text[start..<index]))
            switch byte {
            case quote: output.append("''")
            case newline: newlineMarker.withUnsafeBufferPointer { output.append($0) }
            default: carriageReturnMarker.withUnsafeBufferPointer { output.append($0) }
            }
            start = index + 1
        }
        output.append(UnsafeBufferPointer(rebasing: text[start...]))
        output.append(byte: quote)
        if carriageReturns {
            output.append(",'")
            carriageReturnMarker.withUnsafeBufferPointer { output.append($0) }
            output.append("',char(13))")
        }
        if newlines {
            output.append(",'")
            newlineMarker.withUnsafeBufferPointer { output.append($0) }
            output.append("',char(10))")
        }
    }

    /// Appends text in single quotes, quotes doubled, line breaks as they
    /// are: `.dump --newlines`.
    static func appendQuotedText(_ text: UnsafeBufferPointer<UInt8>, to output: inout OutputBuffer) {
        let quote = UInt8(ascii: "'")
        output.append(byte: quote)
        var start = 0
        for (index, byte) in text.enumerated() where byte == quote {
            output.append(UnsafeBufferPointer(rebasing: text[start...index]))
            output.append(byte: quote)
            start = index + 1
        }
        output.append(UnsafeBufferPointer(rebasing: text[start...]))
        output.append(byte: quote)
    }

    /// The first of two markers the text does not hold, else `(A0)`, `(A1)`, …
    private static func unusedMarker(in text: UnsafeBufferPointer<UInt8>, _ first: String, _ second: String) -> [UInt8]
    {
        func holds(_ marker: [UInt8]) -> Bool {
            guard marker.count <= text.count else { return false }
            return (0...(text.count - marker.count)).contains { start in
                marker.indices.allSatisfy { text[start + $0] == marker[$0] }
            }
        }
        for marker in [first, second] where !holds(Array(marker.utf8)) { return Array(marker.utf8) }
        var number = 0
        while true {
            let marker = Array("(\(first)\(number))".utf8)
            if !holds(marker) { return marker }
            number += 1
        }
    }
}
