import CSQLiveSupport
import Foundation
import GRDB
import GRDBSQLite

/// sqlive's two VFSes (`CSQLiveSupport/ObserverVFS.c`), as the engine uses them.
///
/// Every connection sqlive opens to a database file goes through one of
/// them. The connections that only watch — live queries' committed reader,
/// the checker's — go through `observer`: in a rollback-journal mode they
/// never hold a lock on the file, so a writer with no busy timeout never
/// fails because of them, and each read transaction is proven to have read
/// one committed state of the file (docs/architecture.md, "Watching without
/// a lock"). A read that the file's writer overtook fails with
/// `SQLITE_IOERR_READ` and counts as torn; `read(_:_:)` reads again.
/// The session's read-write connection goes through `tracking`, so that
/// observers in this process see when it writes pages.
enum ObserverVFS {
    /// The lock-free reading VFS (for read-only connections).
    static let observer = "sqlive-observer"
    /// The pass-through VFS that counts in-process writers.
    static let tracking = "sqlive"

    /// Registers both VFSes, once per process; `false` if SQLite refused.
    static let isRegistered: Bool = sqlive_observer_vfs_register() == SQLITE_OK

    /// Whether a file is a Litestream follow target (`PATH-txid` beside it):
    /// Litestream writes its pages under its own locks, waiting for them
    /// with no time-out, so every connection to it goes through the
    /// observer (read-only, never a lock), which reads it as a rollback
    /// file with a change counter that follows the file
    /// (docs/remote.md, "Beyond one machine").
    static func isFollowTarget(_ path: String?) -> Bool {
        guard let path, isRegistered else { return false }
        return sqlive_is_follow_target(path) != 0
    }

    /// The most times a read transaction is read again after a writer
    /// overtook it, before it fails as "database is locked" (the scheduler
    /// then tries again after its window).
    static let maximumAttempts = 64

    /// `SQLITE_IOERR_READ` and `SQLITE_READONLY_ROLLBACK` (C macros Swift
    /// does not import).
    static let ioErrorRead: Int32 = 10 | (1 << 8)
    static let readonlyRollback: Int32 = 8 | (3 << 8)

    /// What SQLite opens to read `location` through `vfs`: a `file:` URI
    /// naming the VFS, or the location's own text when it names a VFS of its
    /// own, is in memory, or is immutable.
    static func openingName(_ location: DatabaseLocation, vfs: String) -> String {
        guard isRegistered else { return location.sqlitePath }
        switch location {
        case .memory, .dqlite:
            return location.sqlitePath
        case .file(let path):
            return uri(path: path, vfs: vfs)
        case .uri(let uri):
            guard !location.isImmutable, location.filePath != nil else { return uri }
            let query = uri.firstIndex(of: "?").map { uri[uri.index(after: $0)...] } ?? ""
            if query.split(separator: "&").contains(where: { $0.hasPrefix("vfs=") }) { return uri }
            if let fragment = uri.firstIndex(of: "#") {
                // A fragment ends the URI: the parameter goes before it.
                let head = uri[..<fragment]
                return head + (head.contains("?") ? "&" : "?") + "vfs=\(vfs)" + uri[fragment...]
            }
            return uri + (uri.contains("?") ? "&" : "?") + "vfs=\(vfs)"
        }
    }

    /// A `file:` URI for a path: `%`, `?` and `#` escaped, and no `//`
    /// at the start (which would read as an authority).
    static func uri(path: String, vfs: String) -> String {
        var escaped = ""
        for character in path {
            switch character {
            case "%": escaped += "%25"
            case "?": escaped += "%3f"
            case "#": escaped += "%23"
            default: escaped.append(character)
            }
        }
        while escaped.hasPrefix("//") { escaped.removeFirst() }
        return "file:\(escaped)?vfs=\(vfs)"
    }

    /// What an observed file has done since it was opened
    /// (`sqlive_observer_stats`).
    struct Statistics: Equatable, Sendable, CustomStringConvertible {
        var observing: Bool
        var generations, reuses, restarts, prefetched, hits, misses, torn, writerWaits, tickWaits: Int

