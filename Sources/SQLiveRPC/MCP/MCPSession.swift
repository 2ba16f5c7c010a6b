import Foundation
import SQLiveEngine
import SQLiveLocks
import SQLiveProtocol

/// One MCP client's session: the database, the confined reader that runs
/// the agent's statements, its live queries and its subscriptions.
///
/// The live queries' state is the engine's: the session keeps one table,
/// of handles, by name. Each handle's events are forwarded by a task the
/// session owns (ended by `unwatch` or `close`); a change of a subscribed
/// resource becomes `notifications/resources/updated`, coalesced as the
/// engine coalesces refreshes.
final class MCPSession: Sendable {
    let writer: MessageWriter
    let options: MCPServer.Options
    /// The database path as the client's command line gave it.
    let shownPath: String
    let database: LiveDatabase?
    /// Run the agent's statements, a reader per call; nil for an in-memory
    /// database, which no other connection can read (with writes allowed,
    /// statements then run on the session's connection).
    let readers: ConfinedReaderPool?
    /// Taken while a statement runs on the session's connection (writes
    /// allowed): one at a time, so that cancelling one interrupts no other.
    let sessionStatement = Locked(())
    /// Explains statements on a connection of its own, as the language
    /// server's hovers do (no lock in rollback-journal modes); nil for an
    /// in-memory database, explained on the session's connection.
    let checker: SQLChecker?
    /// Why the database could not be opened, or cannot be read confined.
    let unavailable: String?
    /// The session's own live queries (over HTTP, each session has its
    /// own; over stdio, the database's).
    let directory: LiveQueryDirectory?
    /// The live queries named `shared:…`, which every session of the
    /// process sees (`sqlive --mcp --http`); nil over stdio.
    let sharedDirectory: LiveQueryDirectory?
    /// Whether the session closes the database when it ends (stdio: its
    /// own; HTTP: the hub's, shared by every session).
    let ownsDatabase: Bool
    /// The session's own connection for the statements that write (a
    /// session of the handshake era over HTTP, writes allowed), opened at
    /// its first write; nil: they run on the database's session connection.
    let ownConnection: MCPOwnConnection?

    // Mutable State: guarded by the mutex; changed by the lane (tools), the
    // reading thread (subscriptions, lifecycle, the era) and the forwarders.
    struct State {
        /// Turns the directory's events into resource updates.
        var liveForwarder: Task<Void, Never>?
        /// The same for the shared directory's (HTTP sessions).
        var sharedForwarder: Task<Void, Never>?
        /// The change feed's latest commits, from the first `changes` call on.
        var changeLog: MCPChangeLog?
        var subscriptions: Set<String> = []
        /// Whether `initialize` was answered: notifications wait for it.
        var initialized = false
        var schemaForwarder: Task<Void, Never>?
        var closed = false
        /// The protocol's era, decided by the first request.
        var era = MCPEra()
        /// The stateless era's open `subscriptions/listen` requests, by key.
        var listeners: [Int: Listener] = [:]
        var nextListener = 0
    }
    let state = Locked(State())

    /// What `wait` waits on: how many events (changes and failures) the
    /// forwarder saw for each live query, and whether the session closed.
    /// Broadcast at each event, at a cancel, and at the close.
    struct Arrivals {
        var events: [String: Int] = [:]
        var closed = false
        /// `wait` calls under way (they each hold a thread).
        var waiting = 0
    }
    let arrivals = Condition(Arrivals())
    /// The `wait` calls under way in the whole server, when its sessions
    /// share a budget of threads (`--mcp --http`): a wait holds a thread.
    let serverWaits: WaitSlots?

    /// How many `wait` calls may be under way at once in a server whose
    /// sessions share their threads, at most.
    final class WaitSlots: Sendable {
        let maximum: Int
        private let taken = Locked(0)

        init(maximum: Int) { self.maximum = maximum }

        func take() -> Bool {
            taken.withLock { taken in
                guard taken < maximum else { return false }
                taken += 1
                return true
            }
        }

