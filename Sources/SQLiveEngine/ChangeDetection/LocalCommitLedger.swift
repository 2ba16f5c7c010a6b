import SQLiveLocks

/// Counts sqlive's own commits, so that the probe can tell them apart from
/// other writers'.
///
/// The probe's connection sees every commit, sqlive's included. A commit
/// of the session becomes visible to other connections at some instant
/// between GRDB's `databaseWillCommit` (SQLite's commit hook) and
/// `databaseDidCommit`. The ledger counts both edges; the probe reads
/// `settled` just before reading `data_version` and `started` just after.
///
/// Between two readings *k-1* and *k*, no commit of the session can have
/// become visible when `started` read after *k* equals `settled` read
/// before *k-1*: then a changed data version proves another writer
/// committed. Otherwise the change may be the session's own, and the
/// `ExternalCommitResolver` asks the session's connection, whose own
/// `data_version` ignores its commits.
final class LocalCommitLedger: Sendable {
    // Mutable State: guarded by the mutex; written on the session's
    // connection (GRDB's writer queue), read on the watcher's thread.
    private struct Counts {
        var started = 0
        var settled = 0
    }
    private let counts = Locked(Counts())

    /// SQLite is about to commit a transaction of the session.
    func commitWillStart() {
        counts.withLock { $0.started += 1 }
    }

    /// The transaction ended (committed, or rolled back after the hook).
    func commitDidSettle() {
        counts.withLock { $0.settled = $0.started }
    }

    /// Commits that have started so far.
    var started: Int { counts.withLock { $0.started } }
    /// Commits that have settled so far.
    var settled: Int { counts.withLock { $0.settled } }
}
