/// Which table owns each page of a database: the page → table map that
/// turns the pages a commit wrote into the tables it changed.
///
/// Built from `dbstat` (`PageMapBuilder`), then kept current from the
/// written pages themselves: a page a commit wrote belongs to the b-tree
/// of the written page that points to it, else to the b-tree the map
/// knew it in. Every new page a commit allocates is pointed to by a page
/// the same commit wrote (its parent, the cell whose payload spills into
/// it, the overflow page before it), so only pages whose owner did not
/// change are looked up.
///
/// `apply` answers the tables a commit changed, or that it cannot prove
/// them — a schema change, a page nothing accounts for, a page whose
/// kind contradicts its owner — and then the map is no longer trusted.
struct PageMap {
    /// What the map knows of a page.
    enum Role: Hashable {
        /// Beyond the map's knowledge (past the end of the file when it was built).
        case unknown
        /// On the freelist (trunk or leaf), or the pending-byte page.
        case free
        /// Page 1: the database header, and the root of `sqlite_schema`.
        case header
        /// A pointer-map page (auto-vacuum databases).
        case pointerMap
        /// A page of a b-tree (`owner` indexes `owners`).
        case btree(owner: Int32)
        /// An overflow page of a b-tree's payload.
        case overflow(owner: Int32)
    }

    /// A b-tree the map knows.
    struct Owner: Hashable {
        /// Its name in `sqlite_schema` (a table or an index).
        var name: String
        /// The tables it stands for, lowercased: an index its table, a
        /// virtual table's shadow table its virtual table,
        /// `sqlite_schema` both of its names.
        var tables: [String]
        /// Whether its pages are table (rowid) pages; `nil` until one is read.
        var isTableTree: Bool?
    }

    /// Where the map stands in the WAL: it includes every commit up to this frame.
    struct Snapshot: Equatable {
        var salt: UInt64
        var frame: UInt32
        var change: UInt32
        var frameChecksum: WALFormat.Checksum
    }

    private(set) var roles: [Role]
    private(set) var owners: [Owner]
    /// How the tables' rows are stored, by owner (tables only, not their
    /// indexes), as of the map's schema: what `WALRowDeriver` reads rows with.
    let layouts: [Int32: TableLayout]
    /// How text is stored.
    let encoding: SQLiteRecord.TextEncoding
    /// The schema cookie (offset 40 of page 1).
    let cookie: UInt32
    let pageSize: Int
    let usableSize: Int
    let autoVacuum: Bool
    var snapshot: Snapshot

    /// The owner of `sqlite_schema`.
    static let schemaOwner: Int32 = 0

    init(
        pageCount: Int, owners: [Owner], pages: [(page: UInt32, role: Role)], cookie: UInt32, pageSize: Int,
        usableSize: Int, autoVacuum: Bool, snapshot: Snapshot, layouts: [Int32: TableLayout] = [:],
        encoding: SQLiteRecord.TextEncoding = .utf8
    ) {
        self.layouts = layouts
        self.encoding = encoding
        roles = Array(repeating: .free, count: pageCount + 1)
        roles[0] = .unknown
        self.owners = owners
        self.cookie = cookie
        self.pageSize = pageSize
        self.usableSize = usableSize
        self.autoVacuum = autoVacuum
        self.snapshot = snapshot
        for (page, role) in pages where Int(page) < roles.count { roles[Int(page)] = role }
        if pageCount >= 1 { roles[1] = .header }
        for page in 2..<max(2, roles.count) where isPointerMap(UInt32(page)) { roles[page] = .pointerMap }
        let pending = Self.pendingBytePage(pageSize)
        if Int(pending) < roles.count { roles[Int(pending)] = .free }
    }

    var pageCount: Int { roles.count - 1 }

    func role(of page: UInt32) -> Role {
        Int(page) < roles.count ? roles[Int(page)] : .unknown
    }

    /// The page holding the byte at offset 2^30 (never used).
    static func pendingBytePage(_ pageSize: Int) -> UInt32 {
        UInt32(0x4000_0000 / pageSize + 1)
    }

    /// Whether a page is a pointer-map page (`ptrmapPageno` in `btree.c`).
    func isPointerMap(_ page: UInt32) -> Bool {
        guard autoVacuum, page >= 2 else { return false }
        let perMap = UInt32(usableSize / 5 + 1)
        var mapPage = (page - 2) / perMap * perMap + 2
        if mapPage == Self.pendingBytePage(pageSize) { mapPage += 1 }
        return mapPage == page
    }

    /// How many pages are free (the pending-byte page aside).
    var freePageCount: Int {
        let pending = Int(Self.pendingBytePage(pageSize))
        return roles.indices.dropFirst().filter { roles[$0] == .free && $0 != pending }.count
    }

    /// Every table whose pages the map holds (for tests).
    func tables(of role: Role) -> [String] {
        switch role {
        case .btree(let owner), .overflow(let owner): owners[Int(owner)].tables
        default: []
        }
    }

    // MARK: - Applying a commit