        func give() { taken.withLock { $0 -= 1 } }
    }
    /// The result each live query last gave the agent (`watch`, `wait`,
    /// its resource): what `wait`'s changes are counted from.
    let seen = Locked<[String: LiveQuerySnapshot]>([:])

    private init(
        writer: MessageWriter, options: MCPServer.Options, shownPath: String, database: LiveDatabase?,
        readers: ConfinedReaderPool? = nil, checker: SQLChecker? = nil, unavailable: String?,
        directory: LiveQueryDirectory? = nil, sharedDirectory: LiveQueryDirectory? = nil, ownsDatabase: Bool = true,
        ownConnection: MCPOwnConnection? = nil, serverWaits: WaitSlots? = nil
    ) {
        self.ownConnection = ownConnection
        self.serverWaits = serverWaits
        self.writer = writer
        self.options = options
        self.shownPath = shownPath
        self.database = database
        self.readers = readers
        self.checker = checker
        self.unavailable = unavailable
        self.directory = directory ?? database?.directory
        self.sharedDirectory = sharedDirectory
        self.ownsDatabase = ownsDatabase
    }

    /// A session over a database another owner opened and closes (the
    /// HTTP transport's hub): live queries of its own, and the shared ones.
    static func open(
        sharing database: LiveDatabase?, unavailable: String?, shownAs shownPath: String, options: MCPServer.Options,
        writer: MessageWriter, connections: MCPOwnConnection.Slots? = nil, readers shared: SharedReaders? = nil
    ) async -> MCPSession {
        guard let database, unavailable == nil else {
            return MCPSession(
                writer: writer, options: options, shownPath: shownPath, database: nil,
                unavailable: unavailable ?? "no database is open", ownsDatabase: false)
        }
        let (readers, checker, unavailable) =
            if let shared {
                (shared.readers, shared.checker, shared.unavailable)
            } else {
                await Self.readers(database, options: options)
            }
        let session = MCPSession(
            writer: writer, options: options, shownPath: shownPath, database: database, readers: readers,
            checker: checker, unavailable: unavailable, directory: database.makeDirectory(),
            sharedDirectory: database.directory, ownsDatabase: false,
            ownConnection: options.allowWrites && !database.info.readonly
                ? connections.map { MCPOwnConnection(database: database, slots: $0) } : nil,
            serverWaits: shared?.waits)
        await session.startSchemaForwarding()
        session.startLiveForwarding()
        return session
    }

    /// Opens the database (read-only unless writes are allowed) and its
    /// confined reader; a failure is logged and told to every call.
    static func open(path: String, shownAs shownPath: String, options: MCPServer.Options, writer: MessageWriter) async
        -> MCPSession
    {
        var databaseOptions = LiveDatabase.Options()
        databaseOptions.readonly = !options.allowWrites
        if let budget = options.refreshBudget { databaseOptions.liveQueries.refreshBudget = budget }
        let database: LiveDatabase
        do {
            database = try await LiveDatabase.open(DatabaseLocation(path), options: databaseOptions)
        } catch {
            ServerLog.warning("cannot open \(shownPath): \(error.description)")
            return MCPSession(
                writer: writer, options: options, shownPath: shownPath, database: nil,
                unavailable: "cannot open \(shownPath): \(error.description)")
        }
        if let reason = database.info.readonlyReason {
            ServerLog.warning("\(shownPath) is opened read-only: \(reason)")
        }
        if options.allowWrites && !database.info.readonly {
            do {
                try await database.confineSession()
            } catch {
                ServerLog.warning("cannot confine the session's connection: \(error.description)")
                await database.close()
                return MCPSession(
                    writer: writer, options: options, shownPath: shownPath, database: nil,
                    unavailable: "cannot confine the session's connection: \(error.description)")
            }
        }
        let (readers, checker, unavailable) = await Self.readers(database, options: options)
        let session = MCPSession(
            writer: writer, options: options, shownPath: shownPath, database: database, readers: readers,
            checker: checker, unavailable: unavailable)
        await session.startSchemaForwarding()
        session.startLiveForwarding()
        return session
    }

