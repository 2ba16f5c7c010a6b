import SQLiveEngine
import SQLiveLocks
import SQLiveProtocol

/// What the `changes` tool answers from: the change feed's latest commits
/// (every table), kept from the first call on, the oldest dropped beyond
/// `capacity` rows.
final class MCPChangeLog: Sendable {
    /// The most rows kept.
    static let capacity = 5_000

    // Mutable State: guarded by the mutex; the forwarder appends, tool calls read.
    private struct State {
        var commits: [CommitRows] = []
        var rows = 0
        /// The newest commit dropped to stay within the capacity.
        var droppedThrough = 0
    }
    private let state = Locked(State())
    private let forwarder: Locked<Task<Void, Never>?> = Locked(nil)

    init(_ database: LiveDatabase) {
        let feed = database.rowChanges()
        let task = Task { [state] in
            for await commit in feed {
                state.withLock { state in
                    state.commits.append(commit)
                    state.rows += commit.changes.count
                    while state.rows > Self.capacity, state.commits.count > 1 {
                        let dropped = state.commits.removeFirst()
                        state.rows -= dropped.changes.count
                        state.droppedThrough = dropped.commit
                    }
                }
            }
        }
        forwarder.withLock { $0 = task }
    }

    func stop() {
        forwarder.withLock { $0?.cancel() }
    }

    /// The commits after `after`, their rows of `tables` (all when nil),
    /// at most `limit` rows; whether older ones asked for were dropped.
    func commits(after: Int, tables: Set<String>?, limit: Int) -> (commits: [CommitRows], dropped: Bool, more: Bool) {
        state.withLock { state in
            var result: [CommitRows] = []
            var count = 0
            var more = false
            for commit in state.commits where commit.commit > after {
                var commit = commit
                if let tables { commit.changes = commit.changes.filter { tables.contains($0.table.lowercased()) } }
                guard !commit.changes.isEmpty else { continue }
                guard count + commit.changes.count <= limit || result.isEmpty else {
                    more = true
                    break
                }
                count += commit.changes.count
                result.append(commit)
            }
            return (result, after < state.droppedThrough, more)
        }
    }
}
