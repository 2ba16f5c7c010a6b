/// Derives the rows each commit inserted, updated and deleted from the old
/// and new versions of the pages it wrote to the WAL, for any writer.
///
/// A commit's new version of a page is its frame. The old version is the
/// copy the deriver keeps of the wanted tables' pages (read when the feed
/// starts, kept current from every commit's frames, within a budget), else
/// the page's latest frame in an earlier commit of the same generation of
/// the log, else the database file — but only while no checkpoint has begun to
/// copy a frame at or after the commit's first one (`nBackfillAttempted`,
/// read after the page) and the log has not started a new generation.
/// Neither read takes a lock: frames and the file are read through the
/// watcher connection's own open files. A frame read from the log is
/// checked to still be that page's frame of that generation (its header is
/// read after its bytes: SQLite writes a frame's header first).
///
/// For each table a commit wrote, the rows on the old versions of its
/// written b-tree pages are compared with the rows on their new versions,
/// by key: only in the new ones, an insert; only in the old, a delete; in
/// both and different, an update; equal, a row that moved (a split, a
/// rebalance), no change. Every row a commit changed is on a page it wrote
/// (its leaf, or for a `WITHOUT ROWID` table possibly an interior page), and
/// a row that moves is written on its new page in the same commit, so the
/// comparison covers every change.
///
/// Where that does not hold it says so, per table: the old version of a
/// page out of reach (a checkpoint overtook), overflow content rewritten in
/// place without its cell's page, a page that does not read as its b-tree,
/// a commit the page map cannot account for (a schema change, `VACUUM`).
///
/// Not thread-safe: confined to the watcher's thread, like the tracker.
final class WALRowDeriver {
    let storage: WALStorage
    /// Each page's latest frame in the current generation of the log.
    private var frameOf: [UInt32: UInt32] = [:]
    /// The generation `frameOf` covers, and whether it covers it from its
    /// first frame (else a page missing from it may have an earlier frame).
    private var generation: UInt64?
    private var complete = false
    private var buffer: [UInt8] = []
    /// The latest version of the wanted tables' pages (b-tree and overflow
    /// pages), as of the last commit read: the old versions of the next
    /// commit's pages, which no checkpoint can take away.
    private var cache: [UInt32: [UInt8]] = [:]
    private var cachedBytes = 0
    /// The most bytes `cache` holds; pages beyond are read from the log or
    /// the file, as their old versions are needed.
    let cacheBudget: Int
    /// The owners whose pages `cache` was filled with, for the map it was filled from.
    private var cachedOwners = Set<Int32>()
    /// Their pages not copied yet.
    private var missing = Set<UInt32>()
    /// The pages the last commit derived unlinked from a wanted tree
    /// without writing them (`didRead` forgets their copies).
    private var left = Set<UInt32>()

    init(storage: WALStorage, cacheBudget: Int = 256 << 20) {
        self.storage = storage
        self.cacheBudget = cacheBudget
    }

    /// Starts following the log at `position` (the reader's): indexes the
    /// frames of the current generation up to it.
    func start(at position: WALCommitReader.Position?) {
        frameOf = [:]
        complete = false
        generation = nil
        dropCache()
        guard let position else { return }
        generation = position.salt
        let frameSize = WALFormat.frameHeaderSize + position.pageSize
        var header = [UInt8](repeating: 0, count: WALFormat.frameHeaderSize)
        for frame in UInt32(1)...max(1, position.frame) where position.frame > 0 {
            let offset = Int64(WALFormat.headerSize) + Int64(frame - 1) * Int64(frameSize)
            let read = header.withUnsafeMutableBytes { storage.readWAL(into: $0, at: offset) }
            guard read else { return }
            let parsed = header.withUnsafeBytes { WALFormat.FrameHeader($0) }
            guard parsed.salt == position.salt, parsed.pageNumber != 0 else { return }
            frameOf[parsed.pageNumber] = frame
        }
        complete = true
    }

    /// A new generation of the log begins (from its frame 1).
    func generationBegins(_ salt: UInt64) {
        frameOf = [:]
        generation = salt
        complete = true
    }