    /// Confined readers and a checker that several sessions share (the
    /// HTTP transport's: a session costs no connection of its own to read),
    /// or why there are none.
    struct SharedReaders: Sendable {
        let readers: ConfinedReaderPool?
        let checker: SQLChecker?
        let unavailable: String?
        /// The `wait` calls under way in the server, bounded.
        let waits: WaitSlots

        /// The readers of `database`, at most `capacity` open at once, and
        /// at most `waits` `wait` calls under way at once.
        static func open(_ database: LiveDatabase, options: MCPServer.Options, capacity: Int, waits: Int) async
            -> SharedReaders
        {
            let (readers, checker, unavailable) = await MCPSession.readers(
                database, options: options, capacity: capacity)
            return SharedReaders(
                readers: readers, checker: checker, unavailable: unavailable, waits: WaitSlots(maximum: waits))
        }
    }

    /// The confined readers and the checker a session runs the agent's
    /// statements on, or why it cannot.
    private static func readers(
        _ database: LiveDatabase, options: MCPServer.Options, capacity: Int = MCPSession.concurrentCalls
    ) async -> (ConfinedReaderPool?, SQLChecker?, String?) {
        var readers: ConfinedReaderPool?
        var unavailable: String?
        do {
            readers = try database.makeConfinedReaderPool(capacity: capacity)
        } catch {
            if !options.allowWrites {
                unavailable =
                    "\(error.description); give sqlive --mcp a database file, or --allow-writes for a scratch "
                    + "in-memory database"
                ServerLog.warning("\(unavailable!)")
            }
        }
        var checker: SQLChecker?
        if readers != nil {
            do {
                checker = try await database.makeChecker()
            } catch {
                // `explain` runs on the session's connection instead.
                ServerLog.warning("cannot open a checker for explain: \(error.description)")
            }
        }
        return (readers, checker, unavailable)
    }

    /// How many of the agent's statements may run at once, each on a
    /// confined reader of its own; more wait for one to end.
    static let concurrentCalls = 4

    /// Whether the agent's statements may write.
    var allowsWrites: Bool { options.allowWrites && database?.info.readonly == false }

    /// The open database, or the reason there is none.
    func openDatabase() throws(ToolFailure) -> LiveDatabase {
        guard let database, unavailable == nil else { throw ToolFailure(unavailable ?? "no database is open") }
        return database
    }

    /// One task for every live query the agent watches (the database's
    /// directory holds them; its one stream carries their events).
    private func startLiveForwarding() {
        guard let directory else { return }
        let task = forward(directory.events(), fileChanges: true)
        let shared = sharedDirectory.flatMap { $0 === directory ? nil : forward($0.events(), fileChanges: false) }
        state.withLock {
            $0.liveForwarder = task
            $0.sharedForwarder = shared
        }
    }

    /// Forwards one directory's events as resource updates (and the file's
    /// changes, from one directory only).
    private func forward(_ events: AsyncStream<LiveQueryEvent>, fileChanges: Bool) -> Task<Void, Never> {
        Task { [weak self] in
            for await event in events {
                guard let self else { return }
                self.arrivals.withLock { arrivals in
                    switch event {
                    case .changed(let change):
                        arrivals.events[change.name, default: 0] += 1
                    case .failed(let name, _):
                        arrivals.events[name, default: 0] += 1
                    case .databaseFileChanged:
                        break
                    }
                }
                self.arrivals.broadcast()
                if let name = event.name {
                    self.resourceChanged(MCPProtocol.liveURI(name))
                } else if fileChanges {
                    // The file changed: every resource may have.
                    for name in self.watchNames { self.resourceChanged(MCPProtocol.liveURI(name)) }
                    self.resourceChanged(MCPProtocol.schemaURI)
                }
            }
        }
    }

    private func startSchemaForwarding() async {
        guard let database else { return }
        let changes: AsyncStream<Void>
        do {
            changes = try await database.schemaChanges()
        } catch {
            ServerLog.warning("the schema resource will not tell changes: \(error.description)")
            return
        }
        let task = Task { [weak self] in
            for await _ in changes {
                self?.resourceChanged(MCPProtocol.schemaURI)
            }
        }
        state.withLock { $0.schemaForwarder = task }
    }

