import CSQLiveSupport
import Foundation
import GRDBSQLite
import SQLiveLocks

/// Derives each commit's changed rows in a rollback-journal file, where
/// nothing is left of a commit's pages once it is done (the journal is
/// deleted or blanked before a watcher can read it).
///
/// It keeps a copy of the wanted tables' pages (b-tree and overflow pages)
/// as of the last commit it read. At each commit it reads those tables
/// again — every page, from each table's root, through a connection of the
/// lock-free observer VFS (`ObserverVFS`: one committed state of the file,
/// proven whole, no lock a writer could meet) — and compares them with the
/// copy: the rows on the pages that differ, old against new, are the
/// commit's changes (`WALRowDeriver.compare`), an overflow page that
/// differs counting for the page of the cell it belongs to. Reading the
/// tables costs a read of their pages (mostly from the VFS's own copy,
/// refreshed in a few large reads), not a run of any query.
///
/// Only a state one commit after the last one read is a commit's changes
/// (the file change counter, offset 24 of the header, says how many came
/// between): when several came before sqlive could read, the tables that
/// changed are reported unknown for them. So is a table whose columns
/// changed, and every table when the file could not be read whole.
///
/// Not thread-safe: confined to the watcher's thread.
final class RollbackRowDeriver {
    private let raw: RawConnection
    private struct Table {
        var layout: TableLayout
        var usable: Int
        var encoding: SQLiteRecord.TextEncoding
        var tree: Tree
        var pages: [UInt32: [UInt8]] { tree.pages }
        var cellOf: [UInt32: UInt32] { tree.cellOf }
    }

    /// A table's b-tree as read: every page from its root.
    struct Tree {
        var root: UInt32
        var pages: [UInt32: [UInt8]] = [:]
        /// Each overflow page's cell page.
        var cellOf: [UInt32: UInt32] = [:]
        /// Each b-tree page, parsed: a page taken from the copy is not
        /// parsed again.
        var nodes: [UInt32: BTreePage] = [:]
        /// Each b-tree page's parent (the root has none).
        var parentOf: [UInt32: UInt32] = [:]
    }
    /// The wanted tables as of `counter`, by lowercased name.
    private var tables: [String: Table] = [:]
    /// Which table of the copy each of its pages (b-tree and overflow)
    /// belongs to: a reading from one commit's journal looks only at the
    /// tables owning a page it wrote (`readState`).
    private var owners: [UInt32: String] = [:]
    /// Whether the copy lacks a wanted table (one too large to read): then
    /// every table is looked at.
    private var copyLacksTables = false
    /// The tables too large to read at the last reading (by name).
    private var tooLargeBefore = Set<String>()
    /// The schema cookie and page size the copy was read with.
    private var cookieOfCopy: UInt32?
    private var pageSizeOfCopy: Int?
    private var counter: UInt32?
    private var filter: RowFeedFilter?
    /// The journals of the commits since the last reading, when they could
    /// be caught (`JournalCapture`): then only the pages they name are read
    /// again, the others taken from the copy. Made at the first reading.
    private(set) var journals: JournalCapture?
    private let path: String
    /// How the last reading read the tables: from the journals' pages
    /// (`true`), or every page (`false`); `nil` when nothing was read.
    private(set) var lastReadUsedJournals: Bool?

    init(path: String) throws(SQLiveError) {
        guard ObserverVFS.isRegistered else { throw .cannotOpen(path: path, reason: "the observer VFS is missing") }
        do {
            // The observer VFS keeps no pages for this connection
            // (`sqlive_budget=0`): the deriver keeps its own copy of the
            // tables' pages, and a second one in the VFS doubled the memory.
            raw = try RawConnection(
                path: ObserverVFS.uri(path: path, vfs: ObserverVFS.observer) + "&sqlive_budget=0",
                flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI)
        } catch {
            throw .cannotOpen(path: path, reason: "the change feed's connection: \(error.message)")
        }
        self.path = path
    }

    private func makeJournals() -> JournalCapture {
        JournalCapture(databasePath: path, database: sqlive_observer_descriptor(raw.handle))
    }

    deinit {
        // Before the connection (and the descriptor the capture reads) closes.
        journals?.stop()
    }

