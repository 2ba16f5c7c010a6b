import Foundation
import SQLiveLocks

#if canImport(Glibc)
    import Glibc
#endif

/// Notices commits by other connections and processes, on a thread of its own.
///
/// One thread does it all, so that nothing on it waits for the session:
/// it blocks in `poll(2)` on its subscription to the events of the
/// database's directory (`DirectoryEvents`: one inotify instance for the
/// process) and on a stop descriptor, and reads `PRAGMA data_version` through its own
/// `DataVersionProbe` when the `ProbeSchedule` says so — at once on each
/// file event, then in a short follow-up, and at the polling interval.
///
/// inotify is a hint and `data_version` the truth: the directory is
/// watched, not the file, because SQLite deletes and re-creates `-wal` and
/// `-journal`, and another process may rename a new file over the
/// database. Writes to `-shm` are invisible (it is memory-mapped), but
/// every WAL commit also writes `-wal`.
///
/// Every reading also compares the database file's modification time and
/// size with the last reading's: a change counts as inotify's word that
/// the file itself was written. That is all the watcher knows of such
/// writes while it has no subscription: for its first `inotifyDelay` (it
/// reads every `gracePoll` meanwhile), and for good when inotify is
/// refused (the per-user limit on instances, 128 by default, is shared
/// with a desktop's file watchers). It subscribes late because the first
/// subscription makes the process's inotify descriptor, and closing one
/// waits for the kernel to free its marks (an SRCU grace period: measured
/// here at 0 to 16 ms, at `close` or at the process's exit), which a
/// one-line `sqlive FILE -c …` would pay at every run.
///
/// Ownership: `start` creates the thread; `stop` (or `deinit`) wakes it
/// and waits until it has exited, cancelled its subscription and closed
/// its connection. The stop pipe closes with the watcher.
final class ExternalChangeWatcher: Sendable {
    /// What the watcher reports.
    enum Finding: Equatable, Sendable {
        /// The data version of the database attached as `schema` changed.
        /// `mayBeLocal`: a commit of the session may explain it (see
        /// `LocalCommitLedger`). `tables`: the tables the commits since the
        /// last finding wrote, read from the WAL (`nil`: unknown).
        case commit(mayBeLocal: Bool, schema: String, tables: Set<String>?)
        /// The database file was deleted or replaced.
        case fileChanged(DatabaseFileChange)
        /// The header or size of the file of `schema` (at `path`) stopped
        /// making sense (seen twice, `DamageCheck.confirmation` apart), or
        /// makes sense again (`nil`).
        case damage(SQLiteFailure?, schema: String, path: String)
        /// The database file itself was written, and no data version
        /// changed: a checkpoint, or someone writing into the file from
        /// outside SQLite. What connections cached of it may be stale.
        case fileWritten
    }

    /// How the watcher learns that a writer is at work.
    enum Mode: Equatable, Sendable {
        /// inotify, with a slow safety poll beside it.
        case inotify(safetyPoll: Duration)
        /// Polling only.
        case polling(Duration)
    }

    /// How long the watcher polls before it subscribes to inotify's events.
    static let inotifyDelay = Duration.milliseconds(50)
    /// How often it reads meanwhile.
    static let gracePoll = Duration.milliseconds(5)
    /// Whether commits are matched by table (WAL mode, wal-index
    /// readable), as of the last reading.
    var precision: ExternalPrecision { precisionState.withLock { $0 } }
    private let precisionState: Locked<ExternalPrecision>
    /// What reading the WAL has cost.
    let statistics = Locked(WALPrecisionStatistics())
    /// Wakes the thread to stop.
    private let stopSignal: WakePipe
    private let exited = DispatchSemaphore(value: 0)
    // Mutable State: guarded by the mutex; `stop` and `deinit` race to join.
    private let joined = Locked(false)