    // MARK: - Lifecycle and notifications

    func didInitialize() {
        state.withLock { $0.initialized = true }
    }

    /// Tells a subscribed client that a resource changed: a subscription
    /// of the handshake era, or each listen that asked for the resource.
    func resourceChanged(_ uri: String) {
        let (subscribed, listens) = state.withLock { state -> (Bool, [JSONValue]) in
            guard state.initialized, !state.closed else { return (false, []) }
            if state.era.isModern {
                return (false, state.listeners.values.filter { $0.wants(uri) }.map(\.id))
            }
            return (state.subscriptions.contains(uri), [])
        }
        if subscribed {
            writer.send(
                OutgoingMessage.notification(
                    method: MCPProtocol.Notification.resourceUpdated, params: JSONValue.object(["uri": .string(uri)])))
        }
        for id in listens {
            writer.send(
                OutgoingMessage.notification(
                    method: MCPProtocol.Notification.resourceUpdated,
                    params: JSONValue.object(["uri": .string(uri), "_meta": Listener.stamp(id)])))
        }
    }

    /// Tells the client that the list of resources changed.
    func resourceListChanged() {
        let (handshake, listens) = state.withLock { state -> (Bool, [JSONValue]) in
            guard state.initialized, !state.closed else { return (false, []) }
            if state.era.isModern {
                return (false, state.listeners.values.filter { $0.filter.resourcesListChanged == true }.map(\.id))
            }
            return (true, [])
        }
        if handshake {
            writer.send(
                OutgoingMessage.notification(
                    method: MCPProtocol.Notification.resourceListChanged, params: JSONValue.object([:])))
        }
        for id in listens {
            writer.send(
                OutgoingMessage.notification(
                    method: MCPProtocol.Notification.resourceListChanged,
                    params: JSONValue.object(["_meta": Listener.stamp(id)])))
        }
    }

    func subscribe(_ uri: String) throws(ResponseError) {
        try checkExists(uri)
        state.withLock { _ = $0.subscriptions.insert(uri) }
    }

    func unsubscribe(_ uri: String) {
        state.withLock { _ = $0.subscriptions.remove(uri) }
    }

    /// Refuses a URI that names no resource.
    func checkExists(_ uri: String) throws(ResponseError) {
        if uri == MCPProtocol.schemaURI { return }
        if let name = MCPProtocol.liveName(of: uri), watch(named: name) != nil { return }
        throw Self.resourceNotFound(uri)
    }

    /// MCP's error for a URI that names no resource.
    static func resourceNotFound(_ uri: String) -> ResponseError {
        ResponseError(
            ErrorCode(rawValue: MCPProtocol.resourceNotFound), "Resource not found: \(uri)",
            data: .object(["uri": .string(uri)]))
    }

    // MARK: - Live queries

    /// The change log, started by the first call; `started`: by this one.
    func changeLog(_ database: LiveDatabase) -> (log: MCPChangeLog, started: Bool)? {
        state.withLock { state in
            guard !state.closed else { return nil }
            if let log = state.changeLog { return (log, false) }
            let log = MCPChangeLog(database)
            state.changeLog = log
            return (log, true)
        }
    }

    /// A live query the agent asked for (`watch`), by name.
    func watch(named name: String) -> LiveQueryHandle? {
        directory(for: name).handle(named: name)
    }

    /// Where a live query of this name lives: `shared:…` in the shared
    /// directory (when there is one), any other in the session's own.
    func directory(for name: String) -> LiveQueryDirectory {
        if name.hasPrefix(Self.sharedPrefix), let sharedDirectory { return sharedDirectory }
        return directory ?? LiveQueryDirectory.empty
    }

    /// The prefix of the live queries every session of the process sees.
    static let sharedPrefix = "shared:"

    var watchNames: [String] {
        let own = directory?.names ?? []
        guard let sharedDirectory, sharedDirectory !== directory else { return own }
        return (own + sharedDirectory.names.filter { $0.hasPrefix(Self.sharedPrefix) }).sorted()
    }

