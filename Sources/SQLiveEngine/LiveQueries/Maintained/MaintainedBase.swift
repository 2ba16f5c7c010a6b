import Dispatch
import Foundation
import GRDBSQLite
import SQLiveLocks

/// A kept query's state read whole from the database, at a known position
/// (`FilePosition`): the commits after it are applied from the change feed,
/// those up to it are in it.
struct MaintainedBase: Sendable {
    var position: FilePosition
    /// The table's `CREATE TABLE`, for the evaluator's copy.
    var ddl: String
    /// The live query's own result columns.
    var resultColumns: [String]
    /// groups: every group (`MaintainedState.baseSQL`).
    var rows: [[SQLValue]]
    /// rows: the first rows in the query's order, as the state keeps them
    /// (`MaintainedState.entryColumns`), read straight into its store.
    var entries: RowStore?
    /// rows: how many rows the query has, before LIMIT.
    var matching: Int
}

/// Reads kept queries' bases on a thread of its own, through a read-only
/// connection of the lock-free observer VFS (no lock a writer could meet,
/// in any journal mode), one at a time.
///
/// The position of the read's snapshot is proven as `PageMapBuilder`
/// proves its map's: in WAL mode the wal-index header read before the
/// transaction began and after its first read must agree; in a
/// rollback-journal file the header the transaction's state has gives the
/// file change counter.
///
/// Ownership: `read` runs on its serial queue; `stop` interrupts a read
/// under way, and reads asked after it fail at once.
final class MaintainedBaseReader: Sendable {
    let path: String
    private let queue = DispatchQueue(label: "sqlive.maintained-base")
    // Mutable State: guarded by the mutex; the running read's connection
    // (to interrupt it), and whether the reader stopped.
    private let state = Locked<(connection: OpaquePointer?, stopped: Bool)>((nil, false))
    private var isStopped: Bool { state.withLock { $0.stopped } }
    /// A connection of its own that tells where the file stands
    /// (`currentPosition`), opened at the first question; used under the lock.
    private let probe = Locked<RawConnection?>(nil)

    enum Failure: Error, Sendable {
        /// The query cannot be kept (said once, not tried again until redefined).
        case unsupported(String)
        /// Not now (the file kept changing, an I/O error): tried again at a later change.
        case failed(String)
    }

    init(path: String) {
        self.path = path
    }

    func stop() {
        state.withLock { state in
            state.stopped = true
            if let connection = state.connection { sqlite3_interrupt(connection) }
        }
        probe.withLock { $0 = nil }
    }

    /// Where the file stands now (a read transaction of a lock-free
    /// observer connection: no lock a writer could meet); `nil` when it
    /// cannot be read.
    func currentPosition() -> FilePosition? {
        guard !state.withLock({ $0.stopped }) else { return nil }
        return probe.withLock { probe -> FilePosition? in
            if probe == nil {
                probe = try? RawConnection(
                    path: ObserverVFS.uri(path: path, vfs: ObserverVFS.observer),
                    flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI)
            }
            guard let raw = probe, raw.execute("BEGIN") else { return nil }
            defer { raw.execute("COMMIT") }
            guard raw.execute("SELECT count(*) FROM sqlite_schema") else { return nil }
            return FilePosition.latest(raw.handle)
        }
    }

    func read(_ plan: MaintainedPlan, sql: String, rowCap: Int, byteCap: Int?) async -> Result<
        MaintainedBase, Failure
    > {
        await withCheckedContinuation { continuation in
            queue.async { [self] in
                let read = readNow(plan, sql: sql, rowCap: rowCap, byteCap: byteCap)
                if case .success(let base) = read, let byteCap,
                    (base.entries.map { $0.rows(prefix: $0.count) } ?? ResultRows(base.rows)).printedByteCount > byteCap
                {
                    continuation.resume(returning: .failure(.unsupported("its rows are larger than a message may be")))
                    return
                }
                continuation.resume(returning: read)
            }
        }
    }

