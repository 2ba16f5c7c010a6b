import Glibc
import SQLiveLocks

/// Tells which tables the commits since its last reading changed, from
/// the WAL — or that it cannot tell, and every live query must refresh.
///
/// It owns a `WALCommitReader` (where it stands in the log), the current
/// `PageMap`, and a `PageMapBuilder`. Each reading applies every new
/// commit's written pages to the map; the union of their tables is the
/// answer. When a commit cannot be proven (see `PageMap.apply` and
/// `WALCommitReader`), the answer is `all` and the map is rebuilt in the
/// background; until the new map is installed, answers are `all`.
///
/// A map is built as of a snapshot of the log. It is installed when the
/// reading reaches that snapshot: at once when they coincide, after
/// re-reading the frames between them when the map is behind, or during a
/// later reading when the map is ahead.
///
/// Not thread-safe (but `statistics`): confined to the `ExternalChangeWatcher`'s thread,
/// which owns the connection `storage` reads through.
final class WALChangeTracker {
    enum Changes: Equatable {
        case tables(Set<String>)
        case all(String)
    }

    let storage: WALStorage
    let builder: PageMapBuilder
    private var reader = WALCommitReader()
    private(set) var map: PageMap?
    /// A built map waiting for the reading to reach its snapshot.
    private var waiting: PageMap?
    /// Why the map is missing (for logs and tests).
    private(set) var lastFallback: String?

    /// What reading has cost, shared with the watcher's owner.
    let statistics: Locked<WALPrecisionStatistics>

    /// The tables whose changed rows to derive from each commit read
    /// (`WALRowDeriver`); `nil`: none (the change feed has no subscriber).
    var rowFilter: RowFeedFilter?
    private var deriver: WALRowDeriver?
    /// Each commit's changed rows, since `takeDerivedRows`.
    private var derived: [DerivedCommit] = []

    /// One commit's changed rows, with the wal-index change counter before
    /// and after it (`nil` when unknown).
    struct DerivedCommit {
        var from: FilePosition?
        var to: FilePosition?
        var changes: [RowChange]
    }
    /// The tables of the last map, for a commit whose rows are unknown
    /// while there is no map.
    private var knownTables: [String] = []

    /// - parameter mapBuilt: called on the build's thread when a page map
    ///   is built (the watcher then takes it: `prepareRows`).
    init(
        path: String, storage: WALStorage, statistics: Locked<WALPrecisionStatistics> = Locked(.init()),
        mapBuilt: (@Sendable () -> Void)? = nil
    ) {
        self.storage = storage
        self.statistics = statistics
        builder = PageMapBuilder(path: path, statistics: statistics, built: mapBuilt)
    }

    /// Takes the log's position now (before the watcher's baseline), and
    /// asks for a map.
    func start() {
        _ = reader.read(storage) { _ in }
        builder.request()
    }

    func stop() {
        builder.stop()
    }

    /// Whether the last reading could read the wal-index (the database is in WAL mode).
    var isAvailable: Bool { reader.position != nil }

    /// Reads every commit since the last reading; the tables they changed.
    func read() -> Changes {
        let started = Self.threadCPUTime()
        let changes = readCommits()
        let elapsed = Self.threadCPUTime() - started
        statistics.withLock { statistics in
            statistics.readings += 1
            statistics.readNanoseconds += elapsed
            if case .all = changes { statistics.fallbacks += 1 }
        }
        return changes
    }

    /// The changed rows of each commit the readings since the last call
    /// read, in order (with `rowFilter` set).
    func takeDerivedRows() -> [DerivedCommit] {
        defer { derived = [] }
        return derived
    }

    /// Takes a map built, and reads the wanted tables' pages the row
    /// deriver keeps (`WALRowDeriver.fill`), as of the last commit read:
    /// what each reading does first. Reads no commit: called between
    /// commits too, so that the next one's rows are not held up by it.
    func prepareRows() {
        takeBuiltMap()
        if rowFilter == nil {
            deriver = nil
        } else if deriver == nil {
            deriver = WALRowDeriver(storage: storage)
            deriver!.start(at: reader.position)
        }
        if let deriver, let rowFilter, let map { deriver.fill(map, filter: rowFilter, position: reader.position) }
    }

    /// Whether the row deriver still lacks pages of the wanted tables
    /// (`prepareRows` is to be called again, between commits).
    var rowsLackPages: Bool { deriver?.lacksPages ?? false }

