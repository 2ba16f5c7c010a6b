import Foundation
import GRDB
import GRDBSQLite
import SQLiveLocks

extension LiveDatabase {
    /// Opens a database.
    ///
    /// A missing file is created, as sqlite3 does, unless the database is
    /// opened read-only. The file is checked at once, so that a directory,
    /// a file that is not a database, or a locked database fails here with
    /// a clear error rather than at the first query.
    ///
    /// - throws: `SQLiveError.cannotOpen` or `SQLiveError.sqlite`.
    public static func open(_ location: DatabaseLocation, options: Options = Options()) async throws(SQLiveError)
        -> LiveDatabase
    {
        do {
            return try await openUnchecked(location, options: options)
        } catch {
            throw SQLiveError.wrap(error)
        }
    }

    private static func openUnchecked(_ location: DatabaseLocation, options: Options) async throws -> LiveDatabase {
        // One ordered stream of both kinds of events: each is handed on in
        // the call that yields it.
        let ordered = Broadcaster<SessionEvent>()
        let tracer = StatementTracer(relay: { ordered.yield(.trace($0)) })
        // The directory's queries' events, and the file's.
        let directory = LiveQueryDirectory()
        let events = Broadcaster<LiveQueryNotice>(relay: { notice in
            let listed = notice.events(about: directory.contains)
            if listed.count == 1 {
                ordered.yield(.live(listed[0]))
            } else if listed.count > 1 {
                ordered.yield(.liveBatch(listed))
            }
        })
        // The watcher may report the file replaced before the database
        // exists; the relay hands it over once it does.
        let relay = Locked<LiveDatabase.Weak?>(nil)
        let rowFeed = RowFeed()
        // A dqlite database is opened as its local mirror (`DqliteRemote`).
        var location = location
        var remote: DqliteRemote?
        if case .dqlite(let target, let text) = location {
            guard let target else {
                throw SQLiveError.cannotOpen(path: text, reason: "it is not dqlite://HOST:PORT[,HOST:PORT…]/NAME")
            }
            // Blocking network calls, off the cooperative pool's threads.
            let connected = await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    continuation.resume(
                        returning: Result { () throws(SQLiveError) in try DqliteRemote.connect(target) })
                }
            }
            remote = try connected.get()
            location = .file(remote!.mirrorPath)
        }
        let core: Core
        do {
            core = try await openCore(
                location, options: options, tracer: tracer, events: events, rowFeed: rowFeed, mirrorOf: remote?.target
            ) { change in
                relay.withLock { $0?.database }?.fileWasReplaced(change)
            }
        } catch {
            remote?.stop()
            throw error
        }
        let database = LiveDatabase(
            location: location, tracer: tracer, options: options, events: events, ordered: ordered,
            directory: directory, rowFeed: rowFeed, remote: remote, core: core)
        relay.withLock { $0 = LiveDatabase.Weak(database: database) }
        return database
    }

    /// Opens the file at `location` for a database: the session's
    /// connection, then the live-query machinery over it, started.
    static func openCore(
        _ location: DatabaseLocation, options: Options, tracer: StatementTracer, events: Broadcaster<LiveQueryNotice>,
        rowFeed: RowFeed, mirrorOf remote: DqliteTarget? = nil,
        fileWasReplaced: @escaping @Sendable (DatabaseFileChange) -> Void
    ) async throws -> Core {
        // A dqlite database's mirror is only ever written by its follower:
        // the session's connection reads it (its statements run on the
        // leader), and the database is read-only only if asked to be.
        let askedReadonly = options.readonly
        var readonly = options.readonly || location.uriRequestsReadOnly || remote != nil
        try checkFile(of: location, readonly: readonly)
        // A Litestream follow target is read only through the observer
        // (never a lock: Litestream waits for its own with no time-out),
        // and its live queries are run again at each batch: its change
        // counter does not count them, so neither rows nor tables can be
        // matched to one (docs/remote.md, "Beyond one machine").
        let follower = ObserverVFS.isFollowTarget(location.filePath)
        var options = options
        if follower {
            options.liveQueries.walPrecision = false
            options.liveQueries.maintainsFromRows = false
        }
        var readonlyReason = readonly ? nil : unwritableReason(location)
        if remote != nil { readonlyReason = nil }
        if follower && !readonly { readonlyReason = "it is a Litestream follow target (written by Litestream alone)" }
        if readonlyReason != nil { readonly = true }

        let keepsTempInMemory = readonly && remote == nil
        let configuration = Self.sessionConfiguration(
            label: "sqlive", readonly: readonly, keepsTempInMemory: keepsTempInMemory,
            busyTimeout: options.busyTimeout, tracer: tracer)
        if !follower { WALClosing.noteOpening(location.filePath) }

        // A read-write session goes through the tracking VFS, so that
        // observers in this process know when it writes pages; a read-only
        // one keeps SQLite's own VFS and locks (the user's own reads).
        let openingName =
            follower
            ? ObserverVFS.openingName(location, vfs: ObserverVFS.observer)
            : readonly ? location.sqlitePath : ObserverVFS.openingName(location, vfs: ObserverVFS.tracking)
        do {
            let queue: DatabaseQueue =
                location == .memory
                ? try DatabaseQueue(configuration: configuration)
                : try DatabaseQueue(path: openingName, configuration: configuration)
            if let prepare = options.prepareSession {
                try await queue.writeWithoutTransaction { db in
                    if let connection = db.sqliteConnection { prepare(connection) }
                }
            }
            // Reading the schema makes SQLite read the file header: a file
            // that is not a database, or a locked one, fails now.
            let journalMode = try await queue.read { db in
                _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master")
                return try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "delete"
            }.lowercased()

            // One connection for the session in every journal mode. GRDB's
            // `DatabasePool` is not used: opening one on a WAL file whose
            // `-wal` is missing or empty commits a `CREATE TABLE` and a
            // `DROP TABLE` (its workaround for GRDB issue 102), which would
            // change the file, its schema version and every other
            // watcher's view at a mere look. Live queries read on their own
            // connection (`LiveQueryReader`), so the session's serves the
            // user's statements, which it runs one at a time anyway.
            let writer: any DatabaseWriter = queue
            let version = String(cString: sqlite3_libversion())
            let info = DatabaseInfo(
                path: remote?.url ?? location.sqlitePath, readonly: remote != nil ? askedReadonly : readonly,
                sqliteVersion: version, journalMode: remote != nil ? "wal" : journalMode,
                readonlyReason: readonlyReason)
            let live = try LiveQueryCenter(
                session: writer, location: location, configuration: configuration, tracer: tracer,
                options: options.liveQueries, events: events, rowFeed: rowFeed, fileWasReplaced: fileWasReplaced)
            let core = Core(info: info, writer: writer, live: live)
            do {
                try await live.start()
            } catch {
                // Leak nothing: stop what started, close the connections.
                await shut(core)
                throw error
            }
            return core
        } catch let error as DatabaseError {
            throw SQLiveError.describeOpening(error, location: location, readonly: readonly)
        }
    }

    /// Why an existing file can only be read here: the file, or the
    /// directory SQLite creates its journal or `-wal` and `-shm` in, is not
    /// writable by this process (an application's database in a directory
    /// the user may only read). `nil` when both are, or the file is new.
    static func unwritableReason(_ location: DatabaseLocation) -> String? {
        guard let path = location.filePath, FileManager.default.fileExists(atPath: path) else { return nil }
        if access(path, W_OK) != 0 { return "the file is not writable" }
        let directory = (DatabaseLocation.resolvingSymbolicLinks(path) as NSString).deletingLastPathComponent
        if access(directory.isEmpty ? "." : directory, W_OK) != 0 {
            return "its directory is not writable"
        }
        return nil
    }

    /// Fails early, with a clear message, for paths SQLite would report poorly.
    private static func checkFile(of location: DatabaseLocation, readonly: Bool) throws {
        guard let path = location.filePath else { return }
        try SpecialFiles.refuse(path)
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        if exists && isDirectory.boolValue {
            throw SQLiveError.cannotOpen(path: path, reason: "is a directory")
        }
        if !exists && readonly {
            throw SQLiveError.cannotOpen(path: path, reason: "no such file (read-only mode does not create it)")
        }
        if !exists {
            let directory = (path as NSString).deletingLastPathComponent
            if !directory.isEmpty && !FileManager.default.fileExists(atPath: directory) {
                throw SQLiveError.cannotOpen(path: path, reason: "no such directory: \(directory)")
            }
        }
    }
}

