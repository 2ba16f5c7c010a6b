/// The states a rollback-journal database went through between two
/// readings, page by page, from the journals of the commits between them —
/// or the reason a page of one of them cannot be proven.
///
/// Commit `m` (of `1...n`) saved in its journal the content every page it
/// wrote had when it began (the state `m - 1`), except the pages SQLite
/// calls overwriteable without saving (pager.c's design notes): pages past
/// the end of the file as the transaction began (appended), and free-list
/// leaves (reused with no content read). So page `p` of state `k` is:
/// - the image commit `m` saved, for the first `m > k` whose journal has `p`;
/// - else the current file's page (state `n`), when no commit after `k`
///   wrote it —
/// and it is unknown when some commit `m` between could have written it
/// unsaved: `p` was a free-list leaf, or past the end, in state `m - 1`.
/// Then, forward: it is the first state's page (the reader's copy), when
/// no commit up to `k` saved it or could have written it unsaved. (A page
/// one commit frees without writing it, `secure_delete` off, and a later
/// one reuses is lost to the journals; while no commit before `k` wrote
/// it, the copy still has it.)
///
/// State `m - 1`'s free list is read from its page 1 (every commit saves
/// page 1: it moves the change counter) and its trunk pages, resolved the
/// same way: SQLite reads a trunk with its content before writing it, so a
/// trunk is always saved before it changes. The states are resolved from
/// the last to the first.
///
/// Not proven here, and refused: an auto-vacuum file (pages move and the
/// file shrinks at commit), a schema change between (roots move), a
/// transaction rolled back between (its unsaved writes to free-list
/// leaves stay in the file: the caller counts them, `JournalCapture.Taken`).
struct JournalHistory {
    /// The commits' journals, in commit order (state `m - 1` → `m`).
    let journals: [JournalPages]
    /// The current file's size in pages (state `n`).
    let currentPageCount: UInt32
    /// Each state before a commit's free-list leaves (`freeLeaves[m - 1]`:
    /// state `m - 1`'s).
    private var freeLeaves: [Set<UInt32>] = []
    /// The current file's pages (state `n`), read in the reading's
    /// transaction.
    private let current: (UInt32) -> [UInt8]?
    /// The first state's pages the reader knows (its copy of the tables).
    private let initial: (UInt32) -> [UInt8]?

    /// Why a page or the whole history cannot be proven.
    struct Unprovable: Error, Equatable {
        var reason: String
    }

    /// The history of `journals` (each one commit's, in order, with the
    /// pages' images), ending at the current file read by `current`.
    /// `cookie`: the schema cookie every state must have.
    init(
        journals: [JournalPages], pageSize: Int, usable: Int, cookie: UInt32, currentPageCount: UInt32,
        initial: @escaping (UInt32) -> [UInt8]?, current: @escaping (UInt32) -> [UInt8]?
    ) throws(Unprovable) {
        self.journals = journals
        self.currentPageCount = currentPageCount
        self.current = current
        self.initial = initial
        for (index, journal) in journals.enumerated() {
            guard journal.images != nil else {
                throw Unprovable(reason: "commit \(index + 1)'s journal kept no page images")
            }
            guard journal.pageSize == pageSize else { throw Unprovable(reason: "the page size changed") }
            guard let first = journal.image(of: 1), first.count >= 100 else {
                throw Unprovable(reason: "commit \(index + 1)'s journal has no page 1")
            }
            let header = Array(first.prefix(100))
            guard Self.word(header, 52) == 0 else { throw Unprovable(reason: "an auto-vacuum file") }
            guard Self.word(header, 40) == cookie else { throw Unprovable(reason: "the schema changed") }
        }
        // From the last state before a commit to the first: each one's free
        // list, its trunks resolved through the later commits, whose free
        // lists are known by then.
        freeLeaves = Array(repeating: [], count: journals.count)
        for commit in stride(from: journals.count, through: 1, by: -1) {
            freeLeaves[commit - 1] = try freeList(before: commit, usable: usable)
        }
    }

    /// The number of states after the first (the commits).
    var commits: Int { journals.count }