    /// Starts watching. The probe's baseline is read before this returns,
    /// so a commit made right after it is reported.
    ///
    /// - parameter fallbackPolling: the polling interval when inotify is
    ///   unavailable.
    /// - parameter schema: the name the session knows the database by
    ///   (`main`, or an attached database's name).
    /// - parameter walPrecision: whether to read which tables each commit
    ///   wrote from the WAL (`WALChangeTracker`).
    init(
        path: String, schema: String = "main", mode requested: Mode, fallbackPolling: Duration,
        walPrecision: Bool = true, ledger: LocalCommitLedger, rowFeed: RowFeed? = nil,
        emit: @escaping @Sendable (Finding) -> Void
    ) throws(SQLiveError) {
        let probe = try DataVersionProbe(path: path)
        // The log's position is taken before the baseline: a commit in
        // between is read twice, never missed.
        var tracker: WALChangeTracker?
        if walPrecision, probe.fileState()?.isWAL ?? false {
            _ = Self.readWaitingOutLocks(probe)
            tracker = Self.makeTracker(probe, statistics: statistics, rowFeed: rowFeed)
        }
        let precision = Locked(tracker?.isAvailable ?? false ? ExternalPrecision.tables : .all)
        precisionState = precision
        // Read before the baseline: see `LocalCommitLedger`.
        let settled = ledger.settled
        guard case .version(let baseline) = Self.readWaitingOutLocks(probe) else {
            throw .cannotOpen(path: path, reason: "cannot read the data version")
        }
        let status = probe.fileStatus()

        do {
            stopSignal = try WakePipe()
        } catch {
            throw .cannotOpen(path: path, reason: error.description)
        }

        let loop = Loop(
            probe: probe, schema: schema, ledger: ledger, emit: emit, lastVersion: baseline,
            lastIdentity: status?.identity, lastModification: status?.modification,
            lastPermissions: status?.permissions, lastSettled: settled,
            stop: stopSignal.readDescriptor, mode: requested,
            fallbackPolling: fallbackPolling, walPrecision: walPrecision, tracker: tracker, precision: precision,
            statistics: statistics, rowFeed: rowFeed)
        let exited = exited
        let thread = Thread {
            loop.run()
            loop.tracker?.stop()
            loop.events?.cancel()
            exited.signal()
        }
        thread.name = "sqlive.watcher"
        thread.start()
    }

    /// Stops the thread and waits until it has exited. Idempotent.
    func stop() {
        let first = joined.withLock { joined in
            defer { joined = true }
            return !joined
        }
        guard first else { return }
        stopSignal.post()
        exited.wait()
    }

    deinit {
        stop()
    }

    /// A started WAL change tracker for the probe's file, whose page map's
    /// build wakes the watcher to take it (`RowFeed.prepare`).
    fileprivate static func makeTracker(
        _ probe: DataVersionProbe, statistics: Locked<WALPrecisionStatistics>, rowFeed: RowFeed?
    ) -> WALChangeTracker {
        let pipe = rowFeed?.prepare
        let tracker = WALChangeTracker(
            path: probe.path, storage: WALStorage(connection: probe.connection), statistics: statistics,
            mapBuilt: { pipe?.post() })
        tracker.start()
        return tracker
    }

    private static func readWaitingOutLocks(_ probe: DataVersionProbe) -> DataVersionProbe.Reading {
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            let reading = probe.read()
            guard reading == .busy, ContinuousClock.now < deadline else { return reading }
            usleep(1000)
        }
    }
}

extension ExternalChangeWatcher {
    /// The watcher thread's state and loop. Everything here is confined to
    /// that thread (hence `@unchecked Sendable`: it is handed over once).
    private final class Loop: @unchecked Sendable {
        let probe: DataVersionProbe
        let schema: String
        let ledger: LocalCommitLedger
        let emit: @Sendable (Finding) -> Void
        var lastVersion: Int64
        var lastIdentity: DataVersionProbe.FileIdentity?
        /// The database file's modification time and size at the last reading.
        var lastModification: DataVersionProbe.Modification?
        /// The database file's permissions at the last reading.
        var lastPermissions: DataVersionProbe.Permissions?
        /// `ledger.settled` as read before the last successful reading.
        var lastSettled: Int
        /// The directory's events, once subscribed to (nil before, when
        /// polling only, or when inotify was refused).
        private(set) var events: DirectoryEvents.Subscription?
        /// When to make it, and the safety poll to keep beside it; nil once
        /// made or refused, or when polling only.
        var inotifyDue: (at: ContinuousClock.Instant, safetyPoll: Duration)?
        let fallbackPolling: Duration
        let stop: Int32
        var schedule: ProbeSchedule<ContinuousClock.Instant>
        let clock = ContinuousClock()
        var damage = DamageCheck()
        /// Whether writes to the database file were commits'.
        var writes = WriteExplanation<ContinuousClock.Instant>()
        /// Reads which tables commits wrote (WAL mode); created when the
        /// database is first seen in WAL mode. `nil` when not wanted.
        var tracker: WALChangeTracker?
        let walPrecision: Bool
        private let precision: Locked<ExternalPrecision>
        private let statistics: Locked<WALPrecisionStatistics>
        /// Where each commit's changed rows go, when someone subscribed.
        let rowFeed: RowFeed?
        /// Derives rows in a rollback-journal mode, while the feed has a subscriber.
        var rollbackRows: RollbackRowDeriver?
        /// Which tables a rollback-journal commit changed (table precision).
        var rollbackTables: RollbackRowDeriver?