extension SQLiveError {
    /// Turns an error met while opening into a message that names the file.
    static func describeOpening(_ error: DatabaseError, location: DatabaseLocation, readonly: Bool) -> SQLiveError {
        var failure = SQLiteFailure(error)
        if case .uri(let uri) = location, let message = uriError(uri, readonly: readonly) {
            // GRDB reports a failed open by its code alone ("SQL logic
            // error"); SQLite's own message names the bad URI parameter.
            failure.message = "\(uri): \(message)"
            return .sqlite(failure)
        }
        let name = location.filePath ?? location.sqlitePath
        switch error.resultCode {
        case .SQLITE_NOTADB:
            failure.message = "\(name): file is not a database"
        case .SQLITE_CORRUPT:
            failure.message = "\(name): database disk image is malformed"
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            failure.message = "\(name): database is locked"
        case .SQLITE_CANTOPEN:
            failure.message = "\(name): unable to open database file"
        case .SQLITE_PERM, .SQLITE_READONLY:
            failure.message = "\(name): \(failure.message)"
        default:
            failure.message = "\(name): \(failure.message)"
        }
        return .sqlite(failure)
    }

    /// SQLite's message for a URI it refuses to open ("no such access
    /// mode: bogus"), asked of SQLite directly; `nil` when it opens.
    private static func uriError(_ uri: String, readonly: Bool) -> String? {
        let flags = (readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_URI
        do {
            _ = try RawConnection(path: uri, flags: flags)
            return nil
        } catch {
            return error.message
        }
    }
}

extension Duration {
    /// The duration in seconds, as Foundation's `TimeInterval`.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }

