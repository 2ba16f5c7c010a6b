import GRDB
import GRDBSQLite
import SQLiveLocks
import Synchronization

/// sqlive's own commit, read where it happened: the quick live queries it
/// concerns are read on the session's connection, in the commit's
/// `databaseDidCommit`, as GRDB's `ValueObservation` reads its own — so the
/// refresh that follows needs no read of its own, and no hop to the
/// committed connection's queue.
///
/// Only where that read can hurt nobody and reads what the committed
/// connection would:
/// - the main database is in **WAL** mode (a reader there never makes a
///   writer wait or fail; in rollback-journal modes a read takes a SHARED
///   lock, which the committed connection's observer VFS never does);
/// - the session has **no temp schema** (a temp table could shadow a main
///   one) and **no attached database**;
/// - the query is **quick** (its last read took under
///   `LiveQueryOptions.readAtCommitLimit`, 0.5 ms by default) and read on
///   the committed connection (`LiveQueryReader.Home.committed`): the
///   session's statement waits for it, as a GRDB writer waits for its
///   observations;
/// - its SQL answers the same on both connections (no `last_insert_rowid()`,
///   `changes()`, pragma or `LIKE`, which `case_sensitive_like` changes; no
///   script of the session has set `reverse_unordered_selects`);
/// - a commit reads only when its quick queries are every query it
///   concerns on the committed connection, four at most: the refresh would
///   read them all there otherwise.
///
/// **One snapshot.** A commit's queries are read in one read transaction,
/// and a refresh uses them only when they cover every query it reads on the
/// committed connection (else it reads them all there): a refresh never
/// mixes two versions of the database, whichever way it was read.
///
/// **Freshness.** A prefetched result was read after the commit that
/// prompted it, so it is never older than that commit. The box is emptied
/// each time the scheduler takes a signal (`take()`); the scheduler keeps
/// what it took with a `.local` signal only until the next signal, and a
/// refresh uses what is kept then. A commit's job is in flight (`begin`)
/// before its signal is sent, and `take` waits for a job in flight; the
/// writer's queue runs one commit at a time. So a result taken with a
/// signal was read after every commit whose signal came before: a result
/// that another writer's commit overtook is either dropped with that
/// commit's signal, or used before it and refreshed again after it. And a
/// delivery never goes back: a result is used only when its job began after
/// the query's last read had ended (a read that began later may have seen
/// a later commit).
final class LocalPrefetch: Sendable {
    /// Orders the reads at commit against the scheduler's: a read at
    /// commit may stand for a refresh only if it began after the query's
    /// last read was recorded (`RefreshScheduler.refresh`). A sequence, not
    /// instants of the real clock: the scheduler decides on its injected
    /// clock or on sequence numbers, never on the time of day.
    let reads = ReadSequence()

    /// The most queries read at one commit.
    static let maximumPerCommit = 4
    /// The most rows a result may have had to be read at commit.
    static let maximumRows = 1_000

    /// What reading one evaluation at commit needs.
    struct Plan: Sendable {
        var region: DatabaseRegion
        var wantsKey: Bool
    }

    /// What a commit may do for one evaluation.
    enum Entry: Sendable {
        /// Read it at commit.
        case readable(Plan)
        /// Read on the committed connection only (slow, big, or its SQL
        /// answers differently on the session's connection): a commit that
        /// concerns it reads nothing, since its refresh reads there anyway.
        case committedOnly
        /// Read on the session's connection: not the refresh's concern.
        case session
    }

    // Mutable State: guarded by the mutex; `plans` written by the scheduler
    // actor and read on GRDB's writer queue; `box` written on the writer
    // queue and emptied by the scheduler.
    private struct State {
        var entries: [LiveQueryDefinition: Entry] = [:]
        /// Set for good by a script that may change how the session's
        /// connection answers (`String.mayChangeHowReadsAnswer`).
        var stopped = false
        var box: [LiveQueryDefinition: LiveQueryFetcher.Fetched] = [:]
        /// A commit's job is between `begin` and the end of its `read`.
        var inFlight = false
        /// Schedulers waiting in `take` for the job in flight.
        var waiters: [CheckedContinuation<Void, Never>] = []
        var used = 0
    }
    private let state = Locked(State())
    private let rowCap: Int
    private let byteCap: Int?
    private let tracer: StatementTracer
    /// How long a query's last read may have taken to be read at commit.
    private let limit: Duration

    init(options: LiveQueryOptions, tracer: StatementTracer) {
        self.limit = options.readAtCommitLimit ?? .zero
        self.rowCap = options.rowCap
        self.byteCap = options.resultByteCap
        self.tracer = tracer
    }