    /// Records a commit's frames, after its rows were derived, and keeps
    /// the copies current: a page the commit wrote is kept at its new
    /// version while it belongs to a wanted table.
    func didRead(_ commit: CommitPages, salt: UInt64, map: PageMap?, filter: RowFeedFilter) {
        if salt == generation {
            for (page, frame) in commit.frames { frameOf[page] = frame }
        }
        for page in commit.pages {
            let wanted = map.map { Self.isWanted(page, map: $0, filter: filter) } ?? (cache[page] != nil)
            if wanted, let bytes = commit.bytes(of: page) {
                store(page, Array(bytes))
            } else {
                remove(page)
            }
            missing.remove(page)
        }
        // A page freed without being written is no longer the tree's.
        for page in left where commit.bytes(of: page) == nil {
            remove(page)
            missing.remove(page)
        }
        left = []
    }

    /// Whether pages of the wanted tables are not copied yet and would fit
    /// (`fill` is to be called again).
    var lacksPages: Bool { !missing.isEmpty && cachedBytes + 65536 <= cacheBudget }

    /// The map was dropped: a new one numbers its b-trees anew, and `fill`
    /// copies what the cache lacks for it.
    func mapDropped() {
        cachedOwners = []
        missing = []
    }

    /// Forgets the copies (a commit went unread: they may be stale).
    func dropCache() {
        cache = [:]
        cachedBytes = 0
        cachedOwners = []
        missing = []
    }

    private func store(_ page: UInt32, _ bytes: [UInt8]) {
        let previous = cache.updateValue(bytes, forKey: page)
        cachedBytes += bytes.count - (previous?.count ?? 0)
        if cachedBytes > cacheBudget { remove(page) }
    }

    private func remove(_ page: UInt32) {
        if let previous = cache.removeValue(forKey: page) { cachedBytes -= previous.count }
    }

    /// Whether a page belongs to a table the feed reads (its b-tree or an overflow page of it).
    private static func isWanted(_ page: UInt32, map: PageMap, filter: RowFeedFilter) -> Bool {
        switch map.role(of: page) {
        case .btree(let owner), .overflow(let owner):
            guard let layout = map.layouts[owner] else { return false }
            return filter.includes(layout.name)
        default:
            return false
        }
    }

    /// Copies the pages of the wanted tables the cache does not hold yet,
    /// as they are at the reader's position (the map's): from their latest
    /// frames, else the file, within the budget. A page that cannot be read
    /// now (a checkpoint is copying later frames) is tried again at the next
    /// reading.
    func fill(_ map: PageMap, filter: RowFeedFilter, position: WALCommitReader.Position?) {
        guard let position, position.salt == generation, complete else { return }
        let owners = Set(map.layouts.filter { filter.includes($0.value.name) }.keys)
        if owners != cachedOwners {
            cachedOwners = owners
            missing = []
            for page in UInt32(1)...UInt32(max(1, map.pageCount)) where map.pageCount > 0 && cache[page] == nil {
                switch map.role(of: page) {
                case .btree(let owner), .overflow(let owner):
                    if owners.contains(owner) { missing.insert(page) }
                default:
                    continue
                }
            }
        }
        guard !missing.isEmpty else { return }
        // Pages not in the log come from the file, which holds them as of
        // the position only while no checkpoint of a later frame began
        // (`current` asks after each read): when one has, or the log began
        // a generation the position has not reached, none is tried.
        let fileReadable =
            storage.checkpointState().map { $0.salt == position.salt && $0.backfillAttempted <= position.frame }
            ?? false
        for page in missing.sorted() {
            guard cachedBytes + map.pageSize <= cacheBudget else { return }
            if !fileReadable, frameOf[page] == nil { continue }
            // As of the next commit: its first frame follows the position.
            guard let bytes = current(page, salt: position.salt, nextFrame: position.frame + 1, pageSize: map.pageSize)
            else { continue }
            store(page, bytes)
            missing.remove(page)
        }
    }

    /// What the map knew of a commit's pages before it applied it.
    struct Before {
        /// The roles of the pages the commit wrote.
        var roles: [UInt32: PageMap.Role]
        /// The file's size in pages before the commit.
        var pageCount: Int

        subscript(page: UInt32) -> PageMap.Role? { roles[page] }
    }