    /// Reads the wanted tables now; the changes since the last reading, as
    /// one commit's, or `nil` when there is nothing to tell (no commit
    /// since). At the first reading there is no copy to compare with: the
    /// commit that woke it is told unknown, and the feed starts there.
    ///
    /// When the filter changed since the last reading, the tables the copy
    /// has go on (their rows are told, read by comparing every page); those
    /// newly wanted start at this reading (told unknown when a commit came
    /// since the last one), and those no longer wanted leave the copy.
    func read(_ wanted: RowFeedFilter) -> [Read] {
        let first = counter == nil
        let refiltered = filter != wanted
        filter = wanted
        lastReadUsedJournals = nil
        if refiltered { dropTables(notIn: wanted) }
        // The tables of the schema the copy was read with that it lacks
        // (newly wanted): any other table it lacks after the reading was
        // created since.
        let wasTooLarge = tooLargeBefore
        let newlyWanted = Set(
            (schema?.layouts ?? [:]).filter { wanted.includes($0.value.name) && tables[$0.key] == nil }.keys)
        var state: State
        switch readTables(wanted, first: first || refiltered) {
        case .success(let read): state = read
        case .failure(let failure):
            // The copy can no longer be trusted: start again at the next commit.
            let names = tablesNamed(wanted)
            forgetCopy()
            return [Read(from: nil, to: nil, changes: names.map { RowChange.unknown($0, reason: failure.reason) })]
        }
        let committed = commit(&state)
        defer { counter = state.counter }
        lastReadUsedJournals = state.usedJournals
        let to = FilePosition(wal: false, value: state.counter)
        guard !first, let counter else {
            return [
                Read(
                    from: nil, to: to,
                    changes: tables.values.map(\.layout.name).sorted().map {
                        RowChange.unknown($0, reason: "the change feed starts at this commit (a rollback-journal file)")
                    })
            ]
        }
        let commits = state.counter &- counter
        if commits == 0 { return [] }
        if commits > 1 {
            if let between = state.between, between.count == Int(commits) - 1, committed.gone.isEmpty,
                state.tooLarge.isEmpty, let reads = Self.eachCommit(committed, between, from: counter)
            {
                return reads
            }
            Log.monitor.debug(
                "\(commits) commits together: not told apart (\(state.betweenFailure ?? "no journals for each"))")
        }
        var changes: [RowChange] = state.tooLarge.sorted().map {
            .unknown($0, reason: BTreeCells.tooLargeReason)
        }
        for (_, before, now) in committed.read {
            guard let before else { continue }
            guard before.layout == now.layout else {
                changes.append(.unknown(now.layout.name, reason: "its columns changed"))
                continue
            }
            let rows = Self.changes(from: before, to: now)
            guard let rows else {
                changes.append(.unknown(now.layout.name, reason: "a page of it does not read as one of its b-tree"))
                continue
            }
            guard commits == 1 || rows.isEmpty else {
                changes.append(
                    .unknown(
                        now.layout.name,
                        reason: "\(commits) commits came together before sqlive could read them; their rows, together: "
                            + "\(rows.count) changed"))
                continue
            }
            changes += rows
        }
        // A table that came or went: its rows are not derived (a kept
        // query of it reads its base again), but never passed over.
        for (_, before) in committed.gone where !state.tooLarge.contains(before.layout.name) {
            changes.append(.unknown(before.layout.name, reason: "the table was dropped"))
        }
        for (name, before, now) in committed.read where before == nil {
            let reason =
                if wasTooLarge.contains(now.layout.name) {
                    "it was too large to read before this commit (\(BTreeCells.tooLargeReason))"
                } else if newlyWanted.contains(name) {
                    "the change feed starts at this commit for it (a rollback-journal file)"
                } else {
                    "the table was created"
                }
            changes.append(.unknown(now.layout.name, reason: reason))
        }
        return [Read(from: FilePosition(wal: false, value: counter), to: to, changes: changes)]
    }

    /// Each of several commits' rows, from the tables' states between them
    /// (`State.between`); `nil` when a table of the reading is not in the
    /// copy or changed its columns.
    private static func eachCommit(
        _ committed: Committed, _ between: [[String: Result<Tree, Failure>]], from counter: UInt32
    ) -> [Read]? {
        let commits = between.count + 1
        var reads: [Read] = []
        for commit in 1...commits {
            var changes: [RowChange] = []
            for (name, before, now) in committed.read {
                guard let before, before.old == nil, before.layout == now.layout else { return nil }
                func table(_ state: Int) -> Result<Table, Failure>? {
                    if state == 0 { return .success(before.table) }
                    if state == commits { return .success(now) }
                    return between[state - 1][name].map {
                        $0.map { Table(layout: now.layout, usable: now.usable, encoding: now.encoding, tree: $0) }
                    }
                }
                guard let oldRead = table(commit - 1), let newRead = table(commit) else { return nil }
                let old: Table
                let new: Table
                switch (oldRead, newRead) {
                case (.success(let first), .success(let second)): (old, new) = (first, second)
                case (.failure(let failure), _), (_, .failure(let failure)):
                    changes.append(
                        .unknown(
                            now.layout.name,
                            reason: "\(commits) commits came together before sqlive could read them, and the "
                                + "journals do not prove this one's pages: \(failure.reason)"))
                    continue
                }
                guard let rows = Self.changes(from: Before(table: old, old: nil), to: new) else {
                    changes.append(.unknown(now.layout.name, reason: "a page of it does not read as one of its b-tree"))
                    continue
                }
                changes += rows
            }
            reads.append(
                Read(
                    from: FilePosition(wal: false, value: counter &+ UInt32(commit - 1)),
                    to: FilePosition(wal: false, value: counter &+ UInt32(commit)), changes: changes))
        }
        return reads
    }

    /// The changes between two readings, with the file change counter of
    /// each (`nil` when unknown).
    struct Read {
        var from: FilePosition?
        var to: FilePosition?
        var changes: [RowChange]
    }

    /// The file's size past which `changedTables` does not read it (each
    /// commit would cost a read of that much): commits are then not
    /// matched by table.
    static let tableMatchingLimit = 16 << 20
    /// Whether `changedTables` holds a copy to compare the next commit with
    /// (the file is within the limit and was read whole).
    private(set) var matchesTables = false

    /// Reads every table now, for table precision (not rows): the tables
    /// whose pages differ from the last reading, lowercased — the union over
    /// the commits since, however many came together — or `nil` when that
    /// cannot be said: the first reading, the schema changed (its cookie, a
    /// table's columns, a table came or went), a row over 16 MiB, a file
    /// over `tableMatchingLimit`, one that could not be read whole.
    ///
    /// Use a deriver of its own for it: it keeps every table's pages.
    func changedTables() -> Set<String>? {
        defer { matchesTables = counter != nil }
        let first = filter != .all || counter == nil
        filter = .all
        lastReadUsedJournals = nil
        guard case .success(var state) = readTables(.all, limit: Self.tableMatchingLimit, first: first) else {
            forgetCopy()
            return nil
        }
        let previousCookie = cookieOfCopy
        let committed = commit(&state)
        lastReadUsedJournals = state.usedJournals
        defer { counter = state.counter }
        guard !first, let counter, state.counter != counter else { return first ? nil : [] }
        guard state.cookie == previousCookie, state.tooLarge.isEmpty, committed.gone.isEmpty,
            committed.read.allSatisfy({ $0.before != nil })
        else {
            return nil
        }
        var changed = Set<String>()
        for (name, before, now) in committed.read {
            guard let before, before.layout == now.layout else { return nil }
            let differs =
                if let old = before.old {
                    old.contains { $0.value.bytes != now.pages[$0.key] }
                } else {
                    before.table.pages != now.pages
                }
            if differs { changed.insert(name) }
        }
        return changed
    }

    /// What the caller named, or the tables known, for unknown rows.
    private func tablesNamed(_ wanted: RowFeedFilter) -> [String] {
        switch wanted {
        case .tables(let names): names.sorted()
        case .all: tables.values.map(\.layout.name).sorted()
        }
    }