    /// The file's size in pages in a state (`0...commits`).
    func pageCount(at state: Int) -> UInt32 {
        state == commits ? currentPageCount : journals[state].originalPageCount
    }

    /// A page as it was in a state (`0...commits`).
    func page(_ number: UInt32, at state: Int) -> Result<[UInt8], Unprovable> {
        guard number >= 1, number <= pageCount(at: state) else {
            return .failure(Unprovable(reason: "page \(number) lies past the end of state \(state)"))
        }
        var commit = state
        while commit < commits {
            commit += 1
            let journal = journals[commit - 1]
            if let image = journal.image(of: number) { return .success(Array(image)) }
            if number > journal.originalPageCount || freeLeaves[commit - 1].contains(number) {
                return unchangedSinceFirst(number, at: state).map { .success($0) }
                    ?? .failure(
                        Unprovable(
                            reason:
                                "page \(number) was free before commit \(commit), which may have written it unsaved"))
            }
        }
        guard let bytes = current(number) else {
            return .failure(Unprovable(reason: "the file was written while it was read"))
        }
        return .success(bytes)
    }

    /// A page of a state as the first state had it, when no commit up to
    /// that state saved it or could have written it unsaved.
    private func unchangedSinceFirst(_ number: UInt32, at state: Int) -> [UInt8]? {
        for commit in stride(from: 1, through: state, by: 1) {
            let journal = journals[commit - 1]
            if journal.images?[number] != nil || number > journal.originalPageCount
                || freeLeaves[commit - 1].contains(number)
            {
                return nil
            }
        }
        return initial(number)
    }

    /// State `commit - 1`'s free-list leaves, from its page 1 (commit
    /// `commit`'s image of it) and its trunks.
    private func freeList(before commit: Int, usable: Int) throws(Unprovable) -> Set<UInt32> {
        let journal = journals[commit - 1]
        guard let first = journal.image(of: 1) else { throw Unprovable(reason: "no page 1") }
        let header = Array(first.prefix(100))
        var trunk = Self.word(header, 32)
        let count = Self.word(header, 36)
        let pageCount = journal.originalPageCount
        var leaves = Set<UInt32>()
        var trunks = Set<UInt32>()
        var counted: UInt32 = 0
        let most = UInt32(usable / 4 - 2)
        while trunk != 0 {
            guard trunk <= pageCount, counted < count, trunks.insert(trunk).inserted else {
                throw Unprovable(reason: "the free list before commit \(commit) does not read")
            }
            // The trunk as it was then: saved by this commit, or by a later
            // one (it is no leaf then, so written only saved).
            let bytes: [UInt8]
            if let image = journal.image(of: trunk) {
                bytes = Array(image)
            } else {
                switch page(trunk, at: commit) {
                case .success(let content): bytes = content
                case .failure(let failure): throw failure
                }
            }
            let next = Self.word(bytes, 0)
            let listed = Self.word(bytes, 4)
            guard listed <= most, 8 + Int(listed) * 4 <= bytes.count else {
                throw Unprovable(reason: "free-list trunk \(trunk) before commit \(commit) does not read")
            }
            for index in 0..<Int(listed) {
                let leaf = Self.word(bytes, 8 + index * 4)
                guard leaf >= 2, leaf <= pageCount, leaves.insert(leaf).inserted else {
                    throw Unprovable(reason: "free-list trunk \(trunk) before commit \(commit) does not read")
                }
            }
            counted += 1 + listed
            trunk = next
        }
        guard counted == count else {
            throw Unprovable(
                reason: "the free list before commit \(commit) counts \(counted) pages, its header \(count)")
        }
        return leaves
    }

    private static func word<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, _ offset: Int) -> UInt32
    where Bytes.Index == Int {
        let start = bytes.startIndex + offset
        guard start + 4 <= bytes.endIndex else { return 0 }
        return UInt32(bytes[start]) << 24 | UInt32(bytes[start + 1]) << 16 | UInt32(bytes[start + 2]) << 8
            | UInt32(bytes[start + 3])
    }
}
