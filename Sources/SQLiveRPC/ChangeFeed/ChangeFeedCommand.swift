import Foundation
import SQLiveEngine
import SQLiveLocks
import SystemPackage

/// `sqlive DATABASE --changes [--table NAME]...`: one JSON line per
/// changed row of every commit by any process (`ChangeFeedJSON`), written
/// and flushed per commit, until interrupted (exit 0), a write to standard
/// output fails (a full disk, a closed pipe: exit 1, and standard error
/// says from which commit on the rows were lost), or the database cannot be
/// watched.
public enum ChangeFeedCommand {
    public static func run(database path: String?, tables: [String]) async -> Int32 {
        guard let path, DatabaseLocation(path).filePath != nil else {
            FileHandle.standardError.write(Data("sqlive: --changes needs a database file\n".utf8))
            return 1
        }
        var options = LiveDatabase.Options()
        options.readonly = true
        let database: LiveDatabase
        do {
            database = try await LiveDatabase.open(DatabaseLocation(path), options: options)
        } catch {
            FileHandle.standardError.write(Data("sqlive: \(error.description)\n".utf8))
            return 1
        }
        let feed = database.rowChanges(tables: tables)
        // A closed standard output ends the feed (a failed write), not the process.
        signal(SIGPIPE, SIG_IGN)
        // SIGINT and SIGTERM end the feed; the database closes, the status is 0.
        let interrupted = SignalStop([SIGINT, SIGTERM])
        let status = await withTaskGroup(of: Int32.self) { group in
            group.addTask {
                for await commit in feed {
                    let bytes = ChangeFeedJSON.lines(commit)
                    if let failure = Self.write(bytes) {
                        // What was lost: this commit's rows (some may have
                        // been written), and every commit after it, which
                        // is never read.
                        let rows = commit.changes.count
                        FileHandle.standardError.write(
                            Data(
                                ("sqlive: --changes: cannot write to standard output (\(failure)): the rows of commit "
                                    + "\(commit.commit) (\(rows) row\(rows == 1 ? "" : "s")) were not all written, "
                                    + "and no later commit is: the feed stops\n").utf8))
                        return 1
                    }
                }
                return 0
            }
            group.addTask {
                await interrupted.wait()
                return 0
            }
            let first = await group.next() ?? 0
            group.cancelAll()
            return first
        }
        interrupted.stop()
        await database.close()
        return status
    }

    /// Writes all of `bytes` to standard output; why it cannot (a full
    /// disk, a closed pipe), or nil once written.
    private static func write(_ bytes: [UInt8]) -> String? {
        do {
            try bytes.withUnsafeBytes { try FileDescriptor.standardOutput.writeEverything($0) }
            return nil
        } catch let error as Errno {
            return String(cString: strerror(error.rawValue))
        } catch {
            return "\(error)"
        }
    }
}

/// Waits for one of some signals (their default actions ignored meanwhile).
final class SignalStop: Sendable {
    // Set once in `init`, cancelled in `stop`: dispatch sources are
    // thread-safe, the array is never changed.
    private nonisolated(unsafe) let sources: [DispatchSourceSignal]
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init(_ signals: [Int32]) {
        (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let continuation = continuation
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield() }
            source.resume()
            return source
        }
    }

    /// Returns when a signal arrives, or the waiting task is cancelled.
    func wait() async {
        for await _ in stream { return }
    }

    func stop() {
        for source in sources { source.cancel() }
        continuation.finish()
    }
}