    // MARK: - Reading

    /// The pages the commits since the last reading may have changed.
    private struct ChangedPages {
        var pages: Set<UInt32>
        /// Pages past this one were appended (not journaled).
        var appendedAfter: UInt32

        func mayHaveChanged(_ page: UInt32) -> Bool { page > appendedAfter || pages.contains(page) }
    }

    private struct State {
        var counter: UInt32
        var usedJournals = false
        /// The schema cookie (offset 40).
        var cookie: UInt32 = 0
        /// The file's size in bytes, by its header.
        var bytes = 0
        var pageSize = 0
        /// The tables walked whole.
        var tables: [String: Table]
        /// The tables updated from the copy's (`update`), by what changed:
        /// applied to the copy in place by `commit`.
        var deltas: [String: Delta] = [:]
        /// Tables with a row over 16 MiB: not read.
        var tooLarge: Set<String> = []
        /// The tables of the copy found unchanged; `nil`: every table of
        /// the copy not walked or updated is unchanged (a reading from one
        /// commit's journal that looked only at the tables owning a page
        /// the commit wrote).
        var unchanged: Set<String>? = []
        /// The trees this reading updated, checked against whole walks
        /// (`checksUpdates`, for tests): counted once the reading stands.
        var checked = UpdateChecks()
        /// When several commits came since the last reading and their
        /// journals resolve every state between (`statesBetween`): the
        /// wanted tables after each commit but the last.
        var between: [[String: Result<Tree, Failure>]]?
        /// Why the states between could not be resolved (for the log).
        var betweenFailure: String?
    }

    private struct Failure: Error {
        var reason: String
        /// A row too large to read (`BTreeCells.largestPayload`): its table
        /// is told unknown, the others are read.
        var tooLarge = false
        /// The journals do not yet name the commit read: one is still in
        /// its directory (`JournalCapture.Taken.underWay`).
        var journalUnderWay = false
        /// A writer overtook the reading (a page could not be read).
        var overtaken = false
    }

    /// Reads the wanted tables: only the pages the journals of the commits
    /// since the last reading name (the rest from the copy) when they prove
    /// to be all of them, else every page. A writer that overtakes the
    /// reading makes it read again (`ObserverVFS.maximumAttempts` times).
    /// When no commit came since the last reading, only the wanted tables
    /// the copy lacks are read.
    private func readTables(_ wanted: RowFeedFilter, limit: Int? = nil, first: Bool) -> Result<State, Failure> {
        // The journals of the commits since the last reading (taken even
        // when not used, so that they do not count for a later one).
        if journals == nil { journals = makeJournals() }
        let journals = journals!
        var result: Result<State, Failure> = .failure(Failure(reason: "the file kept changing while it was read"))
        if let previous = counter {
            var captured = journals.take(after: previous)
            // A commit whose pages are written but whose journal is not yet
            // deleted (its writer syncing the file) is waited for, a little:
            // reading every page would cost more.
            let patience = ContinuousClock.now + Self.journalPatience
            for attempt in 1...ObserverVFS.maximumAttempts {
                // (Never on the last attempt: a wait that ran out of them
                // would fail the whole reading.) At the first attempt the
                // journals were taken before the commit the reading finds
                // may have begun: it is waited for once, and for as long as
                // a journal is there after that.
                let wait =
                    !first && (captured.underWay || attempt == 1) && captured.journals != nil
                    && ContinuousClock.now < patience && attempt < ObserverVFS.maximumAttempts
                result = readState(
                    wanted, limit: limit, captured: first ? nil : captured.journals, rollbacks: captured.rollbacks,
                    waitingForJournal: wait)
                guard case .failure(let failure) = result, !failure.tooLarge, attempt < ObserverVFS.maximumAttempts
                else { break }
                Log.monitor.debug("reading \(attempt) (waiting: \(wait)): \(failure.reason)")
                if failure.journalUnderWay { Thread.sleep(forTimeInterval: 0.000_25) } else { Self.pause(attempt) }
                captured = captured.then(journals.take(after: previous))
            }
        } else {
            result = readState(wanted, limit: limit, attempts: ObserverVFS.maximumAttempts)
        }
        // Were they all the journals? If not, the tables are read whole.
        let readCounter: UInt32? = if case .success(let state) = result { state.counter } else { nil }
        let confirmed = journals.confirm(read: readCounter)
        if !confirmed, case .success(var state) = result, state.between != nil {
            // A journal missed: the states between are not proven.
            state.between = nil
            state.betweenFailure = "a journal was missed"
            result = .success(state)
        }
        if !confirmed, case .success(let state) = result, state.usedJournals {
            // (A journal missed may also have made the journals taken look
            // like this commit's — a rollback's, judged by a counter a missed
            // commit moved: what the trees' check found then is not counted.)
            result = readState(wanted, limit: limit, attempts: ObserverVFS.maximumAttempts)
        } else if case .success(let state) = result, state.checked.compared > 0 {
            Self.checksUpdates.withLock {
                $0.compared += state.checked.compared
                $0.differences += state.checked.differences
            }
        }
        return result
    }

    private func readState(_ wanted: RowFeedFilter, limit: Int?, attempts: Int) -> Result<State, Failure> {
        var failure = Failure(reason: "the file kept changing while it was read")
        for attempt in 0..<attempts {
            // A writer that overtook the reading is let finish a moment
            // (its pages are read from the file, each proven: none are kept).
            if attempt > 0 { Self.pause(attempt) }
            switch readState(wanted, limit: limit, captured: nil) {
            case .success(let state): return .success(state)
            case .failure(let error) where error.tooLarge: return .failure(error)
            case .failure(let error): failure = error
            }
        }
        return .failure(failure)
    }

    /// Between readings a writer overtook: 0.2 ms more each time, 2 ms at
    /// most (64 attempts then span a slow commit's syncs).
    private static func pause(_ attempt: Int) {
        Thread.sleep(forTimeInterval: Double(min(attempt, 10)) * 0.000_2)
    }

