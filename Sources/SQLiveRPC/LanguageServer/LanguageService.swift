import Foundation
import SQLiveEngine
import SQLiveLocks
import SQLiveProtocol

/// The language server's side of a session: the open documents, the
/// checkers that judge them, and their diagnostics.
///
/// Document notifications are applied at once by the connection's reading
/// thread, in order, so a completion or hover that follows an edit sees it.
/// Checks run on one task of the service's own, which drains a stream of
/// requests: a burst of edits to one document costs one check of its
/// latest text, and the diagnostics sent last are always those of the
/// latest text.
///
/// Each database that open documents use is watched for schema changes
/// (`LiveDatabase.schemaChanges`, so sqlive's own statements and any other
/// process count): the session's database through its own live machinery,
/// another database (named by a document's first line) through a
/// read-only `LiveDatabase` of the service's own. A change checks again the
/// documents that use it.
///
/// Every read-only statement a client asks about (an inlay-hint range, a
/// document's code lenses) becomes a live inline result (`InlineResults`),
/// owned by its document: when one changes, the client is asked to
/// refresh its inlay hints and code lenses, if it can be.
///
/// Ownership: the service owns its checking task, one watching task per
/// watched database, the databases it opened for documents that name their
/// own, the refreshing task and the inline results; a database no open
/// document uses any more is closed, with its checker and reader, and
/// `stop()` ends them all.
final class LanguageService: Sendable {
    /// The database a document is checked against.
    enum DatabaseKey: Hashable, Sendable {
        /// A file, by its path.
        case file(String)
        /// The session's database, which has no file (`:memory:`).
        case sessionMemory
    }

    enum Work: Sendable {
        case check(uri: String)
        case checkAll(DatabaseKey?)
        /// After a document closed, once the checks queued before are
        /// done: what they held is freed by then.
        case giveBackMemory
    }

    struct Watch {
        var task: Task<Void, Never>
        /// Whether it watches the session's database (and must move when
        /// the session opens another).
        var isSession: Bool
    }

    // Mutable State
    //
    // Guarded by the mutex. `documents` is changed only by the reading
    // thread, in message order. `pending` holds the documents whose check
    // is queued, so that a burst of edits queues one. `checkers` caches a
    // checker per database; the session's in-memory database's checker
    // is dropped when its schema changes.
    struct State {
        var documents: [String: TextDocument] = [:]
        var encoding = PositionEncoding.utf16
        var supportsProgress = false
        var plainTextHover = false
        var sessionDatabase: LiveDatabase?
        var checkers: [DatabaseKey: SQLChecker] = [:]
        var watches: [DatabaseKey: Watch] = [:]
        var pending: Set<String> = []
        /// What was last published for each document, so that a schema
        /// change that changes nothing for it sends nothing.
        var published: [String: PublishDiagnosticsNotification.Params] = [:]
        /// The confined readers inline results are tried on, per file.
        var readers: [DatabaseKey: ConfinedReader] = [:]
        /// The databases the service opened itself, read-only, for
        /// documents that name their own.
        var opened: [DatabaseKey: LiveDatabase] = [:]
        var inlayHintRefresh = false
        var codeLensRefresh = false
        var nextRefreshID = 0
        var stopped = false
    }
    let state = Locked(State())
    let writer: MessageWriter
    private let work: AsyncStream<Work>.Continuation
    /// The task that runs the checks, one at a time.
    private let checking = Locked<Task<Void, Never>?>(nil)
    /// Each document's live inline results.
    let inline: InlineResults
    private let refreshes: AsyncStream<Void>.Continuation
    /// The task that asks the client to refresh, at most every 50 ms.
    private let refreshing = Locked<Task<Void, Never>?>(nil)

    /// What `start()` drains: the checks, and the requests to refresh.
    private let workStream: AsyncStream<Work>
    private let refreshStream: AsyncStream<Void>