    /// The duration in milliseconds, as a `Double`.
    public var milliseconds: Double { timeInterval * 1000 }
}

extension LiveDatabase {
    /// How a session's connection is configured: the database's own (the
    /// REPL's, the server's) and each server client's (`ClientConnection`).
    static func sessionConfiguration(
        label: String, readonly: Bool, keepsTempInMemory: Bool, busyTimeout: Duration, tracer: StatementTracer
    ) -> Configuration {
        var configuration = Configuration()
        configuration.label = label
        configuration.readonly = readonly
        configuration.busyMode = .timeout(busyTimeout.timeInterval)
        // A REPL user may BEGIN in one command and COMMIT in another.
        configuration.allowsUnsafeTransactions = true
        // As the sqlite3 shell (and SQLite's default): foreign keys are not
        // enforced unless a script says `PRAGMA foreign_keys=ON`. GRDB turns
        // them on by default, which made scripts that run in sqlite3 fail.
        configuration.foreignKeysEnabled = false
        // As the sqlite3 shell and SQLite's default build: a double-quoted
        // word that names no column is a string (`VALUES ("hello")`), in
        // DML and DDL. GRDB refuses it by default, and a script written for
        // sqlite3 lost its rows ("no such column: hello").
        configuration.acceptsDoubleQuotedStringLiterals = true
        configuration.prepareDatabase { db in
            // Closing never checkpoints a WAL the user did not write to
            // (the session's connection and the live queries' alike).
            WALClosing.prepare(db.sqliteConnection)
            // Read-only writes no file anywhere: temporary tables, indexes
            // and sorts stay in memory (a server's clients cannot move them
            // back: ClientGuard).
            if keepsTempInMemory { try db.execute(sql: "PRAGMA temp_store = MEMORY") }
            tracer.install(on: db)
        }
        return configuration
    }
}