    enum Outcome: Equatable {
        /// The tables the commit changed (lowercased).
        case tables(Set<String>)
        /// The commit's tables cannot be proven: refresh everything, rebuild the map.
        case unprovable(String)
    }

    /// Applies one commit's written pages; answers the tables it changed.
    mutating func apply(_ commit: CommitPages) -> Outcome {
        let pageCount = commit.pageCount
        guard pageCount >= 1 else { return .unprovable("an empty database") }
        // Page 1: the header. A new schema cookie is a schema change.
        var trunks = Set<UInt32>()
        if let first = commit.bytes(of: 1) {
            let newCookie = first.bigEndianUInt32(at: 40)
            guard newCookie == cookie else { return .unprovable("the schema changed") }
            let rawPageSize = Int(first.bigEndianUInt16(at: 16))
            guard (rawPageSize == 1 ? 65536 : rawPageSize) == pageSize, pageSize - Int(first[20]) == usableSize
            else { return .unprovable("the page size changed") }
            // The freelist's trunk pages this commit wrote: the first one
            // (named by page 1), and those it links to, while written.
            var trunk = first.bigEndianUInt32(at: 32)
            while trunk != 0, trunk <= pageCount, !trunks.contains(trunk), let bytes = commit.bytes(of: trunk) {
                trunks.insert(trunk)
                trunk = bytes.bigEndianUInt32(at: 0)
            }
        }
        let written = commit.pages.filter { $0 <= pageCount }
        // The leaves the written trunks list are free. A page freed without
        // being written (`secure_delete=OFF`, upstream SQLite's default,
        // leaves its content as it was) is listed on the first trunk, which
        // the commit writes, with page 1's free-page count: without this,
        // the map would keep it as its old b-tree's page.
        var freeLeaves = Set<UInt32>()
        for trunk in trunks {
            guard let bytes = commit.bytes(of: trunk) else { continue }
            let count = Int(bytes.bigEndianUInt32(at: 4))
            guard count <= (usableSize - 8) / 4 else { return .unprovable("free-list trunk \(trunk) is malformed") }
            for index in 0..<count {
                let leaf = bytes.bigEndianUInt32(at: 8 + 4 * index)
                if leaf >= 2, leaf <= pageCount { freeLeaves.insert(leaf) }
            }
        }

        /// A page's role as the map knew it (before links are followed).
        func base(_ page: UInt32) -> Role {
            if page == 1 { return .header }
            if isPointerMap(page) { return .pointerMap }
            if trunks.contains(page) || freeLeaves.contains(page) { return .free }
            return role(of: page)
        }

        /// A role a link gives, with the kind of page the link expects.
        struct Link: Equatable {
            var role: Role
            /// For a b-tree child: whether it must be a table page.
            var tablePage: Bool?
        }

        var parsed: [UInt32: BTreePage?] = [:]
        func btree(_ page: UInt32) -> BTreePage? {
            if let known = parsed[page] { return known }
            let value = commit.bytes(of: page).flatMap {
                BTreePage($0, page: page, usableSize: usableSize, pageCount: pageCount)
            }
            parsed[page] = value
            return value
        }

        /// The pages a page points to, read as its role says.
        func links(from page: UInt32, as role: Role, into next: inout [UInt32: Link], conflict: inout Bool) {
            func add(_ child: UInt32, _ link: Link) {
                guard commit.bytes(of: child) != nil, child <= pageCount else { return }
                if let existing = next[child], existing != link { conflict = true }
                next[child] = link
            }
            switch role {
            case .header, .btree:
                let owner: Int32
                if case .btree(let id) = role { owner = id } else { owner = Self.schemaOwner }
                guard let node = btree(page) else { return }
                for child in node.children {
                    add(child, Link(role: .btree(owner: owner), tablePage: node.kind.isTable))
                }
                for overflow in node.overflows { add(overflow, Link(role: .overflow(owner: owner))) }
            case .overflow(let owner):
                guard let bytes = commit.bytes(of: page) else { return }
                let next = bytes.bigEndianUInt32(at: 0)
                if next != 0 { add(next, Link(role: .overflow(owner: owner))) }
            case .unknown, .free, .pointerMap:
                break
            }
        }

        // Follow links until the roles settle (a b-tree is a few levels deep).
        var linked: [UInt32: Link] = [:]
        var settled = false
        var conflict = false
        for _ in 0..<64 {
            var next: [UInt32: Link] = [:]
            conflict = false
            for page in written {
                links(from: page, as: linked[page]?.role ?? base(page), into: &next, conflict: &conflict)
            }
            if next == linked {
                settled = true
                break
            }
            linked = next
        }
        guard settled else { return .unprovable("page links do not settle") }
        guard !conflict else { return .unprovable("a page is linked from two b-trees") }

        var changed = Set<Int32>()
        var updates: [(UInt32, Role)] = []
        for page in written {
            if let link = linked[page] {
                switch link.role {
                case .btree(let owner):
                    guard let node = btree(page) else { return .unprovable("page \(page) is not a b-tree page") }
                    if let table = link.tablePage, table != node.kind.isTable {
                        return .unprovable("page \(page)'s kind contradicts its parent")
                    }
                    guard learn(owner, isTableTree: node.kind.isTable) else {
                        return .unprovable("page \(page)'s kind contradicts its b-tree")
                    }
                    changed.insert(owner)
                case .overflow(let owner):
                    changed.insert(owner)
                default:
                    break
                }
                updates.append((page, link.role))
                continue
            }
            switch base(page) {
            case .header, .pointerMap:
                break
            case .free where trunks.contains(page) || freeLeaves.contains(page):
                // On the free list, whatever its bytes (a savepoint rolled
                // back leaves a page it took back on the list, as it was).
                updates.append((page, .free))
            case .btree(let owner):
                changed.insert(owner)
                if let node = btree(page) {
                    guard learn(owner, isTableTree: node.kind.isTable) else {
                        return .unprovable("page \(page)'s kind contradicts its b-tree")
                    }
                } else {
                    // No longer a b-tree page: freed (zeroed, or a freelist trunk).
                    updates.append((page, .free))
                }
            case .overflow(let owner):
                // Written in place (incremental blob I/O), or freed (zeroed).
                changed.insert(owner)
                if commit.bytes(of: page)!.allSatisfy({ $0 == 0 }) { updates.append((page, .free)) }
            case .free, .unknown:
                let bytes = commit.bytes(of: page)!
                if bytes.allSatisfy({ $0 == 0 }) {
                    updates.append((page, .free))
                } else if btree(page) != nil {
                    return .unprovable("page \(page) is a b-tree page nothing points to")
                } else if base(page) == .unknown {
                    return .unprovable("page \(page) is new and nothing points to it")
                }
            }
        }
        if changed.contains(Self.schemaOwner) { return .unprovable("sqlite_schema changed") }

        // The commit is accounted for: keep the map current.
        let size = Int(pageCount) + 1
        if size < roles.count {
            roles.removeLast(roles.count - size)
        } else if size > roles.count {
            let start = roles.count
            roles.append(contentsOf: repeatElement(.unknown, count: size - roles.count))
            for page in start..<roles.count where isPointerMap(UInt32(page)) { roles[page] = .pointerMap }
            let pending = Self.pendingBytePage(pageSize)
            if pending >= start, Int(pending) < roles.count { roles[Int(pending)] = .free }
        }
        for (page, role) in updates { roles[Int(page)] = role }
        // Free leaves the commit did not write: freed with their content.
        for leaf in freeLeaves where commit.bytes(of: leaf) == nil { roles[Int(leaf)] = .free }
        return .tables(Set(changed.flatMap { owners[Int($0)].tables }))
    }