        init(
            probe: DataVersionProbe, schema: String, ledger: LocalCommitLedger,
            emit: @escaping @Sendable (Finding) -> Void,
            lastVersion: Int64, lastIdentity: DataVersionProbe.FileIdentity?,
            lastModification: DataVersionProbe.Modification?, lastPermissions: DataVersionProbe.Permissions?,
            lastSettled: Int, stop: Int32,
            mode: Mode, fallbackPolling: Duration, walPrecision: Bool, tracker: WALChangeTracker?,
            precision: Locked<ExternalPrecision>, statistics: Locked<WALPrecisionStatistics>, rowFeed: RowFeed?
        ) {
            self.rowFeed = rowFeed
            self.statistics = statistics
            self.probe = probe
            self.walPrecision = walPrecision
            self.tracker = tracker
            self.precision = precision
            self.schema = schema
            self.ledger = ledger
            self.emit = emit
            self.lastVersion = lastVersion
            self.lastIdentity = lastIdentity
            self.lastModification = lastModification
            self.lastPermissions = lastPermissions
            // The file as it is now: a later reading that finds it empty
            // knows it held pages.
            if let file = probe.fileState() { damage.noteInitialState(file) }
            self.lastSettled = lastSettled
            self.fallbackPolling = fallbackPolling
            self.stop = stop
            let now = clock.now
            switch mode {
            case .inotify(let safetyPoll):
                inotifyDue = (now + ExternalChangeWatcher.inotifyDelay, safetyPoll)
                schedule = ProbeSchedule(pollInterval: ExternalChangeWatcher.gracePoll, now: now)
            case .polling(let interval):
                schedule = ProbeSchedule(pollInterval: interval, now: now)
            }
        }

        /// Subscribes to the directory's events, then polls at the safety interval
        /// beside it, or at `fallbackPolling` if inotify is refused (no
        /// instances or watches left).
        private func startInotify(safetyPoll: Duration) {
            inotifyDue = nil
            do {
                events = try DirectoryEvents.shared.subscribe(to: probe.path)
                schedule.pollInterval = safetyPoll
            } catch {
                Log.monitor.warning("\(error); polling every \(fallbackPolling) instead")
                schedule.pollInterval = fallbackPolling
            }
        }

        func run() {
            var descriptors = [
                pollfd(fd: stop, events: Int16(POLLIN), revents: 0),
                pollfd(fd: -1, events: Int16(POLLIN), revents: 0),
                pollfd(fd: rowFeed?.prepare?.readDescriptor ?? -1, events: Int16(POLLIN), revents: 0),
            ]
            while true {
                if let due = inotifyDue, clock.now >= due.at {
                    startInotify(safetyPoll: due.safetyPoll)
                    descriptors[1].fd = events?.descriptor ?? -1
                    // What was written before the descriptor existed is read now.
                    read()
                }
                let count = nfds_t(descriptors.count)
                var next = schedule.nextReading()
                if let due = inotifyDue { next = min(next, due.at) }
                let wait = next - clock.now
                let milliseconds: Int32
                if wait >= .milliseconds(1) {
                    milliseconds = Int32(min(wait.milliseconds.rounded(.down), 60_000))
                } else {
                    // poll(2) counts milliseconds: sleep a shorter wait, then look without blocking.
                    if wait > .zero { usleep(UInt32(wait.milliseconds * 1000)) }
                    milliseconds = 0
                }
                let ready = poll(&descriptors, count, milliseconds)
                if ready < 0 && errno != EINTR { return }
                if descriptors[0].revents != 0 { return }
                if let events, descriptors[1].revents != 0 {
                    let events = events.take()
                    if events.database { writes.fileWasWritten(at: clock.now) }
                    if events.relevant { schedule.eventDidArrive(at: clock.now) }
                }
                if descriptors[2].revents != 0 {
                    rowFeed?.prepare?.drain()
                    prepareRows()
                }
                if clock.now >= schedule.nextReading() {
                    read()
                }
            }
        }

