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
final class ExternalCommitResolver: Sendable {
    let session: any DatabaseWriter
    let patience: Duration
    // Mutable State: guarded by the mutex; read and written on the
    // session's connection (GRDB's writer queue).
    /// The session connection's data version of each watched database, as last read.
    private let writerVersions = Locked<[String: Int]>([:])
    /// The questions waiting for the session's connection, by database;
    /// written by the run loop's body and children.
    private let questions = Locked(Questions())

    init(session: any DatabaseWriter, patience: Duration = .milliseconds(20)) {
        self.session = session
        self.patience = patience
    }

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
    /// group: the question, and a timer that gives up waiting.
    ///
    /// One question per database at a time: later ambiguous changes that
    /// arrive while it waits are folded into it. An answer covers what
    /// happened before it was read, not what was folded meanwhile, so when
    /// changes were folded and the answer was "none of it external", the
    /// question is asked again for them (the same child, the timer starting
    /// over); an external answer covers them all. Once a question has
    /// waited past `patience` — the session is busy — its changes and any
    /// later ambiguous ones are taken for external changes at once. So a
    /// session committing in a long script queues one question, not one
    /// per commit.
    ///
    /// - parameter tables: the tables the change wrote (read from the
    ///   WAL), or `nil` when unknown; the signal emitted carries the
    ///   tables of every change it covers.
    func resolve(
        _ schema: String, tables: Set<String>?, in group: inout DiscardingTaskGroup,
        emit: @escaping @Sendable (ChangeSignal) -> Void
    ) {
        enum Next {
            case ask(chain: Int)
            case emitNow
            case fold
        }
        let next = questions.withLock { questions -> Next in
            guard let current = questions.waiting[schema] else {
                questions.chains += 1
                questions.waiting[schema] = Question(
                    chain: questions.chains, askedAt: ContinuousClock.now, tables: tables)
                return .ask(chain: questions.chains)
            }
            if current.timedOut { return .emitNow }
            questions.waiting[schema]?.fold(tables)
            return .fold
        }
        guard case .ask(let chain) = next else {
            if case .emitNow = next { emit(.external(tables)) }
            return
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
                let outcome = questions.withLock { questions -> (emit: Bool, tables: Set<String>?)? in
                    guard let current = questions.waiting[schema] else { return (false, nil) }
                    if !external, !current.timedOut, let folded = current.folded {
                        // Changes came while the question waited: ask again for them.
                        questions.waiting[schema] = Question(
                            chain: current.chain, askedAt: ContinuousClock.now, tables: folded)
                        return nil
                    }
                    questions.waiting[schema] = nil
                    // Folded changes are left here only with an external
                    // answer (a timed-out question folds none).
                    return (external, current.covered)
                }
                guard let outcome else { continue }
                if outcome.emit { emit(.external(outcome.tables)) }
                return
            }
        }
        let patience = patience
        group.addTask { [self] in
            var deadline = ContinuousClock.now + patience
            while true {
                // In slices, so that the child ends soon after the answer
                // when the patience is long.
                try? await Task.sleep(until: min(deadline, ContinuousClock.now + Self.slice))
                enum Wake {
                    case done
                    case later(ContinuousClock.Instant)
                    case late(Set<String>?)
                }
                let wake = questions.withLock { questions -> Wake in
                    guard let current = questions.waiting[schema], current.chain == chain, !current.timedOut
                    else { return .done }
                    // Not yet, or asked again since: wait from then.
                    let due = current.askedAt + patience
                    if ContinuousClock.now < due { return .later(due) }
                    questions.waiting[schema]?.timedOut = true
                    // The change emitted now covers the ones folded so far.
                    questions.waiting[schema]?.folded = nil
                    questions.waiting[schema]?.tables = []
                    return .late(current.covered)
                }
                switch wake {
                case .done: return
                case .later(let next): deadline = next
                case .late(let tables):
                    emit(.external(tables))
                    return
                }
            }
        }
    }

    /// The longest the patience timer sleeps before it looks whether the
    /// question was answered.
    private static let slice = Duration.milliseconds(50)

    /// A question waiting for the session's connection.
    private struct Question {
        /// The first question and those asked again after it share one.
        var chain: Int
        /// When it was (last) asked.
        var askedAt: ContinuousClock.Instant
        /// It waited past `patience`: ambiguous changes are external at once.
        var timedOut = false
        /// The tables of the changes it asks about; `nil` when one is unknown.
        var tables: Set<String>?
        /// The tables of the changes that arrived while it waited (`.some(nil)`:
        /// one is unknown); `nil` when none did.
        var folded: Set<String>??

        mutating func fold(_ other: Set<String>?) {
            switch folded {
            case .none: folded = .some(other)
            case .some(let current): folded = .some(Self.union(current, other))
            }
        }

        /// The tables of the question's changes and of those folded into it.
        var covered: Set<String>? {
            folded.map { Self.union(tables, $0) } ?? tables
        }

        private static func union(_ first: Set<String>?, _ second: Set<String>?) -> Set<String>? {
            guard let first, let second else { return nil }
            return first.union(second)
        }
    }

    private struct Questions {
        var waiting: [String: Question] = [:]
        var chains = 0
    }
}
