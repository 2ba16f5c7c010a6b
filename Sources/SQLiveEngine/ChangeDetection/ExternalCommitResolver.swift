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
    /// One question per database at a time: while one waits, later
    /// ambiguous changes are folded into it (answered by an external
    /// change), and once it has waited past `patience` — the session is
    /// busy — they are taken for external changes at once. So a session
    /// committing in a long script queues one question, not one per commit.
    ///
    /// - parameter tables: the tables the change wrote (read from the
    ///   WAL), or `nil` when unknown; the signal emitted carries the
    ///   tables of every change it covers.
    func resolve(
        _ schema: String, tables: Set<String>?, in group: inout DiscardingTaskGroup,
        emit: @escaping @Sendable (ChangeSignal) -> Void
    ) {
        enum Next {
            case ask(generation: Int)
            case emitNow
            case fold
        }
        let next = questions.withLock { questions -> Next in
            guard let current = questions.waiting[schema] else {
                questions.generation += 1
                questions.waiting[schema] = Question(generation: questions.generation, tables: tables)
                return .ask(generation: questions.generation)
            }
            if current.timedOut { return .emitNow }
            questions.waiting[schema]?.folded = true
            questions.waiting[schema]?.merge(tables)
            return .fold
        }
        guard case .ask(let generation) = next else {
            if case .emitNow = next { emit(.external(tables)) }
            return
        }
        group.addTask { [self] in
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
            let answered = questions.withLock { $0.waiting.removeValue(forKey: schema) }
            if external || (answered?.folded ?? false) { emit(.external(answered?.tables ?? nil)) }
        }
        let patience = patience
        group.addTask { [self] in
            try? await Task.sleep(for: patience)
            let late = questions.withLock { questions -> Set<String>?? in
                guard let current = questions.waiting[schema], current.generation == generation, !current.timedOut
                else { return .none }
                questions.waiting[schema]?.timedOut = true
                // The change emitted now covers the ones folded so far.
                questions.waiting[schema]?.folded = false
                questions.waiting[schema]?.tables = []
                return .some(current.tables)
            }
            if case .some(let tables) = late { emit(.external(tables)) }
        }
    }

    /// A question waiting for the session's connection.
    private struct Question {
        var generation: Int
        /// It waited past `patience`: ambiguous changes are external at once.
        var timedOut = false
        /// Ambiguous changes arrived while it waited.
        var folded = false
        /// The tables of the changes it covers; `nil` when one is unknown.
        var tables: Set<String>?

        mutating func merge(_ other: Set<String>?) {
            if let other, let current = tables { tables = current.union(other) } else { tables = nil }
        }
    }

    private struct Questions {
        var waiting: [String: Question] = [:]
        var generation = 0
    }
}