    /// Notes which kind of pages a b-tree has; `false` when it contradicts what was known.
    private mutating func learn(_ owner: Int32, isTableTree: Bool) -> Bool {
        guard let known = owners[Int(owner)].isTableTree else {
            owners[Int(owner)].isTableTree = isTableTree
            return true
        }
        return known == isTableTree
    }
}

/// The pages one commit wrote, each as it was last written in the commit.
///
/// A buffer reused from commit to commit; the bytes `bytes(of:)` answers
/// are valid until the next `add` or `removeAll`.
final class CommitPages {
    /// The database size in pages after the commit.
    var pageCount: UInt32 = 0
    /// The commit's first frame in the log.
    var firstFrame: UInt32 = 0
    /// The frame that last wrote each page, in the commit.
    private(set) var frames: [UInt32: UInt32] = [:]
    let pageSize: Int
    private var storage: UnsafeMutableRawPointer
    private var capacity: Int
    private var count = 0
    private var offsets: [UInt32: Int] = [:]

    init(pageSize: Int) {
        self.pageSize = pageSize
        capacity = 16 * pageSize
        storage = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    }

    deinit {
        storage.deallocate()
    }

    var pages: [UInt32] { offsets.keys.sorted() }
    var isEmpty: Bool { offsets.isEmpty }
    /// How many bytes the commit's pages hold.
    var byteCount: Int { count }

    func add(page: UInt32, frame: UInt32 = 0, _ bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count >= pageSize)
        if offsets.isEmpty { firstFrame = frame }
        frames[page] = frame
        let offset: Int
        if let existing = offsets[page] {
            offset = existing
        } else {
            if count + pageSize > capacity {
                let grown = max(2 * capacity, count + pageSize)
                let newStorage = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 16)
                newStorage.copyMemory(from: storage, byteCount: count)
                storage.deallocate()
                storage = newStorage
                capacity = grown
            }
            offset = count
            offsets[page] = offset
            count += pageSize
        }
        (storage + offset).copyMemory(from: bytes.baseAddress!, byteCount: pageSize)
    }

    func removeAll() {
        offsets.removeAll(keepingCapacity: true)
        frames.removeAll(keepingCapacity: true)
        firstFrame = 0
        count = 0
        pageCount = 0
    }

    /// A page's bytes, valid until the next `add` or `removeAll`.
    func bytes(of page: UInt32) -> UnsafeRawBufferPointer? {
        guard let offset = offsets[page] else { return nil }
        return UnsafeRawBufferPointer(start: storage + offset, count: pageSize)
    }
}