    /// A live query was watched: the client learns that the resource list
    /// changed.
    ///
    /// - returns: false when the session is closed.
    func didWatch() -> Bool {
        guard !state.withLock({ $0.closed }) else { return false }
        resourceListChanged()
        return true
    }

    /// Drops a live query's subscription and what `wait` knew of it: it is
    /// being unregistered (a new one of the name starts at version 1).
    func drop(_ name: String) {
        state.withLock { _ = $0.subscriptions.remove(MCPProtocol.liveURI(name)) }
        seen.withLock { _ = $0.removeValue(forKey: name) }
        arrivals.withLock { _ = $0.events.removeValue(forKey: name) }
        resourceListChanged()
    }

    /// Ends every live query and closes the database.
    /// Ends the session's own live queries (the shared ones stay), and
    /// closes the database when it is the session's.
    func close() async {
        let (live, shared, schema, changeLog) = state.withLock { state in
            state.closed = true
            for listener in state.listeners.values { listener.end.finish() }
            return (state.liveForwarder, state.sharedForwarder, state.schemaForwarder, state.changeLog)
        }
        changeLog?.stop()
        schema?.cancel()
        live?.cancel()
        shared?.cancel()
        arrivals.withLock { $0.closed = true }
        arrivals.broadcast()
        ownConnection?.close()
        await directory?.unregisterAll()
        if ownsDatabase { await database?.close() }
    }
}

/// A tool call that failed: its message becomes the text of a result with
/// `isError: true`, and `details` its structured content.
struct ToolFailure: Error {
    var message: String
    var details: JSONValue?

    init(_ message: String, details: JSONValue? = nil) {
        self.message = message
        self.details = details
    }
}

/// An MCP session's own connection for the statements that write, opened
/// at its first write and closed with the session (rolling back nothing:
/// transactions are refused to agents), so that what one agent's
/// statement leaves on its connection (a `TEMP` table) is not another's.
/// At most `Slots.maximum` are open in a process; past it, a write fails
/// with a clear message.
final class MCPOwnConnection: Sendable {
    /// How many sessions' connections are open, shared by a process's sessions.
    final class Slots: Sendable {
        static let maximum = 64
        private let open = Locked(0)

        init() {}

        func take() -> Bool {
            open.withLock { open in
                guard open < Self.maximum else { return false }
                open += 1
                return true
            }
        }

        func give() { open.withLock { $0 -= 1 } }
    }

    private let database: LiveDatabase
    private let slots: Slots
    // Mutable State: guarded by the mutex; the tool lane and the close.
    private struct State {
        var connection: ClientConnection?
        var closed = false
    }
    private let state = Locked(State())

    init(database: LiveDatabase, slots: Slots) {
        self.database = database
        self.slots = slots
    }

    /// The connection, opened (and confined) at the first call; nil when
    /// the database can have no other (in memory).
    func connection() throws(ToolFailure) -> ClientConnection? {
        if let open = state.withLock({ $0.connection }) { return open }
        guard !ConnectionGate.isNearDescriptorLimit else {
            throw ToolFailure(
                "this server is near its limit of open files (RLIMIT_NOFILE): call again later, or end a session")
        }
        guard slots.take() else {
            throw ToolFailure(
                "\(Slots.maximum) agents' sessions already hold a connection to write with: end one (DELETE its "
                    + "session) and call again")
        }
        let made: ClientConnection?
        do throws(SQLiveError) {
            made = try database.makeClientConnection()
            try made?.confine()
        } catch {
            slots.give()
            throw ToolFailure("cannot open this session's connection: \(error.description)")
        }
        guard let made else {
            slots.give()
            return nil
        }
        let kept = state.withLock { state -> Bool in
            guard !state.closed, state.connection == nil else { return false }
            state.connection = made
            return true
        }
        guard kept else {
            made.close()
            slots.give()
            throw ToolFailure("the session ended")
        }
        return made
    }

    func close() {
        let connection = state.withLock { state -> ClientConnection? in
            state.closed = true
            defer { state.connection = nil }
            return state.connection
        }
        guard let connection else { return }
        connection.close()
        slots.give()
    }
}