    /// The roles the map gives the pages a commit wrote, before it applies it.
    static func roles(of commit: CommitPages, in map: PageMap) -> Before {
        var roles: [UInt32: PageMap.Role] = [:]
        for page in commit.pages { roles[page] = map.role(of: page) }
        return Before(roles: roles, pageCount: map.pageCount)
    }

    // MARK: - Reading pages

    /// A page as it was before the commit (the commit did not write it, or
    /// its version before the commit's): from an earlier frame of this
    /// generation, else from the database file; `nil` when out of reach.
    private func before(_ page: UInt32, commit: CommitPages, salt: UInt64, pageSize: Int) -> [UInt8]? {
        if let copy = cache[page] { return copy }
        return current(page, salt: salt, nextFrame: commit.firstFrame, pageSize: pageSize)
    }

    /// A page as the log and the file have it before frame `nextFrame`.
    private func current(_ page: UInt32, salt: UInt64, nextFrame: UInt32, pageSize: Int) -> [UInt8]? {
        guard salt == generation else { return nil }
        if let frame = frameOf[page] {
            return framePage(frame, page: page, salt: salt, pageSize: pageSize)
        }
        guard complete else { return nil }
        buffer = [UInt8](repeating: 0, count: pageSize)
        let read = buffer.withUnsafeMutableBytes { storage.readDatabase(into: $0, page: page) }
        // Read first, then asked: had a checkpoint begun to copy frames
        // from `nextFrame` on, the page may be newer.
        guard read, let state = storage.checkpointState(), state.salt == salt,
            state.backfillAttempted < nextFrame
        else { return nil }
        return buffer
    }

    private func framePage(_ frame: UInt32, page: UInt32, salt: UInt64, pageSize: Int) -> [UInt8]? {
        let offset = Int64(WALFormat.headerSize) + Int64(frame - 1) * Int64(WALFormat.frameHeaderSize + pageSize)
        var bytes = [UInt8](repeating: 0, count: pageSize)
        guard bytes.withUnsafeMutableBytes({ storage.readWAL(into: $0, at: offset + 24) }) else { return nil }
        var header = [UInt8](repeating: 0, count: WALFormat.frameHeaderSize)
        guard header.withUnsafeMutableBytes({ storage.readWAL(into: $0, at: offset) }) else { return nil }
        let parsed = header.withUnsafeBytes { WALFormat.FrameHeader($0) }
        guard parsed.salt == salt, parsed.pageNumber == page else { return nil }
        return bytes
    }

    // MARK: - Deriving