    /// For tests: each tree `update`d is checked against a walk of the
    /// whole tree (`compared`, `differences`).
    struct UpdateChecks: Sendable {
        var enabled = false
        var compared = 0
        var differences = 0
    }
    static let checksUpdates = Locked(UpdateChecks())

    /// The tables' roots and layouts as of a schema cookie.
    private struct Schema {
        var cookie: UInt32
        var roots: [String: UInt32]
        var layouts: [String: TableLayout]
        var encoding: SQLiteRecord.TextEncoding
    }
    private var schema: Schema?

    /// How long a reading waits for a commit's journal to be deleted.
    static let journalPatience = Duration.milliseconds(20)

    private func readState(
        _ wanted: RowFeedFilter, limit: Int?, captured: [JournalPages]?, rollbacks: Int = 0,
        waitingForJournal: Bool = false
    )
        -> Result<State, Failure>
    {
        guard raw.execute("BEGIN") else { return .failure(Failure(reason: "cannot begin a read")) }
        defer { _ = raw.execute("COMMIT") }
        var roots: [String: UInt32] = [:]
        let layouts: [String: TableLayout]
        let encodingLayouts: (layouts: [String: TableLayout], encoding: SQLiteRecord.TextEncoding)
        do throws(RawSQLiteError) {
            // The schema cookie first (it begins the read): while it stays,
            // the tables' roots and columns are the last reading's (a schema
            // change and `VACUUM` move it).
            let version = try RawStatement(on: raw.handle, "PRAGMA main.schema_version")
            guard version.step() == SQLITE_ROW else { throw RawSQLiteError(code: SQLITE_ERROR, on: raw.handle) }
            let cookie = UInt32(truncatingIfNeeded: sqlite3_column_int64(version.handle, 0))
            if let schema, schema.cookie == cookie {
                roots = schema.roots
                encodingLayouts = (schema.layouts, schema.encoding)
            } else {
                let statement = try RawStatement(
                    on: raw.handle, "SELECT name, rootpage FROM main.sqlite_schema WHERE type = 'table'")
                while true {
                    let code = statement.step()
                    if code == SQLITE_DONE { break }
                    guard code == SQLITE_ROW else { throw RawSQLiteError(code: code, on: raw.handle) }
                    let name = sqlite3_column_text(statement.handle, 0).map { String(cString: $0) } ?? ""
                    roots[name.lowercased()] = UInt32(truncatingIfNeeded: sqlite3_column_int64(statement.handle, 1))
                }
                encodingLayouts = try TableLayout.loadAll(raw.handle)
                schema = Schema(
                    cookie: cookie, roots: roots, layouts: encodingLayouts.layouts, encoding: encodingLayouts.encoding)
            }
            layouts = encodingLayouts.layouts
        } catch {
            schema = nil
            return .failure(Failure(reason: "reading the schema: \(error.message)"))
        }
        guard let header = bytes(count: 100, at: 0) else {
            return .failure(Failure(reason: "the file was written while it was read"))
        }
        let counter = header.withUnsafeBytes { $0.bigEndianUInt32(at: 24) }
        let rawPageSize = Int(header.withUnsafeBytes { $0.bigEndianUInt16(at: 16) })
        let pageSize = rawPageSize == 1 ? 65536 : rawPageSize
        let usable = pageSize - Int(header[20])
        let pageCount = header.withUnsafeBytes { $0.bigEndianUInt32(at: 28) }
        if let limit, Int(pageCount) * pageSize > limit {
            return .failure(Failure(reason: "the file is over \(limit >> 20) MiB", tooLarge: true))
        }
        // The journals name every page the commits since the last reading
        // changed only if they are those commits' journals, each once:
        // their saved counters run from the last reading's to this one's.
        var changed: ChangedPages?
        if let captured, let previous = self.counter {
            Log.monitor.debug(
                "journals: counters \(captured.map { $0.startCounter.map(String.init) ?? "-" }) for \(previous)..<\(counter)"
            )
        } else if self.counter != nil {
            Log.monitor.debug("journals: not used for this reading")
        }
        // One commit only: a page one commit frees (its content left as it
        // was, not journaled) and a later one reuses from the free list is
        // written without being journaled (SQLite reads no content for a
        // free-list leaf, so it saves none) — invisible to the journals when
        // both commits fall between two readings.
        if let captured, let previous = self.counter, captured.count == 1, counter &- previous == 1,
            captured[0].startCounter == previous, captured[0].pageSize == pageSize
        {
            changed = ChangedPages(pages: captured[0].pages, appendedAfter: captured[0].originalPageCount)
        }
        // A commit's journal not yet deleted (one commit, or the last of
        // several) is waited for, a little.
        if changed == nil, waitingForJournal, let previous = self.counter, counter &- previous >= 1,
            counter &- previous == 1 || (captured?.count ?? 0) < Int(counter &- previous)
        {
            return .failure(Failure(reason: "a commit's journal is still there", journalUnderWay: true))
        }
        var tables: [String: Table] = [:]
        var deltas: [String: Delta] = [:]
        var tooLarge = Set<String>()
        var unchanged: Set<String>? = []
        let checking = Self.checksUpdates.withLock { $0.enabled }
        var checked = UpdateChecks()
        // With one commit's journal, a table none of whose pages the commit
        // wrote is as it was: its pages' contents, and so the pages they
        // link to, are the copy's (a page the commit added is reached only
        // through one it wrote). Only the owners of written pages are
        // looked at — when the copy has every wanted table, under the
        // schema it was read with, at this page size.
        var names = layouts.keys.filter { wanted.includes(layouts[$0]!.name) }
        let headerCookie = header.withUnsafeBytes { $0.bigEndianUInt32(at: 40) }
        if let changed, !copyLacksTables, headerCookie == cookieOfCopy, pageSize == pageSizeOfCopy,
            pageCount >= changed.appendedAfter, self.tables.first.map({ $0.value.usable == usable }) ?? false
        {
            names = Array(Set(changed.pages.compactMap { owners[$0] }))
            unchanged = nil
        } else if counter == self.counter, !copyLacksTables, headerCookie == cookieOfCopy,
            pageSize == pageSizeOfCopy, self.tables.first.map({ $0.value.usable == usable }) ?? true
        {
            // No commit since the last reading: the copy's tables are as
            // they were; only those newly wanted (if any) are read.
            names = names.filter { self.tables[$0] == nil }
            unchanged = nil
        }
        for name in names {
            guard let layout = layouts[name] else { continue }
            guard let root = roots[name], root >= 1 else { continue }
            // Unchanged pages come from the copy of the same table.
            let kept =
                changed == nil
                ? nil : self.tables[name].flatMap { $0.layout == layout && $0.usable == usable ? $0 : nil }
            if let kept, let changed, kept.tree.root == root, pageCount >= changed.appendedAfter,
                let updated = update(
                    kept.tree, changed: changed, pageSize: pageSize, usable: usable, pageCount: pageCount)
            {
                switch updated {
                case .success(let delta) where delta.reached.isEmpty && delta.removed.isEmpty:
                    unchanged?.insert(name)
                case .success(let delta): deltas[name] = delta
                case .failure(let failure) where failure.tooLarge: tooLarge.insert(layout.name)
                case .failure(let failure): return .failure(failure)
                }
                if checking, case .success(let delta) = updated {
                    var tree = kept.tree
                    _ = Self.apply(delta, to: &tree)
                    let whole = walk(root, pageSize: pageSize, usable: usable, pageCount: pageCount)
                    if case .success(let truth) = whole {
                        let same =
                            truth.pages == tree.pages && truth.cellOf == tree.cellOf && truth.parentOf == tree.parentOf
                            && Set(truth.nodes.keys) == Set(tree.nodes.keys)
                        checked.compared += 1
                        if !same { checked.differences += 1 }
                    }
                }
                continue
            }
            switch walk(root, pageSize: pageSize, usable: usable, pageCount: pageCount, kept: kept, changed: changed) {
            case .success(let tree):
                tables[name] = Table(layout: layout, usable: usable, encoding: encodingLayouts.encoding, tree: tree)
            case .failure(let failure) where failure.tooLarge:
                tooLarge.insert(layout.name)
            case .failure(let failure):
                return .failure(failure)
            }
        }
        // Several commits: each one's rows, when their journals resolve
        // every state between (the same schema, no auto-vacuum, every
        // table read whole and in the copy, no transaction rolled back).
        var between: [[String: Result<Tree, Failure>]]?
        var betweenFailure: String?
        if changed == nil, let captured, let previous = self.counter, captured.count >= 2,
            counter &- previous == UInt32(captured.count),
            captured.enumerated().allSatisfy({ $0.element.startCounter == previous &+ UInt32($0.offset) })
        {
            if rollbacks > 0 {
                betweenFailure = "a transaction was rolled back between"
            } else if copyLacksTables || headerCookie != cookieOfCopy || pageSize != pageSizeOfCopy
                || !tooLarge.isEmpty || header.withUnsafeBytes({ $0.bigEndianUInt32(at: 52) }) != 0
            {
                betweenFailure = "the schema, the page size or auto-vacuum"
            } else {
                switch statesBetween(
                    captured, now: tables, pageSize: pageSize, usable: usable, cookie: headerCookie,
                    pageCount: pageCount)
                {
                case .success(let states): between = states
                case .failure(let failure) where failure.overtaken:
                    // The file moved on under the reading: read again.
                    return .failure(failure)
                case .failure(let failure): betweenFailure = failure.reason
                }
            }
        } else if let previous = self.counter, counter &- previous > 1 {
            betweenFailure =
                "journals \(captured.map { $0.map { $0.startCounter.map(String.init) ?? "-" } } ?? ["none"]) for \(previous)..<\(counter), waiting \(waitingForJournal)"
        }
        return .success(
            State(
                counter: counter, usedJournals: changed != nil,
                cookie: headerCookie, bytes: Int(pageCount) * pageSize, pageSize: pageSize, tables: tables,
                deltas: deltas, tooLarge: tooLarge,
                unchanged: unchanged, checked: checked, between: between, betweenFailure: betweenFailure))
    }