    /// Makes the service; it starts nothing (`start()` does).
    init(writer: MessageWriter) {
        self.writer = writer
        let (stream, continuation) = AsyncStream<Work>.makeStream()
        workStream = stream
        work = continuation
        let (refreshStream, refreshes) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.refreshStream = refreshStream
        self.refreshes = refreshes
        inline = InlineResults(changed: { refreshes.yield() })
    }

    /// Starts the checking task and the refresh task, once; `stop()` ends
    /// them. Work queued before (a document opened) waits for it.
    func start() {
        let (stream, refreshStream) = (workStream, self.refreshStream)
        checking.withLock { checking in
            guard checking == nil else { return }
            checking = Task { [weak self] in
                for await item in stream {
                    guard let self else { return }
                    await self.perform(item)
                }
            }
        }
        refreshing.withLock { refreshing in
            guard refreshing == nil else { return }
            refreshing = Task { [weak self] in
                for await _ in refreshStream {
                    self?.askClientToRefresh()
                    do {
                        try await Task.sleep(for: .milliseconds(50))
                    } catch {
                        return  // Cancelled: `stop()`.
                    }
                }
            }
        }
    }

    deinit {
        stop()
    }

    /// Ends the checking and watching tasks.
    func stop() {
        let (watches, opened) = state.withLock { state in
            state.stopped = true
            defer {
                state.watches = [:]
                state.opened = [:]
                state.readers = [:]
                state.checkers = [:]
            }
            return (Array(state.watches.values), Array(state.opened.values))
        }
        for watch in watches { watch.task.cancel() }
        inline.stop()
        work.finish()
        refreshes.finish()
        checking.withLock { $0 }?.cancel()
        refreshing.withLock { $0 }?.cancel()
        closeLater(opened)
    }

    /// Closes databases the service opened; closing awaits the engine, so
    /// a task does it, which ends with the closing.
    private func closeLater(_ databases: [LiveDatabase]) {
        guard !databases.isEmpty else { return }
        Task { for database in databases { await database.close() } }
    }

    // MARK: - Settings

    /// What `initialize` negotiated.
    func configure(
        encoding: PositionEncoding, supportsProgress: Bool, plainTextHover: Bool = false,
        inlayHintRefresh: Bool = false, codeLensRefresh: Bool = false
    ) {
        state.withLock { state in
            state.encoding = encoding
            state.supportsProgress = supportsProgress
            state.plainTextHover = plainTextHover
            state.inlayHintRefresh = inlayHintRefresh
            state.codeLensRefresh = codeLensRefresh
        }
    }

    /// Asks the client to refresh its inlay hints and code lenses, as far
    /// as it said it can: an inline result changed.
    private func askClientToRefresh() {
        let methods = state.withLock { state -> [(RequestID, String)] in
            guard !state.stopped else { return [] }
            var methods: [(RequestID, String)] = []
            for (supported, method) in [
                (state.inlayHintRefresh, InlayHintRefreshRequest.method),
                (state.codeLensRefresh, CodeLensRefreshRequest.method),
            ] where supported {
                state.nextRefreshID += 1
                methods.append((.string("sqlive-refresh-\(state.nextRefreshID)"), method))
            }
            return methods
        }
        for (id, method) in methods {
            writer.send(OutgoingMessage.request(id: id, method: method))
        }
    }

    /// Whether hovers are sent as plain text (the client's first choice).
    var plainTextHover: Bool {
        state.withLock { $0.plainTextHover }
    }

    var encoding: PositionEncoding {
        state.withLock { $0.encoding }
    }

    /// The session opened a database (or closed it: nil): documents that
    /// use the session's database are checked against the new one.
    func sessionDatabaseChanged(_ database: LiveDatabase?) {
        let moved = state.withLock { state in
            state.sessionDatabase = database
            state.checkers[.sessionMemory] = nil
            let moved = state.watches.filter { $0.value.isSession }
            for key in moved.keys { state.watches[key] = nil }
            return moved
        }
        for watch in moved.values { watch.task.cancel() }
        inline.endAll()
        updateWatches()
        work.yield(.checkAll(nil))
    }