    /// The changed rows of one commit, for the tables `filter` includes.
    ///
    /// - parameter before: the roles of the commit's pages before the map
    ///   applied it (`roles(of:in:)`); `nil` when there was no map.
    /// - parameter map: the map after it applied the commit; `nil` when it
    ///   could not (its reason in `failure`).
    func derive(
        _ commit: CommitPages, salt: UInt64, before: Before?, map: PageMap?, failure: String?,
        filter: RowFeedFilter, knownTables: [String]
    ) -> [RowChange] {
        guard let before, let map else {
            return Self.unknown(filter: filter, knownTables: knownTables, reason: failure ?? "no page map yet")
        }
        let pageSize = map.pageSize
        let usable = map.usableSize
        let pageCount = commit.pageCount
        let written = commit.pages.filter { $0 <= pageCount }
        // Before the commit the file may have had more or fewer pages; every
        // page a pointer names lies within the larger of the two sizes.
        let bound = max(pageCount, UInt32(map.pageCount), UInt32(before.pageCount))

        /// Whether the owner is a table whose rows the feed reads, and its layout.
        func layout(_ owner: Int32) -> TableLayout? {
            guard let layout = map.layouts[owner], filter.includes(layout.name) else { return nil }
            return layout
        }

        var unknown: [String: String] = [:]
        var oldRows: [Int32: [RowKey: [SQLValue]]] = [:]
        var newRows: [Int32: [RowKey: [SQLValue]]] = [:]
        var covered = Set<UInt32>()
        // Pages that left a wanted tree without being written (now free).
        var left = Set<UInt32>()

        func collect(
            _ bytes: [UInt8], page: UInt32, owner: Int32, layout: TableLayout,
            into rows: inout [Int32: [RowKey: [SQLValue]]],
            readPage: (UInt32) -> [UInt8]?
        ) {
            let read = bytes.withUnsafeBytes {
                BTreeCells.read($0, page: page, usableSize: usable, pageCount: bound, readPage: readPage)
            }
            switch read {
            case .failure(.notBTree):
                unknown[layout.name] = unknown[layout.name] ?? "page \(page) does not read as a page of its b-tree"
            case .failure(.overflowUnreadable(let overflow)):
                unknown[layout.name] =
                    unknown[layout.name] ?? "overflow page \(overflow) is out of reach (a checkpoint overtook)"
            case .failure(.tooLarge):
                unknown[layout.name] = unknown[layout.name] ?? "\(BTreeCells.tooLargeReason) (page \(page))"
            case .success(let cells):
                covered.formUnion(cells.overflowPages)
                for cell in cells.cells {
                    guard let (key, values) = layout.row(cell, encoding: map.encoding) else {
                        unknown[layout.name] = unknown[layout.name] ?? "a row of page \(page) cannot be read"
                        return
                    }
                    if rows[owner, default: [:]].updateValue(values, forKey: key) != nil {
                        unknown[layout.name] = unknown[layout.name] ?? "a row appears twice"
                    }
                }
            }
        }

        let readBefore = { (page: UInt32) in self.before(page, commit: commit, salt: salt, pageSize: pageSize) }
        let readAfter = { (page: UInt32) -> [UInt8]? in
            if let bytes = commit.bytes(of: page) { return Array(bytes) }
            return self.before(page, commit: commit, salt: salt, pageSize: pageSize)
        }
        // Each wanted b-tree's changed region, in both versions: the pages
        // the commit wrote, and the pages that left or joined the tree
        // without being written (`region`).
        var oldSeeds: [Int32: [UInt32]] = [:]
        var newSeeds: [Int32: [UInt32]] = [:]
        for page in commit.pages {
            // A page past the new end (the file shrank) was in the old tree only.
            if case .btree(let owner) = before[page] ?? .unknown, layout(owner) != nil {
                oldSeeds[owner, default: []].append(page)
            }
            if page <= pageCount, case .btree(let owner) = map.role(of: page), layout(owner) != nil {
                newSeeds[owner, default: []].append(page)
            }
        }
        for owner in Set(oldSeeds.keys).union(newSeeds.keys).sorted() {
            guard let layout = layout(owner) else { continue }
            let changed = region(
                old: oldSeeds[owner] ?? [], new: newSeeds[owner] ?? [], commit: commit, usable: usable, bound: bound,
                readBefore: readBefore, readAfter: readAfter)
            switch changed {
            case .failure(let failure):
                unknown[layout.name] = unknown[layout.name] ?? failure.reason
            case .success(let pages):
                for (page, bytes) in pages.old {
                    collect(bytes, page: page, owner: owner, layout: layout, into: &oldRows, readPage: readBefore)
                }
                for (page, bytes) in pages.new {
                    collect(bytes, page: page, owner: owner, layout: layout, into: &newRows, readPage: readAfter)
                }
                left.formUnion(pages.left)
            }
        }
        // Overflow content rewritten in place (SQLite overwrites a payload of
        // the same size where it differs): its cell's page was not written.
        // The cell is found among the copies of the table's pages, and its
        // page read in both versions.
        for page in written where !covered.contains(page) {
            for role in [before[page] ?? .unknown, map.role(of: page)] {
                guard case .overflow(let owner) = role, let layout = layout(owner), !covered.contains(page) else {
                    continue
                }
                if let cellPage = cellPage(spillingInto: page, owner: owner, map: map, bound: bound),
                    !written.contains(cellPage), let bytes = cache[cellPage]
                {
                    collect(bytes, page: cellPage, owner: owner, layout: layout, into: &oldRows, readPage: readBefore)
                    collect(bytes, page: cellPage, owner: owner, layout: layout, into: &newRows, readPage: readAfter)
                } else {
                    unknown[layout.name] = unknown[layout.name] ?? "overflow content was rewritten in place"
                }
            }
        }
        // Tables the feed cannot read rows of (a virtual table's shadow
        // tables, a b-tree with no layout) that the commit wrote.
        for page in written {
            for role in [before[page] ?? .unknown, map.role(of: page)] {
                guard case .btree(let owner) = role else { continue }
                let tree = map.owners[Int(owner)]
                // A table's own b-tree with a layout is read as rows; an
                // index (named after no table it stands for, no layout)
                // changes with its table. A shadow table (a layout, named
                // after no table it stands for) or a table with no layout is not.
                guard tree.tables.contains(tree.name) == (map.layouts[owner] == nil) else { continue }
                for table in tree.tables where filter.includes(table) && unknown[table] == nil {
                    unknown[table] = "the rows of \(table) are not stored in a table sqlive can read"
                }
            }
        }

        self.left = left
        var changes: [RowChange] = []
        for owner in Set(oldRows.keys).union(newRows.keys).sorted() {
            guard let layout = map.layouts[owner], unknown[layout.name] == nil else { continue }
            changes += Self.compare(oldRows[owner] ?? [:], newRows[owner] ?? [:], layout: layout)
        }
        for (table, reason) in unknown.sorted(by: { $0.key < $1.key }) {
            changes.append(.unknown(table, reason: reason))
        }
        return changes
    }