        /// Prepares the reading of rows before the next commit (`RowFeed.prepare`):
        /// in WAL mode, a page map built is taken and the wanted tables'
        /// pages read (no commit is read: the next `read` does); in a
        /// rollback-journal file, a table newly wanted is read, so that the
        /// next commit's rows of it are derived — only while no commit
        /// waits that `read` has not taken (a commit that comes during the
        /// reading is delivered: its rows, or its tables unknown).
        private func prepareRows() {
            guard let rowFeed, let wanted = rowFeed.wanted, !probe.isFollowTarget, let file = probe.fileState()
            else { return }
            if file.isWAL {
                guard let tracker, tracker.isAvailable else { return }
                tracker.rowFilter = wanted
                tracker.prepareRows()
                return
            }
            // A commit the watcher has not read yet is left to `read`, which
            // derives it (the wanted tables as they are now).
            guard case .version(let before) = probe.read(file), before == lastVersion else { return }
            do throws(SQLiveError) {
                if rollbackRows == nil { rollbackRows = try RollbackRowDeriver(path: probe.path) }
            } catch {
                return
            }
            let cause: ChangeCause = ledger.started != lastSettled ? .local : .external
            let reads = rollbackRows!.read(wanted)
            guard let first = reads.first else { return }
            if first.from == nil, case .version(let after) = probe.read(), after == lastVersion {
                // A first reading, and no commit since the watcher's last:
                // nothing to tell. (One that came meanwhile may be in the
                // reading: its tables are told unknown, never passed over.)
                return
            }
            for read in reads {
                rowFeed.deliver(cause: cause, from: read.from, to: read.to, derived: wanted, read.changes)
            }
        }

        private func read() {
            let now = clock.now
            let status = probe.fileStatus()
            if status?.identity != lastIdentity {
                let reason: DatabaseFileChange.Reason = status == nil ? .deleted : .replaced
                emit(.fileChanged(DatabaseFileChange(path: probe.path, reason: reason)))
                lastIdentity = status?.identity
                lastPermissions = status?.permissions
            } else if let permissions = status?.permissions, permissions != lastPermissions {
                emit(
                    .fileChanged(
                        DatabaseFileChange.permissionsChanged(probe.path, from: lastPermissions, to: permissions)))
                lastPermissions = permissions
            }
            if status?.modification != lastModification {
                // Written since the last reading, as inotify would have said
                // (if there is a descriptor, it said so already).
                lastModification = status?.modification
                writes.fileWasWritten(at: now)
                schedule.eventDidArrive(at: now)
            }
            let file = probe.fileState()
            if let file {
                switch damage.check(file, walSize: walSize(file), at: now) {
                case .unchanged: break
                case .suspected: schedule.eventDidArrive(at: now)
                case .damaged(let failure): emit(.damage(failure, schema: schema, path: probe.path))
                case .repaired: emit(.damage(nil, schema: schema, path: probe.path))
                }
            }
            let settledBefore = ledger.settled
            let reading = probe.read(file)
            let startedAfter = ledger.started
            switch reading {
            case .version(let version):
                if version != lastVersion {
                    lastVersion = version
                    writes.versionDidChange(at: now)
                    let wanted = rowFeed?.wanted
                    tracker?.rowFilter = wanted
                    if wanted == nil || file?.isWAL == true { rollbackRows = nil }
                    let tables = changedTables(file)
                    if let rowFeed, let wanted {
                        deliverRows(
                            rowFeed, wanted, file: file, cause: startedAfter != lastSettled ? .local : .external)
                        // Pages the row deriver could not copy before this
                        // commit: copied now, before the next one.
                        if file?.isWAL == true, tracker?.rowsLackPages == true { rowFeed.prepare?.post() }
                    }
                    emit(.commit(mayBeLocal: startedAfter != lastSettled, schema: schema, tables: tables))
                } else if writes.versionUnchanged(at: now) {
                    emit(.fileWritten)
                }
                lastSettled = settledBefore
                schedule.didRead(at: now, busy: false)
            case .busy:
                schedule.didRead(at: now, busy: true)
            case .failed(let message):
                Log.monitor.debug("reading data_version: \(message)")
                schedule.didRead(at: now, busy: false)
            }
        }