    /// Every page of a b-tree, from its root: interior pages' children,
    /// cells' overflow chains.
    ///
    /// With `changed` (the pages the commits may have written), a page they
    /// did not write is taken from `kept`, the last reading's copy of the
    /// table, instead of the file.
    private func walk(
        _ root: UInt32, pageSize: Int, usable: Int, pageCount: UInt32, kept: Table? = nil,
        changed: ChangedPages? = nil
    ) -> Result<Tree, Failure> {
        Self.walk(root, pageSize: pageSize, usable: usable, pageCount: pageCount) { number in
            if let changed, !changed.mayHaveChanged(number), let copy = kept?.pages[number] {
                return .success((copy, kept?.tree.nodes[number]))
            }
            guard let content = bytes(count: pageSize, at: Int64(number - 1) * Int64(pageSize)) else {
                return .failure(Failure(reason: "the file was written while it was read"))
            }
            return .success((content, nil))
        }
    }

    /// Every page of a b-tree whose pages `page` reads (with its parsed
    /// node when it has one: a page of a copy is not parsed again).
    private static func walk(
        _ root: UInt32, pageSize: Int, usable: Int, pageCount: UInt32,
        page: (UInt32) -> Result<(bytes: [UInt8], node: BTreePage?), Failure>
    ) -> Result<Tree, Failure> {
        var pages: [UInt32: [UInt8]] = [:]
        var cellOf: [UInt32: UInt32] = [:]
        var nodes: [UInt32: BTreePage] = [:]
        var parentOf: [UInt32: UInt32] = [:]
        var stack = [root]
        while let next = stack.popLast() {
            guard pages[next] == nil, next >= 1, next <= pageCount else {
                return .failure(Failure(reason: "page \(next) is linked twice or lies past the end"))
            }
            let content: [UInt8]
            let parsed: BTreePage?
            switch page(next) {
            case .success(let read):
                content = read.bytes
                parsed =
                    read.node
                    ?? content.withUnsafeBytes { BTreePage($0, page: next, usableSize: usable, pageCount: pageCount) }
            case .failure(let failure): return .failure(failure)
            }
            pages[next] = content
            guard let node = parsed else { return .failure(Failure(reason: "page \(next) is not a b-tree page")) }
            nodes[next] = node
            // A row too large to copy: its overflow pages are not even read.
            if node.largestPayload > UInt64(BTreeCells.largestPayload) {
                return .failure(Failure(reason: BTreeCells.tooLargeReason, tooLarge: true))
            }
            stack += node.children
            for child in node.children { parentOf[child] = next }
            if let failure = Self.readChains(
                of: node, on: next, pageSize: pageSize, pageCount: pageCount, pages: &pages, cellOf: &cellOf,
                read: { try? page($0).get().bytes })
            {
                return .failure(failure)
            }
        }
        return .success(Tree(root: root, pages: pages, cellOf: cellOf, nodes: nodes, parentOf: parentOf))
    }