    // MARK: - Documents

    func didOpen(_ params: DidOpenTextDocumentNotification.Params) {
        let item = params.textDocument
        state.withLock { state in
            state.documents[item.uri] = TextDocument(uri: item.uri, version: item.version, text: item.text)
        }
        updateWatches()
        scheduleCheck(item.uri)
    }

    func didChange(_ params: DidChangeTextDocumentNotification.Params) {
        let uri = params.textDocument.uri
        let known = state.withLock { state in
            guard var document = state.documents[uri] else { return false }
            state.documents[uri] = nil  // no copy while it is edited
            document.apply(params.contentChanges, version: params.textDocument.version, encoding: state.encoding)
            state.documents[uri] = document
            return true
        }
        guard known else {
            ServerLog.warning("didChange for a document that is not open: \(uri)")
            return
        }
        updateWatches()
        scheduleCheck(uri)
        if let text = document(uri).map({ SQLSource(bytes: $0.bytes) }) {
            inline.prune(uri: uri, keeping: Set(text.statements.map { text.text(of: $0) }))
        }
    }

    func didClose(_ params: DidCloseTextDocumentNotification.Params) {
        let uri = params.textDocument.uri
        state.withLock { state in
            state.documents[uri] = nil
            state.published[uri] = nil
        }
        inline.close(uri: uri)
        updateWatches()
        publish(PublishDiagnosticsNotification.Params(uri: uri, version: nil, diagnostics: []))
        // What the document held is freed; glibc keeps freed pages in its
        // arenas unless asked to give them back: now, and again after the
        // checks queued before (a check under way still holds the text).
        ProcessMemory.giveBackFreed()
        work.yield(.giveBackMemory)
    }

    /// The document, as the last notification left it.
    func document(_ uri: String) -> TextDocument? {
        state.withLock { $0.documents[uri] }
    }

    private func scheduleCheck(_ uri: String) {
        let queued = state.withLock { !$0.pending.insert(uri).inserted }
        if !queued { work.yield(.check(uri: uri)) }
    }

    // MARK: - Databases

    /// The database a document is checked against: its first line's, else
    /// the session's; nil when there is none.
    func databaseKey(for document: TextDocument) -> DatabaseKey? {
        Self.databaseKey(for: document, session: state.withLock { $0.sessionDatabase })
    }

    private static func databaseKey(for document: TextDocument, session: LiveDatabase?) -> DatabaseKey? {
        if let declared = document.declaredDatabase {
            return .file(DatabaseLocation(declared).filePath ?? declared)
        }
        return session.map(key(of:))
    }

    private static func key(of database: LiveDatabase) -> DatabaseKey {
        database.location.filePath.map { .file($0) } ?? .sessionMemory
    }

    /// The session's database, when a document is checked against it.
    func sessionDatabase(for key: DatabaseKey) -> LiveDatabase? {
        state.withLock { state in
            guard let database = state.sessionDatabase, Self.key(of: database) == key else { return nil }
            return database
        }
    }

    /// The checker of a database, opened once.
    func checker(for key: DatabaseKey) async throws(SQLiveError) -> SQLChecker {
        if let checker = state.withLock({ $0.checkers[key] }) { return checker }
        let checker: SQLChecker
        switch key {
        case .file(let path):
            // Named by a document: never a FIFO, never a wait on the pool.
            try await SpecialFiles.checkOffThePool(path)
            checker = try SQLChecker(.file(path))
        case .sessionMemory:
            guard let database = sessionDatabase(for: key) else { throw .closed }
            checker = try await database.makeChecker()
        }
        state.withLock { $0.checkers[key] = checker }
        return checker
    }

    /// The checker of a document's database.
    func checker(for document: TextDocument) async throws(SQLiveError) -> SQLChecker? {
        guard let key = databaseKey(for: document) else { return nil }
        return try await checker(for: key)
    }