        var description: String {
            "observing \(observing), generations \(generations) (\(restarts) restarted), reuses \(reuses), "
                + "prefetched \(prefetched), hits \(hits), misses \(misses), torn \(torn), "
                + "writer waits \(writerWaits), tick waits \(tickWaits)"
        }
    }

    /// The statistics of a connection's main file (zeros when it is not observed).
    static func statistics(_ connection: OpaquePointer?) -> Statistics {
        var s = sqlive_observer_stats()
        _ = sqlive_observer_stats_of(connection, "main", &s)
        return Statistics(
            observing: s.observing != 0, generations: Int(s.generations), reuses: Int(s.reuses),
            restarts: Int(s.restarts), prefetched: Int(s.prefetched), hits: Int(s.hits), misses: Int(s.misses),
            torn: Int(s.torn), writerWaits: Int(s.writerWaits), tickWaits: Int(s.tickWaits))
    }

    /// The pages a statement read on an observer connection, in one
    /// generation of the file (rollback-journal modes): while they, page 1
    /// (less what every commit rewrites) and the schema cookie stay byte for
    /// byte the same, the statement reads the same bytes, so gives the same
    /// result (`unchanged`).
    struct PageDependency: Equatable, Sendable {
        var generation: UInt32
        var pages: [UInt32]
    }

    /// Takes the read transaction's lock (begins the file's generation) with
    /// a statement that reads only page 1; call first in a read transaction
    /// that records or compares pages.
    static func beginGeneration(_ db: Database) throws {
        _ = try Int.fetchOne(db, sql: "PRAGMA schema_version")
    }

    /// Whether the connection's last read transaction was a WAL one, asked
    /// of the VFS without reading: no page can be recorded then, so a read
    /// skips the statements that would prepare a recording. A hint: when
    /// the file has left WAL since, that one read records nothing and is
    /// read in full next time.
    static func lastReadWasWAL(_ db: Database) -> Bool {
        var request = sqlive_observer_pages_request()
        request.op = SQLIVE_PAGES_LAST_WAS_WAL
        return sqlive_observer_pages(db.sqliteConnection, &request) == SQLITE_OK
    }

    /// Runs `body` (one statement's reading), recording the pages it reads;
    /// `nil` when they cannot be known (not an observer connection, WAL,
    /// a read overtaken). SQLite's own page cache is emptied first, so
    /// that every page the statement reads comes through the VFS.
    static func recordingPages<T>(_ db: Database, _ body: () throws -> T) rethrows -> (T, PageDependency?) {
        var request = sqlive_observer_pages_request()
        request.op = SQLIVE_PAGES_RECORD
        guard sqlive_observer_pages(db.sqliteConnection, &request) == SQLITE_OK else { return (try body(), nil) }
        // Only where pages are recorded: a WAL reader keeps its cache.
        sqlite3_db_release_memory(db.sqliteConnection)
        let value: T
        do {
            value = try body()
        } catch {
            request.op = SQLIVE_PAGES_RECORDED  // ends the recording
            _ = sqlive_observer_pages(db.sqliteConnection, &request)
            throw error
        }
        request.op = SQLIVE_PAGES_RECORDED
        guard sqlive_observer_pages(db.sqliteConnection, &request) == SQLITE_OK else { return (value, nil) }
        let pages = (0..<Int(request.count)).map { UInt32(request.pages[$0]) }
        // A statement that read no page but the first (`PRAGMA page_count`,
        // `freelist_count`) reads what the comparison leaves out: never skipped.
        guard pages.contains(where: { $0 != 0 }) else { return (value, nil) }
        return (value, PageDependency(generation: request.generation, pages: pages))
    }

    /// The dependency at the current generation when none of its pages
    /// changed since it was recorded; `nil` otherwise (or when unknown).
    /// Call inside a read transaction after `beginGeneration`.
    static func unchanged(_ db: Database, _ dependency: PageDependency) -> PageDependency? {
        var request = sqlive_observer_pages_request()
        request.op = SQLIVE_PAGES_UNCHANGED
        request.generationBefore = dependency.generation
        let unchanged = dependency.pages.withUnsafeBufferPointer { pages in
            request.pages = pages.baseAddress
            request.count = UInt32(pages.count)
            return sqlive_observer_pages(db.sqliteConnection, &request) == SQLITE_OK && request.unchanged == 1
        }
        guard unchanged else { return nil }
        return PageDependency(generation: request.generation, pages: dependency.pages)
    }