    /// The wanted tables in each state between the last reading (the copy)
    /// and this one (`tables`), when every commit between left its journal
    /// (`JournalHistory`): `states[k - 1]` is the tables after commit `k`,
    /// for `k` in `1..<journals.count`, each one's tree or why a page of it
    /// cannot be proven (then the two commits beside that state are unknown
    /// for that table). The first state, resolved the same way, must be the
    /// copy page for page, or nothing is trusted.
    private func statesBetween(
        _ journals: [JournalPages], now tables: [String: Table], pageSize: Int, usable: Int, cookie: UInt32,
        pageCount: UInt32
    ) -> Result<[[String: Result<Tree, Failure>]], Failure> {
        guard Set(tables.keys) == Set(self.tables.keys) else {
            return .failure(Failure(reason: "the tables read are not the copy's"))
        }
        for (name, table) in tables {
            guard let copy = self.tables[name], copy.layout == table.layout, copy.usable == usable,
                copy.tree.root == table.tree.root
            else { return .failure(Failure(reason: "\(name) is not the copy's table")) }
        }
        // Set when a page of the file could not be read (a writer overtook
        // the reading).
        var overtaken = false
        var currentPages: [UInt32: [UInt8]] = [:]
        for table in tables.values { currentPages.merge(table.pages) { first, _ in first } }
        let read = currentPages
        var copyPages: [UInt32: [UInt8]] = [:]
        for table in self.tables.values { copyPages.merge(table.pages) { first, _ in first } }
        let copy = copyPages
        let history: JournalHistory
        do {
            history = try JournalHistory(
                journals: journals, pageSize: pageSize, usable: usable, cookie: cookie, currentPageCount: pageCount,
                initial: { copy[$0] }
            ) { [self] number in
                if let page = read[number] { return page }
                let page = bytes(count: pageSize, at: Int64(number - 1) * Int64(pageSize))
                if page == nil { overtaken = true }
                return page
            }
        } catch {
            return .failure(Failure(reason: error.reason, overtaken: overtaken))
        }
        var states: [[String: Result<Tree, Failure>]] = []
        for state in 0..<history.commits {
            var trees: [String: Result<Tree, Failure>] = [:]
            for (name, table) in tables {
                let walked = Self.walk(
                    table.tree.root, pageSize: pageSize, usable: usable, pageCount: history.pageCount(at: state)
                ) { number in
                    history.page(number, at: state).map { ($0, nil) }.mapError { Failure(reason: $0.reason) }
                }
                if case .failure(var failure) = walked, overtaken || state == 0 {
                    failure.overtaken = overtaken
                    return .failure(failure)
                }
                trees[name] = walked
            }
            if state == 0 {
                for (name, tree) in trees where (try? tree.get().pages) != self.tables[name]?.tree.pages {
                    return .failure(Failure(reason: "\(name) as the journals resolve it is not the copy"))
                }
            } else {
                states.append(trees)
            }
        }
        return .success(states)
    }

