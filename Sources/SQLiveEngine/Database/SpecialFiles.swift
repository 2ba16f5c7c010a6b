import Foundation
import SQLiveLocks

/// Paths that are not database files and would hang whoever opens them.
///
/// Opening a FIFO for reading blocks until something opens it for writing;
/// a device or a socket is no database either. A path a document or a
/// client names is checked with `stat(2)` — which never opens it — before
/// SQLite opens it, and refused with the reason.
///
/// `stat` itself can block on a network mount that stopped answering:
/// `checkOffThePool(_:timeout:)` runs it on a thread of its own and gives up
/// waiting after a time-out, so no shared thread (the cooperative pool, a
/// server's reading thread) ever waits for the file system.
public enum SpecialFiles {
    /// Throws `cannotOpen` with the reason when the path names a FIFO, a
    /// device or a socket (a missing path passes: opening reports it).
    public static func refuse(_ path: String) throws(SQLiveError) {
        var status = stat()
        guard stat(path, &status) == 0 else { return }
        let kind: String? =
            switch status.st_mode & S_IFMT {
            case S_IFIFO: "a FIFO (named pipe)"
            case S_IFCHR: "a character device"
            case S_IFBLK: "a block device"
            case S_IFSOCK: "a socket"
            default: nil
            }
        if let kind {
            throw .cannotOpen(path: path, reason: "it is \(kind), not a database file (sqlive does not open it)")
        }
    }

    /// `refuse(_:)` on a thread of its own, waited for at most `timeout`:
    /// a path on a mount that does not answer fails with the reason
    /// instead of holding the caller.
    ///
    /// The thread ends when `stat` returns; the kernel cannot be made to
    /// give it back sooner.
    public static func checkOffThePool(_ path: String, timeout: Duration = .seconds(5)) async throws(SQLiveError) {
        let outcome: Result<Void, SQLiveError> = await withCheckedContinuation { continuation in
            let pending = Locked<CheckedContinuation<Result<Void, SQLiveError>, Never>?>(continuation)
            let answer: @Sendable (Result<Void, SQLiveError>) -> Void = { result in
                pending.withLock { waiting in
                    waiting?.resume(returning: result)
                    waiting = nil
                }
            }
            let thread = Thread {
                answer(Result { () throws(SQLiveError) in try refuse(path) })
            }
            thread.name = "sqlive.stat"
            thread.start()
            let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
                answer(
                    .failure(
                        .cannotOpen(
                            path: path,
                            reason: "its file system did not answer within \(timeout.readableSeconds) "
                                + "(a network mount that hangs?)")))
            }
        }
        try outcome.get()
    }
}