    /// Sets (or, with `nil`, removes) what a commit may do for an evaluation.
    func set(_ definition: LiveQueryDefinition, _ entry: Entry?) {
        state.withLock { $0.entries[definition] = entry }
    }

    func removeAll() {
        state.withLock { $0.entries.removeAll() }
    }

    /// No more reading at commit, for the session's life.
    func stop() {
        state.withLock { $0.stopped = true }
    }

    /// What a commit may do for an evaluation that was just read.
    func entry(
        for definition: LiveQueryDefinition, home: LiveQueryReader.Home, elapsed: Duration, rows: Int,
        region: DatabaseRegion, wantsKey: Bool
    ) -> Entry {
        guard home == .committed else { return .session }
        guard elapsed < limit, rows <= Self.maximumRows, !Self.answersByConnection(definition.sql) else {
            return .committedOnly
        }
        return .readable(Plan(region: region, wantsKey: wantsKey))
    }

    /// Whether SQL may answer differently on the session's connection than
    /// on the live queries': it names a function of the connection's own
    /// state (`last_insert_rowid()`, `changes()`, `total_changes()`), a
    /// pragma, or `LIKE` (`PRAGMA case_sensitive_like` is the connection's).
    /// Generous: a column named `likes` is left to the committed connection.
    static func answersByConnection(_ sql: String) -> Bool {
        let lowered = sql.lowercased()
        return ["last_insert_rowid", "changes", "pragma", "like"].contains { lowered.contains($0) }
    }

    /// The reads one commit will make: its quick live queries.
    struct Job {
        fileprivate var plans: [(LiveQueryDefinition, Plan)]
        fileprivate var affected: Set<LiveQueryDefinition>
        /// Before its snapshot is taken.
        fileprivate var begunAt: Int
    }

    /// On the session's connection, in `databaseDidCommit`, before the
    /// commit's signal is sent: the quick live queries among `affected` it
    /// will read, when the connection qualifies. A job is in flight from
    /// now until `read` ends: a scheduler that takes the box meanwhile
    /// waits for it. `tempSchemaVersion` is asked last, only when all else
    /// qualifies: the temp schema's version after a commit that left the
    /// schema as it was, else `nil`.
    ///
    /// Nothing is read unless it covers every evaluation `affected` that is
    /// read on the committed connection, at most `maximumPerCommit` of them:
    /// a refresh uses read-at-commit results only when they cover what it
    /// reads there, so a partial read would make the statement wait for
    /// nothing.
    func begin(_ db: Database, affected: Set<LiveQueryDefinition>, tempSchemaVersion: () -> Int?) -> Job? {
        guard !affected.isEmpty else { return nil }
        let plans = state.withLock { state -> [(LiveQueryDefinition, Plan)]? in
            guard !state.stopped else { return nil }
            var plans: [(LiveQueryDefinition, Plan)] = []
            for definition in affected {
                switch state.entries[definition] {
                case .readable(let plan): plans.append((definition, plan))
                case .session: continue
                case .committedOnly, nil: return nil
                }
            }
            return plans.count <= Self.maximumPerCommit ? plans : nil
        }
        guard let plans, !plans.isEmpty, Self.isPlainWAL(db), tempSchemaVersion() == 0 else { return nil }
        let begunAt = reads.next()
        state.withLock { $0.inFlight = true }
        return Job(plans: plans, affected: affected, begunAt: begunAt)
    }