    /// The tree after a commit that changed only `changed`'s pages, from
    /// the last reading's (`kept`), looking at those pages alone: the
    /// changed pages, their ancestors, and whatever they now point to. An
    /// unchanged page whose subtree holds no changed page, under the same
    /// parent, is the same subtree; pages that only changed pages pointed
    /// to, and no longer do, are gone with their subtrees. `nil` when the
    /// copy does not say enough (then the whole tree is walked).
    ///
    /// Pointers live in pages: a page the commit did not write points where
    /// it did, so only a written page can link, unlink or move a subtree,
    /// and every page it links is either written too or an unchanged
    /// subtree it took from another written page.
    private func update(
        _ kept: Tree, changed: ChangedPages, pageSize: Int, usable: Int, pageCount: UInt32
    ) -> Result<Delta, Failure>? {
        guard kept.pages[kept.root] != nil, kept.cellOf[kept.root] == nil else { return nil }
        // The b-tree pages to look at again: the written ones, and the cell
        // pages of written overflow pages (their chains).
        var revisit = Set<UInt32>()
        for page in kept.pages.keys where changed.mayHaveChanged(page) {
            revisit.insert(kept.cellOf[page] ?? page)
        }
        if revisit.isEmpty { return .success(Delta()) }
        // And their ancestors, down to which the walk goes.
        var onPath = revisit
        for page in revisit {
            var link = page
            while let parent = kept.parentOf[link], onPath.insert(parent).inserted { link = parent }
        }
        /// A page's bytes: the file's if the commit may have written it.
        func content(_ number: UInt32) -> (bytes: [UInt8], kept: Bool)? {
            if !changed.mayHaveChanged(number), let copy = kept.pages[number] { return (copy, true) }
            return bytes(count: pageSize, at: Int64(number - 1) * Int64(pageSize)).map { ($0, false) }
        }
        /// Whether a page is a b-tree page of the copy (not an overflow page).
        func isNode(_ page: UInt32) -> Bool { kept.nodes[page] != nil && kept.cellOf[page] == nil }

        // The pages reached again, with what they now are.
        var pages: [UInt32: [UInt8]] = [:]
        var nodes: [UInt32: BTreePage] = [:]
        var parentOf: [UInt32: UInt32] = [:]
        var cellOf: [UInt32: UInt32] = [:]
        // The copy's pages that may have left the tree: old children and
        // old overflow chains of the pages reached again.
        var leaving: [UInt32] = []
        // The copy's subtrees kept whole (still under the same page).
        var keptWhole = Set<UInt32>()
        var stack: [(page: UInt32, parent: UInt32?)] = [(kept.root, nil)]
        while let (next, parent) = stack.popLast() {
            guard pages[next] == nil, next >= 1, next <= pageCount else {
                return .failure(Failure(reason: "page \(next) is linked twice or lies past the end"))
            }
            guard let (bytes, fromCopy) = content(next) else {
                return .failure(Failure(reason: "the file was written while it was read"))
            }
            let node: BTreePage
            if fromCopy, isNode(next), let copy = kept.nodes[next] {
                node = copy
            } else {
                guard
                    let parsed = bytes.withUnsafeBytes({
                        BTreePage($0, page: next, usableSize: usable, pageCount: pageCount)
                    })
                else { return .failure(Failure(reason: "page \(next) is not a b-tree page")) }
                node = parsed
            }
            if node.largestPayload > UInt64(BTreeCells.largestPayload) {
                return .failure(Failure(reason: BTreeCells.tooLargeReason, tooLarge: true))
            }
            pages[next] = bytes
            nodes[next] = node
            if let parent { parentOf[next] = parent }
            let old = isNode(next) ? kept.nodes[next] : nil
            if let old { leaving += old.children }
            for child in node.children {
                // The same subtree, under the same page, untouched: kept whole.
                if isNode(child), !onPath.contains(child), !changed.mayHaveChanged(child),
                    kept.parentOf[child] == next
                {
                    keptWhole.insert(child)
                    continue
                }
                stack.append((child, next))
            }
            // Its overflow chains, when it or one of them was written, or it
            // is new here.
            guard old == nil || revisit.contains(next) || !fromCopy else { continue }
            if let old { leaving += Self.chainPages(of: old, on: next, in: kept) }
            if let failure = Self.readChains(
                of: node, on: next, pageSize: pageSize, pageCount: pageCount, pages: &pages, cellOf: &cellOf,
                read: { content($0)?.bytes })
            {
                return .failure(failure)
            }
        }
        // What left: the copy's pages no longer reached, with their
        // subtrees and chains (as the copy has them). A b-tree page reached
        // again had its old children and chains looked at in the walk; one
        // reached again as an overflow page leaves its old ones behind.
        var delta = Delta()
        var gone = leaving
        var dropped = Set<UInt32>()
        while let page = gone.popLast() {
            guard !keptWhole.contains(page), nodes[page] == nil, dropped.insert(page).inserted else { continue }
            if cellOf[page] == nil {
                guard kept.pages[page] != nil else { continue }
                delta.removed.append(page)
            }
            guard isNode(page), let node = kept.nodes[page] else { continue }
            gone += node.children
            gone += Self.chainPages(of: node, on: page, in: kept)
        }
        // What was reached again, as it now is.
        for (page, bytes) in pages {
            delta.reached[page] = Delta.Page(
                bytes: bytes, node: cellOf[page] == nil ? nodes[page] : nil, parent: parentOf[page],
                cell: cellOf[page])
        }
        return .success(delta)
    }

    /// Reads a b-tree page's overflow chains into `pages` (each page's cell
    /// page into `cellOf`); a failure when a chain is too long, runs past
    /// the end or meets a page read already.
    private static func readChains(
        of node: BTreePage, on cell: UInt32, pageSize: Int, pageCount: UInt32, pages: inout [UInt32: [UInt8]],
        cellOf: inout [UInt32: UInt32], read: (UInt32) -> [UInt8]?
    ) -> Failure? {
        for first in node.overflows {
            var link = first
            var chain = 0
            while link != 0 {
                chain += 1
                if chain * pageSize > BTreeCells.largestPayload {
                    return Failure(reason: BTreeCells.tooLargeReason, tooLarge: true)
                }
                guard pages[link] == nil, link <= pageCount, link >= 1, let overflow = read(link)
                else { return Failure(reason: "overflow page \(link) cannot be read") }
                pages[link] = overflow
                cellOf[link] = cell
                link = overflow.withUnsafeBytes { $0.bigEndianUInt32(at: 0) }
            }
        }
        return nil
    }

    /// The overflow pages of a b-tree page's chains, as a tree has them.
    private static func chainPages(of node: BTreePage, on cell: UInt32, in tree: Tree) -> [UInt32] {
        var chainPages: [UInt32] = []
        for first in node.overflows {
            var link = first
            while link != 0, let page = tree.pages[link], tree.cellOf[link] == cell, chainPages.count < 1 << 20 {
                chainPages.append(link)
                link = page.withUnsafeBytes { $0.bigEndianUInt32(at: 0) }
            }
        }
        return chainPages
    }

    /// What a commit changed in a table's tree (`update`), to apply to it
    /// in place once the whole reading succeeded.
    struct Delta {
        struct Page {
            var bytes: [UInt8]
            /// A b-tree page's parsed node (`nil`: an overflow page).
            var node: BTreePage?
            var parent: UInt32?
            /// An overflow page's cell page.
            var cell: UInt32?
        }
        /// The pages reached again, as they now are.
        var reached: [UInt32: Page] = [:]
        /// The pages that left the tree.
        var removed: [UInt32] = []
    }

    /// A page's version before a `Delta` was applied (`bytes` `nil`: not
    /// in the tree).
    struct OldPage {
        var bytes: [UInt8]?
        var cell: UInt32?
    }

    /// Applies a delta to a tree in place; returns the old versions of the
    /// pages it touched.
    static func apply(_ delta: Delta, to tree: inout Tree) -> [UInt32: OldPage] {
        var old: [UInt32: OldPage] = [:]
        for page in delta.removed {
            old[page] = OldPage(
                bytes: tree.pages.removeValue(forKey: page), cell: tree.cellOf.removeValue(forKey: page))
            tree.parentOf[page] = nil
            tree.nodes[page] = nil
        }
        for (page, new) in delta.reached {
            if old[page] == nil { old[page] = OldPage(bytes: tree.pages[page], cell: tree.cellOf[page]) }
            tree.pages[page] = new.bytes
            tree.cellOf[page] = new.cell
            tree.nodes[page] = new.node
            tree.parentOf[page] = new.parent
        }
        return old
    }