    /// Lets go of what a connection keeps of the pages it read: SQLite's
    /// cache, and the observer VFS's copies and the set it would read ahead
    /// at its next read (which then finds every page changed, once); the
    /// bytes the VFS had kept. Only when the VFS keeps `atLeast` bytes or
    /// more (0 then). Call outside a read transaction.
    @discardableResult
    static func forgetPages(_ db: Database, atLeast: Int = 0) -> Int {
        let kept = bytesKept(db)
        guard kept >= atLeast else { return 0 }
        sqlite3_db_release_memory(db.sqliteConnection)
        var request = sqlive_observer_pages_request()
        request.op = SQLIVE_PAGES_FORGET
        return sqlive_observer_pages(db.sqliteConnection, &request) == SQLITE_OK ? kept : 0
    }

    /// Runs `body` with the pages it reads neither kept nor read ahead at the
    /// next generation (what nothing compares: a live query kept from rows
    /// read whole again). A page already kept is still served.
    static func passingBy<T>(_ db: Database, _ body: () throws -> T) rethrows -> T {
        var request = sqlive_observer_pages_request()
        request.op = SQLIVE_PAGES_PASS_BY
        guard sqlive_observer_pages(db.sqliteConnection, &request) == SQLITE_OK else { return try body() }
        defer {
            request.op = SQLIVE_PAGES_KEEP
            _ = sqlive_observer_pages(db.sqliteConnection, &request)
        }
        return try body()
    }

    /// The bytes of pages the observer VFS keeps for a connection's main file.
    static func bytesKept(_ db: Database) -> Int {
        var stats = sqlive_observer_stats()
        _ = sqlive_observer_stats_of(db.sqliteConnection, "main", &stats)
        return Int(stats.bytesKept)
    }

    /// Whether an error may come from a read a writer overtook
    /// (`SQLITE_IOERR_READ`), or from a journal SQLite took for hot in the
    /// instant a writer finished (`SQLITE_READONLY_ROLLBACK`): what
    /// `read(_:_:)` looks at again, and what code reading on an observer
    /// connection must let through rather than report.
    static func mayBeOvertaken(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        return error.extendedResultCode == .SQLITE_IOERR_READ || error.extendedResultCode == .SQLITE_READONLY_ROLLBACK
    }

    /// Runs `body` in a read transaction of an observer connection; when a
    /// writer overtook the transaction, runs it again in a new one.
    ///
    /// `body` may run more than once: it must only read. A transaction whose
    /// every page was read from one generation is delivered; one that failed
    /// for any other reason throws its error. A journal taken for hot that
    /// stays so (a writer crashed: only a read-write connection can roll it
    /// back) ends as SQLite's `SQLITE_READONLY_ROLLBACK`.
    static func read<T>(_ db: Database, _ body: (Database) throws -> T) throws -> T {
        var attempt = 0
        var hotJournalAlarms = 0
        while true {
            attempt += 1
            let before = statistics(db.sqliteConnection).torn
            do {
                var value: T?
                try db.inTransaction(.deferred) {
                    value = try body(db)
                    return .commit
                }
                if statistics(db.sqliteConnection).torn == before, let value { return value }
            } catch {
                if statistics(db.sqliteConnection).torn == before {
                    guard (error as? DatabaseError)?.extendedResultCode == .SQLITE_READONLY_ROLLBACK else {
                        throw error
                    }
                    // A journal taken for hot: a writer finishing its commit
                    // as SQLite looked (read again soon), or a writer that
                    // crashed (it stays: a read-write connection must roll
                    // it back).
                    hotJournalAlarms += 1
                    if hotJournalAlarms >= 5 { throw error }
                    usleep(UInt32(hotJournalAlarms) * 2000)
                }
            }
            if attempt >= maximumAttempts {
                throw DatabaseError(
                    resultCode: .SQLITE_BUSY,
                    message: "database is locked (written faster than sqlive could read it; read again later)")
            }
        }
    }
}
