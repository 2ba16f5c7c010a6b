import Foundation
import GRDB

/// Records what sqlive's own transactions modify, and reports it at commit.
///
/// Installed on the session's connection as a GRDB `TransactionObserver`.
/// For each statement, GRDB asks which kinds of events the observer wants;
/// the recorder wants those that can modify a live query's region (the
/// `Interest`), so bulk writes to tables nobody watches cost nothing. At
/// commit it sends the kinds that really changed rows (column sets
/// included, for `UPDATE`), and a schema change of the main or the temp
/// schema; a rollback sends `.rolledBack`. It also keeps the
/// `LocalCommitLedger`, so the probe can tell the session's commits from
/// other writers'.
///
/// It is installed only while some live query exists (or is being
/// registered): without it, GRDB has no observer on the connection, and
/// scripts run on SQLite directly (`ScriptRunner`), at the C shell's pace.
/// `prepareForScript` installs and removes it between transactions.
final class ChangeRecorder: TransactionObserver, @unchecked Sendable {
    // Mutable State
    //
    // `candidates`, `touched`, `schemaVersions`, `isInstalled` and
    // `missedChanges` are only accessed from
    // the writer's dispatch queue, where GRDB calls transaction observers:
    // hence `@unchecked Sendable`. `interest` and `ledger` are Sendable
    // objects with their own locks.

    /// Event kinds announced by statements of the current transaction that
    /// have not changed rows yet.
    private var candidates: [DatabaseEventKind] = []
    /// Event kinds that changed rows in the current transaction.
    private var touched: [DatabaseEventKind] = []
    private var schemaVersions: [Int?] = []
    /// Whether each table (lowercased, any schema) is `WITHOUT ROWID`:
    /// SQLite reports no row event for those, so a statement that may write
    /// one counts as having written it. A table not known here (made by
    /// another connection since) counts the same, and the map is read again
    /// before the next script (`isStale`).
    private var withoutRowid: [String: Bool] = [:]
    private var isStale = false
    /// Whether `databaseWillCommit` ran for the current transaction.
    private var commitStarted = false
    /// The statements `prefetch` keeps between commits; emptied when the
    /// schema changes and when the recorder is removed.
    private var prefetchStatements: [LiveQueryDefinition: Statement] = [:]
    /// Whether the recorder is one of GRDB's transaction observers.
    private(set) var isInstalled = false
    /// Set when the recorder was installed inside a transaction: what ran
    /// before it was not observed, so its commit refreshes everything.
    private var missedChanges = false

    let interest: Interest
    let ledger: LocalCommitLedger
    /// Reads quick live queries at commit, where it may (`LocalPrefetch`).
    let prefetch: LocalPrefetch?
    private let emit: @Sendable (ChangeSignal) -> Void

    init(
        interest: Interest, ledger: LocalCommitLedger, prefetch: LocalPrefetch? = nil,
        emit: @escaping @Sendable (ChangeSignal) -> Void
    ) {
        self.interest = interest
        self.ledger = ledger
        self.prefetch = prefetch
        self.emit = emit
    }

    /// Reads the schema versions the recorder compares commits against.
    func prime(_ db: Database) throws {
        prefetchStatements.removeAll()
        schemaVersions = try Self.schemaVersions(db)
        withoutRowid = try Self.withoutRowidTables(db)
        isStale = false
    }