    /// Bytes of the file as the read transaction's state of it has them,
    /// through the observer VFS (`nil` when a writer overtook the reading).
    private func bytes(count: Int, at offset: Int64) -> [UInt8]? {
        guard let (file, methods) = DatabaseHeader.openFile(of: raw.handle), let xRead = methods.xRead else {
            return nil
        }
        var bytes = [UInt8](repeating: 0, count: count)
        return xRead(file, &bytes, Int32(count), offset) == SQLITE_OK ? bytes : nil
    }

    // MARK: - Comparing

    /// A table as the last reading had it: its tree, or, when the tree was
    /// updated in place, the new tree with the old versions of the pages
    /// the update touched.
    private struct Before {
        var table: Table
        var old: [UInt32: OldPage]?
        var layout: TableLayout { table.layout }

        func page(_ number: UInt32) -> [UInt8]? {
            if let version = old?[number] { return version.bytes }
            return table.tree.pages[number]
        }

        func cell(_ number: UInt32) -> UInt32? {
            if let version = old?[number] { return version.cell }
            return table.tree.cellOf[number]
        }
    }

    /// Lets the tables no longer wanted leave the copy.
    private func dropTables(notIn wanted: RowFeedFilter) {
        for (name, table) in tables where !wanted.includes(table.layout.name) {
            disown(table, name)
            tables[name] = nil
        }
    }

    /// Its pages no longer the table's (in `owners`).
    private func disown(_ table: Table, _ name: String) {
        for page in table.pages.keys where owners[page] == name { owners[page] = nil }
    }

    /// Lets the copy go (a reading failed: it can no longer be trusted).
    private func forgetCopy() {
        counter = nil
        tables = [:]
        owners = [:]
    }

    /// What a reading changed in the copy.
    private struct Committed {
        /// The tables the reading walked whole or updated, by name: as they
        /// were (`nil`: not in the copy) and as they are.
        var read: [(name: String, before: Before?, now: Table)] = []
        /// The tables of the copy the reading no longer has, as they were.
        var gone: [(name: String, before: Before)] = []
    }

    /// Applies the reading to the copy in place (no copy of its pages is
    /// made; a table found unchanged is not touched) and keeps the pages'
    /// owners; returns what changed.
    private func commit(_ state: inout State) -> Committed {
        var committed = Committed()
        for (name, delta) in state.deltas {
            guard var table = tables.removeValue(forKey: name) else { continue }
            let old = Self.apply(delta, to: &table.tree)
            for page in delta.removed where owners[page] == name { owners[page] = nil }
            for page in delta.reached.keys { owners[page] = name }
            tables[name] = table
            committed.read.append((name, Before(table: table, old: old), table))
        }
        state.deltas = [:]
        for (name, table) in state.tables {
            let before = tables.updateValue(table, forKey: name)
            if let before { disown(before, name) }
            for page in table.pages.keys { owners[page] = name }
            committed.read.append((name, before.map { Before(table: $0, old: nil) }, table))
        }
        // A table now too large to read leaves the copy (a later reading
        // must not take its unwritten pages from a copy this one did not
        // bring up to date); so does every table the reading did not name,
        // unless it looked only at the tables a commit wrote.
        let read = Set(committed.read.map(\.name))
        for (name, table) in tables
        where state.tooLarge.contains(table.layout.name)
            || (state.unchanged.map { !read.contains(name) && !$0.contains(name) } ?? false)
        {
            disown(table, name)
            committed.gone.append((name, Before(table: table, old: nil)))
        }
        for (name, _) in committed.gone { tables[name] = nil }
        committed.read.sort { $0.name < $1.name }
        committed.gone.sort { $0.name < $1.name }
        copyLacksTables = !state.tooLarge.isEmpty
        tooLargeBefore = state.tooLarge
        cookieOfCopy = state.cookie
        pageSizeOfCopy = state.pageSize
        return committed
    }

    /// The rows that changed between two readings of a table; `nil` when a
    /// page does not read as its b-tree's.
    private static func changes(from before: Before, to now: Table) -> [RowChange]? {
        var cellPages = Set<UInt32>()
        let candidates = before.old.map { Set($0.keys) } ?? Set(before.table.pages.keys).union(now.pages.keys)
        for page in candidates where before.page(page) != now.pages[page] {
            // The page itself (read as a b-tree page in each version where it
            // is one), and the cell pages it was an overflow page of.
            cellPages.insert(page)
            if let cell = before.cell(page) { cellPages.insert(cell) }
            if let cell = now.cellOf[page] { cellPages.insert(cell) }
        }
        guard !cellPages.isEmpty else { return [] }
        guard let old = rows(of: before.table, page: before.page, cell: before.cell, on: cellPages),
            let new = rows(of: now, page: { now.pages[$0] }, cell: { now.cellOf[$0] }, on: cellPages)
        else { return nil }
        return WALRowDeriver.compare(old, new, layout: now.layout)
    }

    /// The rows on some b-tree pages of one version of a table (`page`,
    /// `cell`: its pages and overflow pages' cell pages).
    private static func rows(
        of table: Table, page: (UInt32) -> [UInt8]?, cell: (UInt32) -> UInt32?, on pages: Set<UInt32>
    ) -> [RowKey: [SQLValue]]? {
        var rows: [RowKey: [SQLValue]] = [:]
        for number in pages {
            // A page of the b-tree in this version (not an overflow page, not gone).
            guard let bytes = page(number), cell(number) == nil else { continue }
            let read = bytes.withUnsafeBytes {
                BTreeCells.read(
                    $0, page: number, usableSize: table.usable, pageCount: UInt32.max, readPage: page)
            }
            guard case .success(let cells) = read else { return nil }
            for cell in cells.cells {
                guard let (key, values) = table.layout.row(cell, encoding: table.encoding) else { return nil }
                guard rows.updateValue(values, forKey: key) == nil else { return nil }
            }
        }
        return rows
    }
}
