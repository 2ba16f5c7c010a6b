import GRDB
import Synchronization

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
    private let writerVersions = Mutex<[String: Int]>([:])

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
    func resolve(
        _ schema: String, in group: inout DiscardingTaskGroup, emit: @escaping @Sendable (ChangeSignal) -> Void
    ) {
        let answered = Answered()
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
            answered.set()
            if external { emit(.external) }
        }
        let patience = patience
        group.addTask {
            try? await Task.sleep(for: patience)
            if !answered.isSet { emit(.external) }
        }
    }

    private final class Answered: Sendable {
        private let flag = Mutex(false)
        var isSet: Bool { flag.withLock { $0 } }
        func set() { flag.withLock { $0 = true } }
    }
}
