import Foundation
import GRDBSQLite
import SQLiveLocks

/// Builds a `PageMap` from `dbstat`, on a thread of its own, through a
/// read-only connection of its own — never on the watcher's or the
/// scheduler's path.
///
/// The map must say which commit it includes: the wal-index header is read
/// before and after the read transaction starts, and the build is kept
/// only when both agree (that header is the transaction's snapshot).
///
/// Ownership: `request` starts at most one build thread at a time; `stop`
/// (or `deinit`) interrupts a running build and waits until its thread
/// has exited and closed its connection.
final class PageMapBuilder: Sendable {
    let path: String

    private struct State {
        var running = false
        var stopped = false
        /// The running build's connection, to interrupt it.
        var connection: OpaquePointer?
        /// The last build, until taken.
        var built: Result<PageMap, PageMapBuilder.Failure>?
    }
    // Mutable State: guarded by the mutex; written by the build thread,
    // the watcher's thread (`request`, `take`) and `stop`.
    private let state = Locked(State())
    private let idle = DispatchSemaphore(value: 1)

    struct Failure: Error, Equatable {
        var message: String
    }

    private let statistics: Locked<WALPrecisionStatistics>

    /// Called on the build's thread once a build is ready to take.
    private let built: (@Sendable () -> Void)?

    init(
        path: String, statistics: Locked<WALPrecisionStatistics> = Locked(.init()), built: (@Sendable () -> Void)? = nil
    ) {
        self.path = path
        self.statistics = statistics
        self.built = built
    }

    deinit {
        stop()
    }

    /// Starts a build unless one is running.
    func request() {
        let start = state.withLock { state -> Bool in
            guard !state.running, !state.stopped else { return false }
            state.running = true
            state.built = nil
            return true
        }
        guard start else { return }
        idle.wait()
        let thread = Thread { [self] in
            let started = ContinuousClock.now
            let result = Result { () throws(Failure) -> PageMap in try build() }
            let elapsed = ContinuousClock.now - started
            statistics.withLock {
                $0.mapBuilds += 1
                $0.mapBuildNanoseconds += elapsed.nanoseconds
            }
            let ready = state.withLock { state in
                state.running = false
                state.connection = nil
                if !state.stopped { state.built = result }
                return !state.stopped
            }
            idle.signal()
            if ready { built?() }
        }
        thread.name = "sqlive.pagemap"
        thread.start()
    }

    /// The last build, once.
    func take() -> Result<PageMap, Failure>? {
        state.withLock { state in
            defer { state.built = nil }
            return state.built
        }
    }

    var isRunning: Bool { state.withLock { $0.running } }

    /// Interrupts a running build and waits for its thread. Idempotent.
    func stop() {
        state.withLock { state in
            state.stopped = true
            if let connection = state.connection { sqlite3_interrupt(connection) }
        }
        idle.wait()
        idle.signal()
    }

    /// Builds the map now, on the calling thread (the build thread, or a test).
    func build() throws(Failure) -> PageMap {
        let raw: RawConnection
        do {
            raw = try RawConnection(path: path, flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI)
        } catch {
            throw Failure(message: "cannot open \(path): \(error.message)")
        }
        defer {
            // Unregistered (under the lock) before the connection closes,
            // so `stop` never interrupts a closed one.
            state.withLock { $0.connection = nil }
            withExtendedLifetime(raw) {}
        }
        let registered = state.withLock { state -> Bool in
            state.connection = raw.handle
            return !state.stopped
        }
        guard registered else { throw Failure(message: "stopped") }
        sqlite3_busy_timeout(raw.handle, 1000)
        return try Self.build(raw.handle)
    }

    /// Builds the map through an open connection.
    static func build(_ connection: OpaquePointer) throws(Failure) -> PageMap {
        let run = Runner(connection: connection)
        guard try run.text("PRAGMA journal_mode")?.lowercased() == "wal" else {
            throw Failure(message: "not in WAL mode")
        }
        let storage = WALStorage(connection: connection)
        for _ in 0..<20 {
            guard let before = storage.indexHeader() else { throw Failure(message: "the wal-index cannot be read") }
            try run.execute("BEGIN")
            defer {
                do {
                    try run.execute("COMMIT")
                } catch {
                    Log.monitor.warning("ending the page map's read: \(error)")
                }
            }
            _ = try run.integer("SELECT count(*) FROM sqlite_schema")
            guard let after = storage.indexHeader() else { throw Failure(message: "the wal-index cannot be read") }
            guard before == after else { continue }
            return try snapshot(run, connection, index: after)
        }
        throw Failure(message: "the database keeps changing")
    }