    /// Reads a job's queries (on the session's connection, right after the
    /// commit's signal was sent: the read and the scheduler's hop overlap),
    /// puts them in the box and wakes the scheduler if it waits.
    ///
    /// `statements` keeps the statements prepared for it between commits,
    /// on the session's connection: its owner empties it whenever the
    /// schema changes and before the connection closes.
    func read(_ db: Database, _ job: Job, statements: inout [LiveQueryDefinition: Statement]) {
        var read: [LiveQueryDefinition: LiveQueryFetcher.Fetched] = [:]
        if statements.count > 4 * Self.maximumPerCommit {
            statements = statements.filter { job.affected.contains($0.key) }
        }
        // One snapshot for the job's queries, as a refresh reads its own:
        // a read transaction, begun and ended on SQLite directly (GRDB's
        // observers see no transaction that writes nothing).
        let connection = db.sqliteConnection
        let inTransaction = job.plans.count > 1
        if inTransaction, sqlite3_exec(connection, "BEGIN DEFERRED", nil, nil, nil) != SQLITE_OK {
            finish(with: [:])
            return
        }
        defer {
            if inTransaction, sqlite3_exec(connection, "COMMIT", nil, nil, nil) != SQLITE_OK {
                sqlite3_exec(connection, "ROLLBACK", nil, nil, nil)
                if sqlite3_get_autocommit(connection) == 0 {
                    Log.engine.error("reading at commit left the session's connection in a transaction")
                }
            }
        }
        for (definition, plan) in job.plans {
            // A failure is left to the refresh, which reports it as usual.
            do {
                let statement = try statements[definition] ?? Self.prepare(definition, db)
                statements[definition] = statement
                var fetched = try LiveQueryFetcher.fetch(
                    definition, db, rowCap: rowCap, tracer: tracer, knownRegion: plan.region, wantsKey: plan.wantsKey,
                    byteCap: byteCap, prepared: statement)
                fetched.begunAt = job.begunAt
                read[definition] = fetched
            } catch {
                statements[definition] = nil
            }
        }
        finish(with: read)
    }

    /// Ends the job in flight: its results replace the box's (one job's
    /// results are one snapshot), and the scheduler is woken if it waits.
    private func finish(with read: [LiveQueryDefinition: LiveQueryFetcher.Fetched]) {
        let waiters = state.withLock { state in
            if !read.isEmpty { state.box = read }
            state.inFlight = false
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private static func prepare(_ definition: LiveQueryDefinition, _ db: Database) throws -> Statement {
        let statement = try db.makeStatement(sql: definition.sql)
        if !definition.parameters.isEmpty {
            try statement.setArguments(definition.parameters.statementArguments)
        }
        return statement
    }

    /// Empties the box: the results read at the commits whose signals have
    /// not been taken yet. When a read is in flight (its signal may be the
    /// one being taken), waits for it first: a commit's read lasts what its
    /// quick queries take, and always ends.
    func take() async -> [LiveQueryDefinition: LiveQueryFetcher.Fetched] {
        if state.withLock({ $0.inFlight }) {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state in
                    if state.inFlight { state.waiters.append(waiter) }
                    return !state.inFlight
                }
                if ready { waiter.resume() }
            }
        }
        return state.withLock { state in
            guard !state.box.isEmpty else { return [:] }
            defer { state.box.removeAll() }
            return state.box
        }
    }

    /// Notes a refresh that used a result read at commit.
    func noteUsed() {
        state.withLock { $0.used += 1 }
    }

    /// How many refreshes used a result read at commit (benchmarks, tests).
    var used: Int { state.withLock { $0.used } }

    /// Whether the connection has only its main database, in WAL mode
    /// (its file's header says so: no statement, no transaction).
    private static func isPlainWAL(_ db: Database) -> Bool {
        // 0 is main, 1 temp: a name at 2 is an attached database.
        guard sqlite3_db_name(db.sqliteConnection, 2) == nil else { return false }
        return DatabaseHeader.read(20, of: db.sqliteConnection).map(DatabaseHeader.isWAL) ?? false
    }
}

extension String {
    /// Whether a script may set `reverse_unordered_selects`, under which a
    /// query without `ORDER BY` answers in another order on its connection:
    /// it holds `_unordered_`, in any case. A generous test of the bytes,
    /// run before every script. (`case_sensitive_like` needs no test: SQL
    /// with `LIKE` is never read at commit.)
    var mayChangeHowReadsAnswer: Bool {
        utf8.withContiguousStorageIfAvailable { Self.holds(Self.unordered, in: $0) }
            ?? Self.holds(Self.unordered, in: Array(utf8))
    }

    private static let unordered: [UInt8] = Array("_unordered_".utf8)

    /// Whether `bytes` hold `needle` (lowercase ASCII), letters in any case.
    static func holds(_ needle: [UInt8], in bytes: some Collection<UInt8>) -> Bool {
        var index = bytes.startIndex
        while index != bytes.endIndex {
            var probe = index
            var matched = 0
            while probe != bytes.endIndex, matched < needle.count, bytes[probe] | 0x20 == needle[matched] | 0x20 {
                matched += 1
                probe = bytes.index(after: probe)
            }
            if matched == needle.count { return true }
            index = bytes.index(after: index)
        }
        return false
    }
}

/// A total order of events on several threads: each `next()` is later than
/// every one before it.
final class ReadSequence: Sendable {
    private let last = Atomic<Int>(0)

    func next() -> Int {
        last.add(1, ordering: .sequentiallyConsistent).newValue
    }
}
