import GRDB
import SQLiveLocks

/// Decides whether a data-version change that the session's own commit may
/// explain was another writer's too.
///
/// The session's connection knows: its own `PRAGMA data_version` changes
/// only for other connections' commits. Asking it means waiting for the
/// session's connection, so the answer is awaited for at most `patience`:
/// when the session is busy with a long statement (or inside a
/// transaction, where its data version is frozen), the change is taken
/// for an external commit — a refresh too many, never one too few. A
/// question answered late still reports what it found.
final class ExternalCommitResolver<C: Clock>: Sendable where C.Duration == Duration {
    let session: any DatabaseWriter
    let clock: C
    /// The session's commits: one in flight explains a change (`CommitQuestions`).
    let ledger: LocalCommitLedger?
    // Mutable State: guarded by the mutex; read and written on the
    // session's connection (GRDB's writer queue).
    /// The session connection's data version of each watched database, as last read.
    private let writerVersions = Locked<[String: Int]>([:])
    /// The questions waiting for the session's connection (the decisions:
    /// `CommitQuestions`); written by the run loop's body and children.
    private let questions: Locked<CommitQuestions<C.Instant>>

    init(
        session: any DatabaseWriter, clock: C, ledger: LocalCommitLedger? = nil, patience: Duration = .milliseconds(20)
    ) {
        self.session = session
        self.clock = clock
        self.ledger = ledger
        self.questions = Locked(CommitQuestions(patience: patience))
    }

    var patience: Duration { questions.withLock { $0.patience } }

    /// Reads a database's data version on the session's connection, as
    /// the baseline of later questions. Runs on the session's connection.
    func prime(_ schema: String, _ db: Database) throws {
        let version = try Self.dataVersion(of: schema, db)
        writerVersions.withLock { $0[schema] = version }
    }

    /// Forgets a database the session detached.
    func forget(_ schema: String) {
        writerVersions.withLock { $0[schema] = nil }
    }

    private static func dataVersion(of schema: String, _ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "PRAGMA \(schema.quotedDatabaseIdentifier).data_version") ?? 0
    }

    /// Asks the session's connection, in two children of the run loop's
    /// group: the question, and a timer that gives up waiting
    /// (`CommitQuestions` decides; this does the asking and the sleeping).
    ///
    /// One question per database at a time: later ambiguous changes that
    /// arrive while it waits are folded into it. So a session committing in
    /// a long script queues one question, not one per commit.
    ///
    /// - parameter tables: the tables the change wrote (read from the
    ///   WAL), or `nil` when unknown; the signal emitted carries the
    ///   tables of every change it covers.
    func resolve(
        _ schema: String, tables: Set<String>?, in group: inout DiscardingTaskGroup,
        emit: @escaping @Sendable (ChangeSignal) -> Void
    ) {
        let now = clock.now
        let arrival = questions.withLock { $0.changeArrived(schema, tables: tables, at: now) }
        let chain: Int
        switch arrival {
        case .folded: return
        case .external(let tables):
            emit(.presumedExternal(tables))
            return
        case .ask(let asked): chain = asked
        }
        group.addTask { [self] in
            while true {
                let external: Bool
                do {
                    external = try await session.writeWithoutTransaction { db in
                        if db.isInsideTransaction { return true }
                        let version = try Self.dataVersion(of: schema, db)
                        return self.writerVersions.withLock { versions in
                            defer { versions[schema] = version }
                            return versions[schema] != version
                        }
                    }
                } catch {
                    external = true
                }
                let now = clock.now
                switch questions.withLock({ $0.answered(schema, external: external, at: now) }) {
                case .askAgain: continue
                case .external(let tables): emit(.external(tables))
                case .done: break
                }
                return
            }
        }
        group.addTask { [self] in
            var deadline = now.advanced(by: patience)
            while true {
                // In slices, so that the child ends soon after the answer
                // when the patience is long.
                let slice = clock.now.advanced(by: Self.slice)
                try? await clock.sleep(until: min(deadline, slice), tolerance: nil)
                let now = clock.now
                let inFlight = ledger.map { $0.started != $0.settled } ?? false
                switch questions.withLock({ $0.timerFired(schema, chain: chain, commitInFlight: inFlight, at: now) }) {
                case .done: return
                case .wait(let until): deadline = until
                case .external(let tables):
                    emit(.presumedExternal(tables))
                    return
                }
            }
        }
    }

    /// The longest the patience timer sleeps before it looks whether the
    /// question was answered.
    private static var slice: Duration { .milliseconds(50) }
}