    /// Reads the map inside a read transaction whose snapshot is `index`.
    private static func snapshot(
        _ run: Runner, _ connection: OpaquePointer, index: WALFormat.IndexHeader
    ) throws(Failure) -> PageMap {
        let pageCount = try run.integer("PRAGMA main.page_count")
        let pageSize = try run.integer("PRAGMA main.page_size")
        let cookie = UInt32(truncatingIfNeeded: try run.integer("PRAGMA main.schema_version"))
        let autoVacuum = try run.integer("PRAGMA main.auto_vacuum") != 0
        let freelist = try run.integer("PRAGMA main.freelist_count")
        var reserved: Int32 = -1
        _ = sqlite3_file_control(connection, "main", SQLITE_FCNTL_RESERVE_BYTES, &reserved)
        guard reserved >= 0 else { throw Failure(message: "the reserved bytes are unknown") }

        // What each b-tree stands for.
        var virtualTables: [String] = []
        var shadows = Set<String>()
        try run.rows("SELECT name, type FROM pragma_table_list WHERE schema = 'main'") { row in
            if row[1] == "virtual" { virtualTables.append(row[0].lowercased()) }
            if row[1] == "shadow" { shadows.insert(row[0].lowercased()) }
        }
        func table(_ name: String) -> String {
            let name = name.lowercased()
            guard shadows.contains(name) else { return name }
            return virtualTables.filter { name.hasPrefix($0 + "_") }.max { $0.count < $1.count } ?? name
        }
        var tablesOfTree: [String: [String]] = ["sqlite_schema": ["sqlite_schema", "sqlite_master"]]
        try run.rows("SELECT type, name, tbl_name FROM main.sqlite_schema WHERE type IN ('table', 'index')") { row in
            tablesOfTree[row[1].lowercased()] = [table(row[0] == "index" ? row[2] : row[1])]
        }

        var owners: [PageMap.Owner] = [
            PageMap.Owner(name: "sqlite_schema", tables: ["sqlite_schema", "sqlite_master"])
        ]
        var ownerIDs: [String: Int32] = ["sqlite_schema": PageMap.schemaOwner]
        var pages: [(page: UInt32, role: PageMap.Role)] = []
        pages.reserveCapacity(pageCount)
        var missing: String?
        try run.rows("SELECT name, pageno, pagetype FROM dbstat('main')") { row in
            let name = row[0].lowercased() == "sqlite_master" ? "sqlite_schema" : row[0].lowercased()
            let id: Int32
            if let known = ownerIDs[name] {
                id = known
            } else {
                guard let tables = tablesOfTree[name] else {
                    missing = name
                    return
                }
                id = Int32(owners.count)
                ownerIDs[name] = id
                owners.append(PageMap.Owner(name: name, tables: tables))
            }
            guard let page = UInt32(row[1]) else { return }
            pages.append((page, row[2] == "overflow" ? .overflow(owner: id) : .btree(owner: id)))
        }
        if let missing { throw Failure(message: "dbstat names an unknown b-tree \(missing)") }
        // How each table's rows are stored, for the row feed.
        let loaded: (layouts: [String: TableLayout], encoding: SQLiteRecord.TextEncoding)
        do throws(RawSQLiteError) {
            loaded = try TableLayout.loadAll(connection)
        } catch {
            throw Failure(message: "reading the tables' columns: \(error.message)")
        }
        var layouts: [Int32: TableLayout] = [:]
        for (name, id) in ownerIDs {
            if let layout = loaded.layouts[name] { layouts[id] = layout }
        }
        let map = PageMap(
            pageCount: pageCount, owners: owners, pages: pages, cookie: cookie, pageSize: pageSize,
            usableSize: pageSize - Int(reserved), autoVacuum: autoVacuum,
            snapshot: PageMap.Snapshot(
                salt: index.salt, frame: index.maxFrame, change: index.change, frameChecksum: index.frameChecksum),
            layouts: layouts, encoding: loaded.encoding)
        let free = map.freePageCount
        guard free == freelist else {
            throw Failure(message: "\(free) pages unaccounted for, the freelist has \(freelist)")
        }
        return map
    }

    /// Runs statements on the build's connection.
    private struct Runner {
        let connection: OpaquePointer

        func execute(_ sql: String) throws(Failure) {
            try rows(sql) { _ in }
        }

        func integer(_ sql: String) throws(Failure) -> Int {
            var value: Int?
            try rows(sql) { value = Int($0[0]) }
            guard let value else { throw Failure(message: "\(sql): no value") }
            return value
        }

        func text(_ sql: String) throws(Failure) -> String? {
            var value: String?
            try rows(sql) { value = $0[0] }
            return value
        }

        /// Each row, NULL as "".
        func rows(_ sql: String, _ body: ([String]) -> Void) throws(Failure) {
            do throws(RawSQLiteError) {
                let statement = try RawStatement(on: connection, sql)
                let columns = statement.columnCount
                var row = [String](repeating: "", count: columns)
                while true {
                    switch statement.step() {
                    case SQLITE_ROW:
                        for column in 0..<columns {
                            row[column] =
                                sqlite3_column_text(statement.handle, Int32(column)).map { String(cString: $0) } ?? ""
                        }
                        body(row)
                    case SQLITE_DONE:
                        return
                    case let code:
                        throw RawSQLiteError(code: code, on: connection)
                    }
                }
            } catch {
                throw Failure(message: "\(sql): \(error.message)")
            }
        }
    }
}
