import GRDB
import GRDBSQLite

/// SQLite's own trace of the session's connection, as the sqlite3 shell's
/// `.trace FILE` sets it: every statement the connection runs (the front
/// end's own queries too), its text written as a line ending in `;`.
///
/// ```swift
/// try database.setShellTrace(ShellTrace(events: [.statement]) { print($0, terminator: "") })
/// ```
public final class ShellTrace: Sendable {
    /// What SQLite reports (`sqlite3_trace_v2`'s mask).
    public struct Events: OptionSet, Hashable, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Each statement as it starts: `SQL;`.
        public static let statement = Events(rawValue: UInt32(SQLITE_TRACE_STMT))
        /// Each statement as it ends: `SQL; -- N ns`.
        public static let profile = Events(rawValue: UInt32(SQLITE_TRACE_PROFILE))
        /// Each row a statement returns: `SQL;` again.
        public static let row = Events(rawValue: UInt32(SQLITE_TRACE_ROW))
        /// The connection's close: `-- closing database connection`.
        public static let close = Events(rawValue: UInt32(SQLITE_TRACE_CLOSE))
    }

    public let events: Events
    /// The statements' text with their parameters' values in place
    /// (`sqlite3_expanded_sql`) rather than as written.
    public let expanded: Bool
    /// Receives each line, with its line feed; called on the connection's thread.
    let write: @Sendable (String) -> Void

    public init(events: Events, expanded: Bool = false, write: @escaping @Sendable (String) -> Void) {
        self.events = events.isEmpty ? .statement : events
        self.expanded = expanded
        self.write = write
    }

    /// The line of one event of SQLite's trace.
    fileprivate func line(mask: UInt32, statement: UnsafeMutableRawPointer?, detail: UnsafeMutableRawPointer?)
        -> String?
    {
        if mask == UInt32(SQLITE_TRACE_CLOSE) { return "-- closing database connection\n" }
        var text: String?
        let comment = detail.map { $0.assumingMemoryBound(to: CChar.self).pointee == CChar(UInt8(ascii: "-")) } ?? false
        if mask != UInt32(SQLITE_TRACE_ROW) && comment, let detail {
            // A trigger's `-- TRIGGER name` line.
            text = String(cString: detail.assumingMemoryBound(to: CChar.self))
        } else if let statement {
            let handle = OpaquePointer(statement)
            if expanded {
                if let sql = sqlite3_expanded_sql(handle) {
                    text = String(cString: sql)
                    sqlite3_free(sql)
                }
            } else if let sql = sqlite3_sql(handle) {
                text = String(cString: sql)
            }
            // The blanks before a statement: the sqlite3 shell skips them
            // before it prepares; sqlive prepares from the end of the one before.
            text = text.map { String($0.drop { $0 == " " || ("\t"..."\r").contains($0) }) }
        }
        guard var sql = text else { return nil }
        while sql.hasSuffix(";") { sql.removeLast() }
        switch mask {
        case UInt32(SQLITE_TRACE_PROFILE):
            let nanoseconds = detail?.assumingMemoryBound(to: Int64.self).pointee ?? 0
            return "\(sql); -- \(nanoseconds) ns\n"
        default:
            return "\(sql);\n"
        }
    }

    /// Puts the trace on a connection (on its thread).
    func install(on connection: OpaquePointer) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_trace_v2(connection, events.rawValue, shellTraceCallback, context)
    }
}

/// SQLite's trace callback: the context is the `ShellTrace`, kept alive by
/// the tracer while it is installed.
private func shellTraceCallback(
    mask: UInt32, context: UnsafeMutableRawPointer?, statement: UnsafeMutableRawPointer?,
    detail: UnsafeMutableRawPointer?
) -> Int32 {
    guard let context else { return 0 }
    let trace = Unmanaged<ShellTrace>.fromOpaque(context).takeUnretainedValue()
    if let line = trace.line(mask: mask, statement: statement, detail: detail) { trace.write(line) }
    return 0
}

extension LiveDatabase {
    /// Puts SQLite's own trace on the session's connection (`nil` takes it
    /// off), as the sqlite3 shell's `.trace` does. While it is on, it
    /// replaces the housekeeping trace of `traceSettings` on that
    /// connection (SQLite keeps one trace per connection). It stays on this
    /// connection: another database opened later is not traced.
    ///
    /// This blocks the calling thread until the connection is free.
    public func setShellTrace(_ trace: ShellTrace?) throws(SQLiveError) {
        let tracer = tracer
        writer.writeWithoutTransaction { db in tracer.setShellTrace(trace, on: db) }
    }
}