    /// On the calling thread.
    func readNow(_ plan: MaintainedPlan, sql: String, rowCap: Int, byteCap: Int? = nil) -> Result<
        MaintainedBase, Failure
    > {
        let raw: RawConnection
        do {
            raw = try RawConnection(
                path: ObserverVFS.uri(path: path, vfs: ObserverVFS.observer),
                flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI)
        } catch {
            return .failure(.failed("cannot open \(path): \(error.message)"))
        }
        let registered = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.connection = raw.handle
            return true
        }
        guard registered else { return .failure(.failed("stopped")) }
        defer {
            // Unregistered (under the lock) before the connection closes,
            // so `stop` never interrupts a closed one.
            state.withLock { $0.connection = nil }
            withExtendedLifetime(raw) {}
        }
        sqlite3_busy_timeout(raw.handle, 0)
        // A value larger than a message may be is not even loaded.
        if let byteCap { sqlite3_limit(raw.handle, SQLITE_LIMIT_LENGTH, Int32(clamping: byteCap)) }
        do throws(Failure) {
            let wal = try Self.text(raw, "PRAGMA journal_mode")?.lowercased() == "wal"
            let storage = WALStorage(connection: raw.handle)
            var lastFailure = "the database kept changing while it was read"
            for attempt in 1...ObserverVFS.maximumAttempts {
                // A writer that overtook the read (a torn read, a journal
                // taken for hot as it commits): again, in a new transaction.
                if attempt > 1 { usleep(UInt32(min(attempt, 10)) * 1000) }
                if isStopped { throw .failed("stopped") }
                let torn = ObserverVFS.statistics(raw.handle).torn
                let before = wal ? storage.indexHeader() : nil
                guard raw.execute("BEGIN") else { throw .failed(raw.lastError) }
                defer { raw.execute("COMMIT") }
                let base: MaintainedBase
                do throws(Failure) {
                    _ = try Self.text(raw, "SELECT count(*) FROM sqlite_schema")
                    let position: FilePosition
                    if wal {
                        guard let before, let after = storage.indexHeader(), before == after else { continue }
                        position = FilePosition(wal: true, value: after.change)
                    } else {
                        guard let header = DatabaseHeader.read(100, of: raw.handle), header.count == 100 else {
                            continue
                        }
                        position = FilePosition(
                            wal: false, value: header.withUnsafeBytes { $0.bigEndianUInt32(at: 24) })
                    }
                    base = try readBase(raw, plan, sql: sql, rowCap: rowCap, at: position)
                } catch .failed(let reason) {
                    lastFailure = reason
                    continue
                }
                guard ObserverVFS.statistics(raw.handle).torn == torn else { continue }
                return .success(base)
            }
            throw .failed(lastFailure)
        } catch {
            return .failure(error)
        }
    }

    private func readBase(
        _ raw: RawConnection, _ plan: MaintainedPlan, sql: String, rowCap: Int, at position: FilePosition
    ) throws(Failure) -> MaintainedBase {
        guard try Self.text(raw, "PRAGMA encoding") == "UTF-8" else {
            throw .unsupported("the database's text is not UTF-8")
        }
        let found = try Self.rows(
            raw, "SELECT sql FROM main.sqlite_schema WHERE type = 'table' AND name = ?1 COLLATE NOCASE",
            [.text(plan.table)])
        guard let first = found.first, case .text(let ddl) = first[0] else {
            throw .unsupported("\(plan.table) is not a table of the main database")
        }
        let words = SQLToken.tokenize(ddl).filter { $0.kind == .word }.map {
            String(decoding: Array(ddl.utf8)[$0.range], as: UTF8.self).uppercased()
        }
        if words.contains("VIRTUAL") { throw .unsupported("\(plan.table) is a virtual table") }
        if words.contains("COLLATE") { throw .unsupported("\(plan.table) declares a collation") }
        if words.contains("WITHOUT") { throw .unsupported("\(plan.table) is a WITHOUT ROWID table") }
        let columns = try Self.rows(raw, "SELECT name, hidden FROM pragma_table_xinfo(?1, 'main')", [.text(plan.table)])
        for column in columns {
            if case .text(let name) = column[0], ["rowid", "oid", "_rowid_"].contains(name.lowercased()) {
                throw .unsupported("a column of \(plan.table) is named \(name)")
            }
            if column[1] != .integer(0) { throw .unsupported("\(plan.table) has generated columns") }
        }
        if plan.kind == .rows {
            // Ties and unordered rows come in rowid order only from a scan of the table.
            for row in try Self.rows(raw, "EXPLAIN QUERY PLAN " + sql, []) {
                guard case .text(let detail) = row.last else { continue }
                let accepted =
                    (detail.hasPrefix("SCAN ") && !detail.contains(" USING "))
                    || detail.contains("USING INTEGER PRIMARY KEY") || detail == "USE TEMP B-TREE FOR ORDER BY"
                if !accepted { throw .unsupported("its plan does not read the table in rowid order: \(detail)") }
            }
        }
        let statement: RawStatement
        do {
            statement = try raw.prepare(sql)
        } catch {
            throw .failed(error.message)
        }
        let resultColumns = (0..<statement.columnCount).map {
            sqlite3_column_name(statement.handle, Int32($0)).map { String(cString: $0) } ?? ""
        }
        var rows: [[SQLValue]] = []
        var entries: RowStore?
        if plan.kind == .rows {
            var store = RowStore(leading: 1 + plan.order.count)
            let layout = MaintainedState.entryColumns(plan).map(Int32.init)
            try Self.step(raw, MaintainedState.baseSQL(plan, rowCap: rowCap), []) { statement in
                store.append { bytes in
                    for column in layout { RowEncoding.append(column: column, of: statement, to: &bytes) }
                }
            }
            entries = store
        } else {
            rows = try Self.rows(raw, MaintainedState.baseSQL(plan, rowCap: rowCap), [])
        }
        var matching = entries?.count ?? rows.count
        if plan.kind == .rows,
            case .integer(let count) = try Self.rows(raw, MaintainedState.countSQL(plan), [])
                .first?.first
        {
            matching = Int(count)
        }
        return MaintainedBase(
            position: position, ddl: ddl, resultColumns: resultColumns, rows: rows, entries: entries,
            matching: matching)
    }

    private static func rows(_ raw: RawConnection, _ sql: String, _ arguments: [SQLValue]) throws(Failure)
        -> [[SQLValue]]
    {
        var rows: [[SQLValue]] = []
        try step(raw, sql, arguments) { statement in
            rows.append(SQLValue.row(of: statement, columnCount: Int(sqlite3_column_count(statement))))
        }
        return rows
    }

    /// Runs a statement, handing each row to `row` (the statement's handle, on its row).
    private static func step(
        _ raw: RawConnection, _ sql: String, _ arguments: [SQLValue], _ row: (OpaquePointer) -> Void
    ) throws(Failure) {
        let statement: RawStatement
        do {
            statement = try raw.prepare(sql)
        } catch {
            // A lock or an interrupt: not now. Anything else: never.
            if [SQLITE_BUSY, SQLITE_LOCKED, SQLITE_INTERRUPT].contains(error.code & 0xFF) {
                throw .failed(error.message)
            }
            throw .unsupported("SQLite cannot prepare what keeps it: \(error.message)")
        }
        for (index, argument) in arguments.enumerated() { argument.bind(to: statement.handle, at: Int32(index + 1)) }
        do {
            try RowEvaluator.step(statement, on: raw, row)
        } catch {
            if sqlite3_errcode(raw.handle) & 0xFF == SQLITE_TOOBIG { throw .unsupported(error.message) }
            throw .failed(error.message)
        }
    }

    private static func text(_ raw: RawConnection, _ sql: String) throws(Failure) -> String? {
        guard let value = try rows(raw, sql, []).first?.first else { return nil }
        if case .text(let text) = value { return text }
        return value.description
    }
}