        /// Hands the feed the changed rows of the commits just read from the
        /// WAL; where they cannot be read (not in WAL mode, no wal-index),
        /// it says that the wanted tables' rows are unknown.
        private func deliverRows(
            _ feed: RowFeed, _ wanted: RowFeedFilter, file: DataVersionProbe.FileState?, cause: ChangeCause
        ) {
            if let tracker, tracker.isAvailable, tracker.rowFilter != nil {
                for commit in tracker.takeDerivedRows() {
                    feed.deliver(
                        cause: cause, from: commit.from, to: commit.to, derived: tracker.rowFilter ?? wanted,
                        commit.changes)
                }
                return
            }
            var reason = "the WAL cannot be read"
            if probe.isFollowTarget {
                // Litestream's batches leave the change counter alone: no
                // reading of the pages can tell one from the next.
                reason = "a Litestream follow target: its rows are not derived"
            } else if file?.isWAL == false {
                do throws(SQLiveError) {
                    if rollbackRows == nil { rollbackRows = try RollbackRowDeriver(path: probe.path) }
                    // Nothing to tell at its first reading (it starts from there).
                    for read in rollbackRows!.read(wanted) {
                        feed.deliver(cause: cause, from: read.from, to: read.to, derived: wanted, read.changes)
                    }
                    count(rollbackRows!, journals: \.rollbackJournalReadings, full: \.rollbackFullReadings)
                    return
                } catch {
                    reason = error.description
                }
            }
            let tables: [String] =
                switch wanted {
                case .all: ["*"]
                case .tables(let names): names.sorted()
                }
            feed.deliver(cause: cause, derived: wanted, tables.map { RowChange.unknown($0, reason: reason) })
        }

        /// Counts a rollback deriver's last reading: from the journals' pages,
        /// or every page.
        private func count(
            _ deriver: RollbackRowDeriver, journals: WritableKeyPath<WALPrecisionStatistics, Int>,
            full: WritableKeyPath<WALPrecisionStatistics, Int>
        ) {
            guard let used = deriver.lastReadUsedJournals else { return }
            statistics.withLock { $0[keyPath: used ? journals : full] += 1 }
        }

        /// The tables the commits since the last reading wrote, from the
        /// WAL; `nil` when unknown (not in WAL mode, or not provable).
        private func changedTables(_ file: DataVersionProbe.FileState?) -> Set<String>? {
            if walPrecision, let file, !file.isWAL {
                return rollbackChangedTables()
            }
            rollbackTables = nil
            guard walPrecision, let file, file.isWAL else {
                precision.withLock { $0 = .all }
                return nil
            }
            guard let tracker else {
                // Now in WAL mode: start from here (this commit refreshes everything).
                let tracker = ExternalChangeWatcher.makeTracker(probe, statistics: statistics, rowFeed: rowFeed)
                self.tracker = tracker
                precision.withLock { $0 = tracker.isAvailable ? .tables : .all }
                return nil
            }
            let changes = tracker.read()
            precision.withLock { $0 = tracker.isAvailable ? .tables : .all }
            switch changes {
            case .tables(let tables): return tables
            case .all: return nil
            }
        }

        /// A rollback-journal file's commit: the tables whose pages it
        /// changed, compared with a copy of every table's pages kept from
        /// the last commit (`RollbackRowDeriver.changedTables`; a file of
        /// 16 MiB at most); `nil` (every live query) when that cannot be said.
        private func rollbackChangedTables() -> Set<String>? {
            if rollbackTables == nil {
                do throws(SQLiveError) {
                    rollbackTables = try RollbackRowDeriver(path: probe.path)
                } catch {
                    precision.withLock { $0 = .all }
                    return nil
                }
            }
            var tables = rollbackTables!.changedTables()
            count(rollbackTables!, journals: \.rollbackTableJournalReadings, full: \.rollbackTableFullReadings)
            // Called for a changed counter: a reading that saw no change read
            // the state before the commit (a writer still writing its pages
            // after its counter), and says nothing of it.
            if tables?.isEmpty == true { tables = nil }
            // The first reading (and a schema change) say nothing; a file too
            // large is not matched by table at all.
            precision.withLock { $0 = rollbackTables!.matchesTables ? .tables : .all }
            return tables
        }

        /// The size of the `-wal` file, in WAL mode (0 otherwise).
        private func walSize(_ file: DataVersionProbe.FileState) -> Int64 {
            guard file.isWAL else { return 0 }
            var info = stat()
            guard stat(probe.path + "-wal", &info) == 0 else { return 0 }
            return Int64(info.st_size)
        }
    }
}