    /// A b-tree's changed region: the pages whose rows, in the old version
    /// against the new, are the commit's changes to it.
    struct Region {
        /// Old versions: pages of the tree before the commit.
        var old: [(UInt32, [UInt8])] = []
        /// New versions: pages of the tree after it.
        var new: [(UInt32, [UInt8])] = []
        /// Pages that left the tree without being written.
        var left: [UInt32] = []
    }

    /// The changed region of one b-tree, from the pages the commit wrote
    /// that the map puts in it before (`old`) and after (`new`).
    ///
    /// What the file format proves: only a written page can link, unlink
    /// or move a page, so a page the commit did not write that is a child
    /// of a written page in both versions holds the same subtree in both
    /// (its descendants the commit wrote are in both seeds). A page the
    /// commit did not write that is a child of the region's old pages and
    /// not of its new ones left the tree with its subtree — freed with its
    /// content (`secure_delete=OFF`), truncated away, or moved by
    /// `incremental_vacuum` or auto-vacuum, whose copy the commit wrote —
    /// and joins the old side; likewise a page that joined the tree
    /// (a subtree whose parent was freed, moved under a written page)
    /// joins the new side. The region grows until no such page is left:
    /// every other page of either tree is a page of both, unchanged, so the
    /// rows of the old side against the new are exactly the commit's
    /// changes. A page of the region whose version is out of reach, or
    /// that does not read as a b-tree page, makes the table unknown.
    private func region(
        old oldSeeds: [UInt32], new newSeeds: [UInt32], commit: CommitPages, usable: Int, bound: UInt32,
        readBefore: (UInt32) -> [UInt8]?, readAfter: (UInt32) -> [UInt8]?
    ) -> Result<Region, RegionFailure> {
        var region = Region()
        var oldPages = Set<UInt32>()
        var newPages = Set<UInt32>()
        // Children of each side's interior pages.
        var oldChildren = Set<UInt32>()
        var newChildren = Set<UInt32>()

        func children(_ bytes: [UInt8], page: UInt32) -> [UInt32]? {
            bytes.withUnsafeBytes { raw -> [UInt32]? in
                let start = page == 1 ? 100 : 0
                guard raw.count > start, let kind = BTreePage.Kind(rawValue: raw[start]) else { return nil }
                guard kind.isInterior else { return [] }
                return BTreePage(raw, page: page, usableSize: usable, pageCount: bound)?.children
            }
        }
        func add(_ page: UInt32, old: Bool) -> RegionFailure? {
            guard let bytes = old ? readBefore(page) : readAfter(page) else {
                return RegionFailure(
                    reason: "the \(old ? "old" : "new") version of page \(page) is out of reach (a checkpoint overtook)"
                )
            }
            guard let below = children(bytes, page: page) else {
                return RegionFailure(reason: "page \(page) does not read as a page of its b-tree")
            }
            if old {
                oldPages.insert(page)
                region.old.append((page, bytes))
                oldChildren.formUnion(below)
            } else {
                newPages.insert(page)
                region.new.append((page, bytes))
                newChildren.formUnion(below)
            }
            return nil
        }
        for page in oldSeeds { if let failure = add(page, old: true) { return .failure(failure) } }
        for page in newSeeds { if let failure = add(page, old: false) { return .failure(failure) } }
        func unwritten(_ page: UInt32) -> Bool { commit.bytes(of: page) == nil }
        // Until it settles, a child joins its side when the commit wrote it
        // (its role was not the tree's), or it is a child on that side only,
        // or it is in the other side already (an unwritten page in both
        // sides reads the same in both: its rows cancel out).
        while true {
            let joiningOld = oldChildren.subtracting(oldPages).filter {
                !unwritten($0) || !newChildren.contains($0) || newPages.contains($0)
            }
            let joiningNew = newChildren.subtracting(newPages).filter {
                !unwritten($0) || !oldChildren.contains($0) || oldPages.contains($0)
            }
            if joiningOld.isEmpty && joiningNew.isEmpty { break }
            for page in joiningOld.sorted() {
                if let failure = add(page, old: true) { return .failure(failure) }
            }
            for page in joiningNew.sorted() {
                if let failure = add(page, old: false) { return .failure(failure) }
            }
        }
        region.left = oldPages.filter { unwritten($0) && !newChildren.contains($0) }.sorted()
        return .success(region)
    }

