import Foundation
import GRDBSQLite

/// The statistics the sqlite3 3.40.1 shell prints with `.stats`: the same
/// labels, in the same order and layout (a label padded to 36 columns, a
/// space, the value), from SQLite's own counters — `sqlite3_status64` for
/// the process's memory, `sqlite3_db_status` for the connection,
/// `sqlite3_stmt_status` for the statement that ran — and the process's
/// I/O counters from `/proc/self/io`.
///
/// sqlive turns SQLite's global memory accounting off at start-up
/// (`SQLiteProcess.configure`) unless it starts with `-stats`: then SQLite
/// reports the memory lines (`Memory Used`, `Number of Outstanding
/// Allocations`, `Largest Allocation`) as 0, and they are printed as SQLite
/// reports them.
enum ShellStatistics {
    /// What `.stats` sets: 0 off, 2 `stmt`, 3 `vmstep`, anything else `on`.
    static func name(of level: UInt8) -> String {
        switch level {
        case 0: "off"
        case 2: "stmt"
        case 3: "vmstep"
        default: "on"
        }
    }

    /// The block printed after a statement (`statement` set) or for
    /// `.stats` alone (`statement` `nil`), at `level`. Reading resets the
    /// connection's page-cache counters, as in sqlite3, so that each
    /// statement shows its own.
    static func text(level: UInt8, statement: OpaquePointer?, connection: OpaquePointer?) -> String {
        var text = ""
        func line(_ label: String, _ value: String) {
            text += label.padding(toLength: max(36, label.count), withPad: " ", startingAt: 0) + " " + value + "\n"
        }
        if let statement, level == 2 {
            columns(of: statement, line: line)
        }
        if level == 3 {
            if let statement {
                text += "VM-steps: \(sqlite3_stmt_status(statement, SQLITE_STMTSTATUS_VM_STEP, 0))\n"
            }
            return text
        }
        func status(_ operation: Int32) -> (current: Int64, highest: Int64) {
            var current: Int64 = -1
            var highest: Int64 = -1
            sqlite3_status64(operation, &current, &highest, 0)
            return (current, highest)
        }
        let memory = status(SQLITE_STATUS_MEMORY_USED)
        line("Memory Used:", "\(memory.current) (max \(memory.highest)) bytes")
        let allocations = status(SQLITE_STATUS_MALLOC_COUNT)
        line("Number of Outstanding Allocations:", "\(allocations.current) (max \(allocations.highest))")
        let overflow = status(SQLITE_STATUS_PAGECACHE_OVERFLOW)
        line("Number of Pcache Overflow Bytes:", "\(overflow.current) (max \(overflow.highest)) bytes")
        line("Largest Allocation:", "\(status(SQLITE_STATUS_MALLOC_SIZE).highest) bytes")
        line("Largest Pcache Allocation:", "\(status(SQLITE_STATUS_PAGECACHE_SIZE).highest) bytes")
        if let connection {
            func database(_ operation: Int32, reset: Bool = false) -> (current: Int32, highest: Int32) {
                var current: Int32 = -1
                var highest: Int32 = -1
                sqlite3_db_status(connection, operation, &current, &highest, reset ? 1 : 0)
                return (current, highest)
            }
            let lookaside = database(SQLITE_DBSTATUS_LOOKASIDE_USED)
            line("Lookaside Slots Used:", "\(lookaside.current) (max \(lookaside.highest))")
            line("Successful lookaside attempts:", "\(database(SQLITE_DBSTATUS_LOOKASIDE_HIT).highest)")
            line("Lookaside failures due to size:", "\(database(SQLITE_DBSTATUS_LOOKASIDE_MISS_SIZE).highest)")
            line("Lookaside failures due to OOM:", "\(database(SQLITE_DBSTATUS_LOOKASIDE_MISS_FULL).highest)")
            line("Pager Heap Usage:", "\(database(SQLITE_DBSTATUS_CACHE_USED).current) bytes")
            line("Page cache hits:", "\(database(SQLITE_DBSTATUS_CACHE_HIT, reset: true).current)")
            line("Page cache misses:", "\(database(SQLITE_DBSTATUS_CACHE_MISS, reset: true).current)")
            line("Page cache writes:", "\(database(SQLITE_DBSTATUS_CACHE_WRITE, reset: true).current)")
            line("Page cache spills:", "\(database(SQLITE_DBSTATUS_CACHE_SPILL, reset: true).current)")
            line("Schema Heap Usage:", "\(database(SQLITE_DBSTATUS_SCHEMA_USED).current) bytes")
            line("Statement Heap/Lookaside Usage:", "\(database(SQLITE_DBSTATUS_STMT_USED).current) bytes")
        }
        if let statement {
            func counter(_ operation: Int32) -> Int32 { sqlite3_stmt_status(statement, operation, 0) }
            line("Fullscan Steps:", "\(counter(SQLITE_STMTSTATUS_FULLSCAN_STEP))")
            line("Sort Operations:", "\(counter(SQLITE_STMTSTATUS_SORT))")
            line("Autoindex Inserts:", "\(counter(SQLITE_STMTSTATUS_AUTOINDEX))")
            let hits = counter(SQLITE_STMTSTATUS_FILTER_HIT)
            let misses = counter(SQLITE_STMTSTATUS_FILTER_MISS)
            if hits != 0 || misses != 0 { line("Bloom filter bypass taken:", "\(hits)/\(hits + misses)") }
            line("Virtual Machine Steps:", "\(counter(SQLITE_STMTSTATUS_VM_STEP))")
            line("Reprepare operations:", "\(counter(SQLITE_STMTSTATUS_REPREPARE))")
            line("Number of times run:", "\(counter(SQLITE_STMTSTATUS_RUN))")
            line("Memory used by prepared stmt:", "\(counter(SQLITE_STMTSTATUS_MEMUSED))")
        }
        text += inputOutput()
        return text
    }

    /// `stmt`'s lines: the statement's columns, their declared types and origins.
    private static func columns(of statement: OpaquePointer, line: (String, String) -> Void) {
        let count = sqlite3_column_count(statement)
        line("Number of output columns:", "\(count)")
        func text(_ pointer: UnsafePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "(null)" }
        for column in 0..<count {
            line("Column \(column) name:", text(sqlite3_column_name(statement, column)))
            line("Column \(column) declared type:", text(sqlite3_column_decltype(statement, column)))
            line("Column \(column) database name:", text(sqlite3_column_database_name(statement, column)))
            line("Column \(column) table name:", text(sqlite3_column_table_name(statement, column)))
            line("Column \(column) origin name:", text(sqlite3_column_origin_name(statement, column)))
        }
    }

    /// The process's I/O counters (`/proc/self/io`), under sqlite3's labels.
    static func inputOutput() -> String {
        guard let data = FileManager.default.contents(atPath: "/proc/self/io") else { return "" }
        let labels: [(String, String)] = [
            ("rchar: ", "Bytes received by read():"), ("wchar: ", "Bytes sent to write():"),
            ("syscr: ", "Read() system calls:"), ("syscw: ", "Write() system calls:"),
            ("read_bytes: ", "Bytes read from storage:"), ("write_bytes: ", "Bytes written to storage:"),
            ("cancelled_write_bytes: ", "Cancelled write bytes:"),
        ]
        var text = ""
        for entry in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            guard let (key, label) = labels.first(where: { entry.hasPrefix($0.0) }) else { continue }
            text += label.padding(toLength: 36, withPad: " ", startingAt: 0) + " " + entry.dropFirst(key.count) + "\n"
        }
        return text
    }
}