    /// Starts watching the databases open documents use, and stops
    /// watching those no document uses any more.
    ///
    /// A database no open document uses any more is let go: its watch, its
    /// checker, its confined reader, and the database itself when the
    /// service opened it, so that no file stays open for it.
    private func updateWatches() {
        let (started, stopped, closed) = state.withLock { state -> ([DatabaseKey], [Watch], [LiveDatabase]) in
            guard !state.stopped else { return ([], [], []) }
            let used = Set(
                state.documents.values.compactMap { Self.databaseKey(for: $0, session: state.sessionDatabase) })
            let stopped = state.watches.filter { !used.contains($0.key) }
            for key in stopped.keys { state.watches[key] = nil }
            for key in state.checkers.keys where !used.contains(key) { state.checkers[key] = nil }
            for key in state.readers.keys where !used.contains(key) { state.readers[key] = nil }
            let closed = state.opened.filter { !used.contains($0.key) }
            for key in closed.keys { state.opened[key] = nil }
            return (
                used.filter { state.watches[$0] == nil }.sorted { "\($0)" < "\($1)" }, Array(stopped.values),
                Array(closed.values)
            )
        }
        for watch in stopped { watch.task.cancel() }
        closeLater(closed)
        for key in started { startWatching(key) }
    }

    /// The live database of a key: the session's, or one the service opens
    /// read-only (kept until no open document uses it).
    func liveDatabase(for key: DatabaseKey) async throws(SQLiveError) -> LiveDatabase {
        if let session = sessionDatabase(for: key) { return session }
        if let opened = state.withLock({ $0.opened[key] }) { return opened }
        guard case .file(let path) = key else { throw .closed }
        try await SpecialFiles.checkOffThePool(path)
        let database = try await LiveDatabase.open(.file(path), options: LiveDatabase.Options(readonly: true))
        let kept = state.withLock { state -> LiveDatabase? in
            guard !state.stopped else { return nil }
            if let existing = state.opened[key] { return existing }
            state.opened[key] = database
            return database
        }
        if kept !== database { await database.close() }
        guard let kept else { throw .closed }
        return kept
    }

    /// The confined reader that tries inline results, for a file.
    func reader(for key: DatabaseKey) -> ConfinedReader? {
        guard case .file(let path) = key else { return nil }
        if let reader = state.withLock({ $0.readers[key] }) { return reader }
        let reader: ConfinedReader
        do {
            reader = try ConfinedReader(path: path)
        } catch {
            ServerLog.warning("inline results cannot read \(path) confined: \(error.description)")
            return nil
        }
        return state.withLock { state in
            if let existing = state.readers[key] { return existing }
            state.readers[key] = reader
            return reader
        }
    }

    private func startWatching(_ key: DatabaseKey) {
        let session = sessionDatabase(for: key)
        let work = self.work
        let task = Task { [weak self] in
            let database: LiveDatabase
            if let session {
                database = session
            } else {
                do {
                    guard let opened = try await self?.liveDatabase(for: key) else { return }
                    database = opened
                } catch {
                    ServerLog.debug("cannot watch \(key) for schema changes: \(error)")
                    return
                }
            }
            do {
                let changes = try await database.schemaChanges()
                // What changed before the watch began is checked once now.
                work.yield(.checkAll(key))
                for await _ in changes {
                    self?.schemaChanged(key)
                }
            } catch {
                ServerLog.debug("cannot watch the schema of \(database.location): \(error)")
            }
        }
        let kept = state.withLock { state in
            guard !state.stopped, state.watches[key] == nil else { return false }
            state.watches[key] = Watch(task: task, isSession: session != nil)
            return true
        }
        if !kept { task.cancel() }
    }

    private func schemaChanged(_ key: DatabaseKey) {
        if key == .sessionMemory {
            state.withLock { _ = $0.checkers.removeValue(forKey: key) }
        }
        work.yield(.checkAll(key))
    }
}