    struct RegionFailure: Error {
        var reason: String
    }

    /// Every wanted table unknown, for `reason`: the tables of the last map
    /// (`knownTables`), else those the filter names, else `*` (no map was
    /// ever built: the tables are not known either, but the commit is not
    /// dropped).
    static func unknown(filter: RowFeedFilter, knownTables: [String], reason: String) -> [RowChange] {
        guard knownTables.isEmpty else {
            return knownTables.filter(filter.includes).map { RowChange.unknown($0, reason: reason) }
        }
        switch filter {
        case .all: return [RowChange.unknown("*", reason: reason)]
        case .tables(let names): return names.sorted().map { RowChange.unknown($0, reason: reason) }
        }
    }

    /// The changes between a table's rows on the old and the new versions
    /// of the same pages, by key, in key order: only in the new ones, an
    /// insert; only in the old ones, a delete; in both and different, an
    /// update; in both and equal, a row that moved (no change).
    static func compare(
        _ old: [RowKey: [SQLValue]], _ new: [RowKey: [SQLValue]], layout: TableLayout
    ) -> [RowChange] {
        var rows: [RowChange] = []
        func change(_ operation: RowChange.Operation, _ key: RowKey, _ before: [SQLValue]?, _ after: [SQLValue]?) {
            rows.append(
                RowChange(
                    table: layout.name, operation: operation, key: key, keyNames: layout.keyNames,
                    columns: layout.columns, old: before, new: after))
        }
        for (key, values) in old {
            if let after = new[key] {
                if after != values { change(.update, key, values, after) }
            } else {
                change(.delete, key, values, nil)
            }
        }
        for (key, values) in new where old[key] == nil { change(.insert, key, nil, values) }
        return rows.sorted { $0.key!.sortsBefore($1.key!) }
    }

    /// The page (among the copies) whose cell's payload spills into
    /// `overflow`, following each chain of the owner's cells through the
    /// copies; `nil` when none does (or a page it needs is not copied).
    private func cellPage(spillingInto overflow: UInt32, owner: Int32, map: PageMap, bound: UInt32) -> UInt32? {
        for (page, bytes) in cache {
            guard case .btree(owner) = map.role(of: page) else { continue }
            let node = bytes.withUnsafeBytes {
                BTreePage($0, page: page, usableSize: map.usableSize, pageCount: bound)
            }
            for first in node?.overflows ?? [] {
                var next = first
                var steps = 0
                while next != 0, steps <= cache.count {
                    if next == overflow { return page }
                    guard let link = cache[next] else { break }
                    next = link.withUnsafeBytes { $0.bigEndianUInt32(at: 0) }
                    steps += 1
                }
            }
        }
        return nil
    }

}

extension RowKey {
    /// An order for a commit's changes: rowids ascending; primary keys by
    /// their values' text.
    func sortsBefore(_ other: RowKey) -> Bool {
        switch (self, other) {
        case (.rowid(let a), .rowid(let b)): a < b
        case (.primaryKey(let a), .primaryKey(let b)): "\(a)" < "\(b)"
        case (.rowid, .primaryKey): true
        case (.primaryKey, .rowid): false
        }
    }
}