    private func readCommits() -> Changes {
        prepareRows()
        var tables = Set<String>()
        var fallback: String?
        var commits = 0
        var frames = 0
        // Each commit adds one to the wal-index's change counter.
        let startChange = reader.position?.change
        defer {
            statistics.withLock {
                $0.commits += commits
                $0.frames += frames
            }
        }
        // A commit read after the log began a new generation stands only if
        // the reading proves it read every commit since the last one
        // (`.read`): one derived after a commit that went unread (the new
        // generation overwrote it) was compared with pages older than its
        // own old versions, and would hold the unread commits' rows too.
        // The commits read before it are checksummed one after the other
        // from the last position: they stand.
        var newGenerationAt: Int?
        let outcome = reader.read(storage) { event in
            switch event {
            case .generation(let salt):
                newGenerationAt = newGenerationAt ?? derived.count
                deriver?.generationBegins(salt)
                if let waiting, waiting.snapshot.salt == salt, waiting.snapshot.frame == 0 { install() }
            case .commit(let pages, let salt, let frame):
                commits += 1
                frames += pages.pages.count
                let before = deriver == nil ? nil : map.map { WALRowDeriver.roles(of: pages, in: $0) }
                var failure: String?
                if map != nil {
                    switch map!.apply(pages) {
                    case .tables(let changed):
                        tables.formUnion(changed)
                    case .unprovable(let reason):
                        fallback = fallback ?? reason
                        failure = reason
                        dropMap(reason)
                    }
                } else {
                    fallback = fallback ?? (lastFallback ?? "no page map yet")
                    failure = lastFallback ?? "no page map yet"
                }
                if let deriver, let rowFilter {
                    let to = startChange.map { FilePosition(wal: true, value: $0 &+ UInt32(commits)) }
                    derived.append(
                        DerivedCommit(
                            from: to.map { FilePosition(wal: true, value: $0.value &- 1) }, to: to,
                            changes: deriver.derive(
                                pages, salt: salt, before: before, map: map, failure: failure, filter: rowFilter,
                                knownTables: knownTables)))
                    deriver.didRead(pages, salt: salt, map: map, filter: rowFilter)
                }
                if let waiting, waiting.snapshot.salt == salt, waiting.snapshot.frame == frame { install() }
            }
        }
        if let waiting, !isAhead(waiting.snapshot) {
            // The reading passed the map's snapshot without meeting it.
            self.waiting = nil
            builder.request()
        }
        switch outcome {
        case .read:
            if let fallback { return .all(fallback) }
            if map != nil { map!.snapshot = snapshot(of: reader.position) ?? map!.snapshot }
            return .tables(tables)
        case .unprovable(let reason):
            dropMap(reason)
            // Commits may have gone unread: their rows are unknown, and
            // those of the commits of the new generation read after them.
            derived.removeSubrange((newGenerationAt ?? derived.count)...)
            if let rowFilter, deriver != nil {
                derived.append(
                    DerivedCommit(
                        from: nil, to: nil,
                        changes: WALRowDeriver.unknown(
                            filter: rowFilter, knownTables: knownTables, reason: "the WAL could not be read: \(reason)")
                    ))
                deriver!.start(at: reader.position)
            }
            return .all(reason)
        }
    }

    /// The calling thread's CPU time in nanoseconds (what a reading costs,
    /// not how long the thread waited for a core).
    static func threadCPUTime() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// Installs a finished build: at once, after catching up, or later.
    private func takeBuiltMap() {
        guard map == nil, waiting == nil, let built = builder.take() else { return }
        switch built {
        case .failure(let failure):
            lastFallback = "the page map cannot be built: \(failure.message)"
            Log.monitor.debug("\(lastFallback!)")
        case .success(var built):
            guard let position = reader.position else {
                builder.request()
                return
            }
            let snapshot = built.snapshot
            if snapshot.salt == position.salt && snapshot.frame == position.frame {
                knownTables = built.layouts.values.map(\.name).sorted()
                map = built
            } else if snapshot.salt == position.salt && snapshot.frame < position.frame {
                // Behind: apply the frames between the map and the reader.
                var catchUp = WALCommitReader(
                    position: WALCommitReader.Position(
                        snapshot, pageSize: built.pageSize, bigEndianChecksum: position.bigEndianChecksum))
                var failure: String?
                let outcome = catchUp.read(storage, upTo: position) { event in
                    guard case .commit(let pages, _, _) = event, failure == nil else { return }
                    if case .unprovable(let reason) = built.apply(pages) { failure = reason }
                }
                if failure == nil, case .read = outcome {
                    built.snapshot = self.snapshot(of: position)!
                    knownTables = built.layouts.values.map(\.name).sorted()
                    map = built
                } else {
                    builder.request()
                }
            } else if isAhead(snapshot) {
                waiting = built
            } else {
                builder.request()
            }
        }
    }

    /// Whether a snapshot is later than the reader's position (same
    /// generation, a later frame; or the generation the wal-index shows now).
    private func isAhead(_ snapshot: PageMap.Snapshot) -> Bool {
        guard let position = reader.position else { return false }
        if snapshot.salt == position.salt { return snapshot.frame > position.frame }
        return storage.indexHeader()?.salt == snapshot.salt
    }

    private func install() {
        knownTables = waiting.map { $0.layouts.values.map(\.name).sorted() } ?? knownTables
        map = waiting
        waiting = nil
        lastFallback = nil
    }

    private func dropMap(_ reason: String) {
        deriver?.mapDropped()
        if map != nil { Log.monitor.debug("WAL precision falls back: \(reason)") }
        map = nil
        waiting = nil
        lastFallback = reason
        builder.request()
    }

    private func snapshot(of position: WALCommitReader.Position?) -> PageMap.Snapshot? {
        position.map {
            PageMap.Snapshot(salt: $0.salt, frame: $0.frame, change: $0.change, frameChecksum: $0.checksum)
        }
    }
}