    private static func withoutRowidTables(_ db: Database) throws -> [String: Bool] {
        var tables: [String: Bool] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT name, wr FROM pragma_table_list") {
            tables[(row[0] as String).lowercased()] = row[1] as Bool
        }
        return tables
    }

    /// The versions of the main and the temp schema.
    private static func schemaVersions(_ db: Database) throws -> [Int?] {
        [
            try Int.fetchOne(db.cachedStatement(sql: "PRAGMA main.schema_version")),
            try Int.fetchOne(db.cachedStatement(sql: "PRAGMA temp.schema_version")),
        ]
    }

    /// Installs or removes the recorder before a script runs on the
    /// session's connection; returns whether it is installed (then the
    /// script's statements must run through GRDB, which reports their row
    /// events).
    ///
    /// Installed when a live query exists; removed when none does, but
    /// only between transactions, so a transaction it observed in part is
    /// still reported.
    func prepareForScript(_ db: Database) throws -> Bool {
        let wanted = interest.queryCount > 0
        if isInstalled && isStale {
            withoutRowid = try Self.withoutRowidTables(db)
            isStale = false
        }
        if wanted && !isInstalled {
            try prime(db)
            missedChanges = db.isInsideTransaction
            db.add(transactionObserver: self, extent: .observerLifetime)
            isInstalled = true
        } else if !wanted && isInstalled && !db.isInsideTransaction {
            db.remove(transactionObserver: self)
            isInstalled = false
            prefetchStatements.removeAll()
        }
        return isInstalled
    }

    /// Removes the recorder (when the database closes).
    func uninstall(_ db: Database) {
        prefetchStatements.removeAll()
        guard isInstalled else { return }
        db.remove(transactionObserver: self)
        isInstalled = false
    }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
        guard interest.isModified(byEventsOfKind: eventKind) else { return false }
        let name = eventKind.tableName.lowercased()
        if withoutRowid[name] != false {
            // No row event will come (or the table is new to the recorder):
            // the statement counts as a change.
            if withoutRowid[name] == nil { isStale = true }
            if !touched.contains(where: { $0.isSame(as: eventKind) }) { touched.append(eventKind) }
            return true
        }
        if !candidates.contains(where: { $0.isSame(as: eventKind) }) {
            candidates.append(eventKind)
        }
        return true
    }

    func databaseDidChange(with event: DatabaseEvent) {
        guard
            let index = candidates.firstIndex(where: { kind in
                kind.tableName.caseInsensitiveCompare(event.tableName) == .orderedSame && kind.matches(event.kind)
            })
        else { return }
        let kind = candidates.remove(at: index)
        if !touched.contains(where: { $0.isSame(as: kind) }) {
            touched.append(kind)
        }
    }

    /// Notes rows inserted into `table` by statements that ran on SQLite
    /// directly, which GRDB does not see (a bulk insert): they count among
    /// the transaction's changes, reported at its commit. When the inserts
    /// may have changed other tables too (triggers, foreign-key actions of
    /// a REPLACE), the commit refreshes every live query.
    func rowsWereInserted(into table: String, mayChangeOtherTables: Bool) {
        guard isInstalled else { return }
        if mayChangeOtherTables {
            missedChanges = true
            return
        }
        let kind = DatabaseEventKind.insert(tableName: table)
        guard interest.isModified(byEventsOfKind: kind) else { return }
        if !touched.contains(where: { $0.isSame(as: kind) }) {
            touched.append(kind)
        }
    }

    func databaseWillCommit() throws {
        commitStarted = true
        ledger.commitWillStart()
    }

    func databaseDidCommit(_ db: Database) {
        let touched = self.touched
        let missedChanges = self.missedChanges
        reset()
        // Read once, when first asked: before the signal only when a read
        // at commit may start, else after it.
        var read: [Int?]??
        func versions() -> [Int?]? {
            if let read { return read }
            do {
                read = try Self.schemaVersions(db)
            } catch {
                Log.monitor.warning("reading schema_version after a commit: \(error)")
                read = .some(nil)
            }
            return read!
        }
        if missedChanges {
            emit(.localUnobserved)
        } else if !touched.isEmpty {
            // Begun before the signal goes (LocalPrefetch's freshness rule),
            // read after it, and only when the commit left the schema as it was.
            let job = prefetch?.begin(db, affected: interest.definitions(modifiedBy: touched)) {
                guard let versions = versions(), versions == schemaVersions else { return nil }
                return versions[1]
            }
            emit(.local(touched))
            if let prefetch, let job { prefetch.read(db, job, statements: &prefetchStatements) }
        }
        if let versions = versions(), versions != schemaVersions {
            schemaVersions = versions
            prefetchStatements.removeAll()
            do {
                withoutRowid = try Self.withoutRowidTables(db)
            } catch {
                Log.monitor.warning("reading the tables after a schema change: \(error)")
                isStale = true
            }
            emit(.schemaChanged(.local))
        }
    }

    func databaseDidRollback(_ db: Database) {
        reset()
        emit(.rolledBack)
    }

    private func reset() {
        if commitStarted {
            commitStarted = false
            ledger.commitDidSettle()
        }
        candidates.removeAll(keepingCapacity: true)
        touched.removeAll(keepingCapacity: true)
        missedChanges = false
    }
}

extension DatabaseEventKind {
    /// Whether two event kinds are the same (`DatabaseEventKind` is not `Equatable`).
    func isSame(as other: DatabaseEventKind) -> Bool {
        switch (self, other) {
        case let (.insert(a), .insert(b)), let (.delete(a), .delete(b)):
            a.caseInsensitiveCompare(b) == .orderedSame
        case let (.update(a, columnsA), .update(b, columnsB)):
            a.caseInsensitiveCompare(b) == .orderedSame && columnsA == columnsB
        default:
            false
        }
    }

    /// Whether a row event is of this kind.
    func matches(_ kind: DatabaseEvent.Kind) -> Bool {
        switch (self, kind) {
        case (.insert, .insert), (.update, .update), (.delete, .delete): true
        default: false
        }
    }
}
