import Foundation
import GRDBSQLite
import SQLiveLocks

/// Where a dqlite database is: some of its cluster's nodes and its name,
/// as `dqlite://HOST:PORT[,HOST:PORT…]/NAME`.
public struct DqliteTarget: Hashable, Sendable {
    /// `HOST:PORT` of each node named (any of them leads to the leader).
    public var nodes: [String]
    public var name: String

    public static let scheme = "dqlite://"

    /// Parses `dqlite://HOST:PORT[,HOST:PORT…]/NAME`; `nil` when the text
    /// does not say that.
    public init?(url: String) {
        guard url.hasPrefix(Self.scheme) else { return nil }
        let rest = url.dropFirst(Self.scheme.count)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let name = String(rest[rest.index(after: slash)...])
        let nodes = rest[..<slash].split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
        guard !name.isEmpty, !name.contains("/"), !nodes.isEmpty,
            nodes.allSatisfy({ node in
                guard let colon = node.lastIndex(of: ":"), colon != node.startIndex else { return false }
                return UInt16(node[node.index(after: colon)...]) != nil
            })
        else { return nil }
        self.nodes = nodes
        self.name = name
    }

    public var url: String { Self.scheme + nodes.joined(separator: ",") + "/" + name }
}

/// A database in a dqlite cluster, as sqlive opens it.
///
/// - **Statements** (the REPL's, scripts', `query/execute`'s) run on the
///   leader, over one connection of their own (`run`), so a transaction
///   spans requests as it spans commands. A statement the leader refused
///   because it no longer leads is sent again to the new leader; one whose
///   connection was lost mid-way is reported, not sent again (it may have
///   run).
/// - **Everything that reads** — live queries, the change feed, EXPLAIN,
///   the schema, the language server — reads a local mirror
///   (`MirrorFile`), kept equal to the cluster's database by a follower
///   thread: it asks the leader for `PRAGMA data_version` every
///   `pollInterval` on a connection of its own (a number that moves when
///   any other connection commits), and at each change takes the
///   database's files (`DUMP`) and writes the pages that differ into the
///   mirror. A statement of the session that may have written waits for
///   the next such copy before it returns, so what it wrote is what the
///   session's live queries show next.
/// - **Leader changes** are followed by both: each finds the new leader
///   (asking every node it knows which one leads) and carries on.
///
/// The follower thread is owned here: `stop()` ends it (`LiveDatabase.close`).
final class DqliteRemote: Sendable {
    let target: DqliteTarget
    /// The private directory of the mirror.
    let directory: String
    let mirrorPath: String

    /// How often the follower asks the leader whether the database changed.
    static let pollInterval = Duration.milliseconds(50)
    /// How long one request may wait for its answer.
    static let requestTimeout = Duration.seconds(5)
    /// How long a search for the leader may last (an election takes a few seconds).
    static let leaderSearch = Duration.seconds(20)
    /// How long to keep trying when no node takes a connection at all.
    static let unreachableSearch = Duration.seconds(5)

    /// The session's connection to the leader, and the nodes known.
    private struct Session {
        var connection: DqliteConnection?
        var nodes: [String]
    }
    // Invariant: the connection is used only under this lock, one request
    // (or one result set) at a time.
    private let session: Locked<Session>

    /// What the follower thread and those waiting for it share.
    private struct Follow {
        /// Copies asked for (`syncNow`), and copies made.
        var requested = 0
        var completed = 0
        var stopped = false
        var finished = false
    }
    private let follow = Condition(Follow())

    private init(target: DqliteTarget, directory: String, nodes: [String]) {
        self.target = target
        self.directory = directory
        mirrorPath = (directory as NSString).appendingPathComponent(Self.fileName(target.name))
        session = Locked(Session(connection: nil, nodes: nodes))
    }

    /// Connects, copies the database into a new mirror, and starts following it.
    static func connect(_ target: DqliteTarget) throws(SQLiveError) -> DqliteRemote {
        var template = Array(
            (NSTemporaryDirectory() as NSString).appendingPathComponent("sqlive-dqlite-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw .cannotOpen(path: target.url, reason: "cannot make a directory for its mirror")
        }
        let directory = String(cString: made)
        let remote = DqliteRemote(target: target, directory: directory, nodes: target.nodes)
        do {
            let connection = try remote.leaderConnection()
            let image = try remote.image(from: connection)
            let mirror = try MirrorFile(path: remote.mirrorPath, image: image)
            remote.start(mirror: mirror, connection: connection)
            return remote
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            if case .sqlite(let failure) = error {
                throw .cannotOpen(path: target.url, reason: failure.message)
            }
            throw error
        }
    }

    /// Stops the follower (waiting for its thread to end), closes the
    /// connections, and removes the mirror.
    func stop() {
        follow.withLock { $0.stopped = true }
        follow.broadcast()
        follow.wait { $0.finished ? .done(()) : .wait }
        session.withLock { session in
            session.connection?.shutdown()
            session.connection = nil
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Asks for a copy of the database now, and waits for it (at most
    /// `requestTimeout` and a search for the leader).
    func syncNow() {
        let wanted = follow.withLock { follow in
            follow.requested += 1
            return follow.requested
        }
        follow.broadcast()
        let deadline = ContinuousClock.now + Self.requestTimeout
        follow.wait { follow in
            if follow.completed >= wanted || follow.stopped || follow.finished { return .done(()) }
            let left = deadline - ContinuousClock.now
            return left > .zero ? .waitAtMost(left) : .done(())
        }
    }

    // MARK: - Statements

    /// What one statement did on the leader.
    struct Outcome {
        var columns: [String]
        var changes: Int
    }

    /// Runs one statement on the leader: a query's rows handed over batch
    /// by batch (`returnsRows`), or its effect.
    ///
    /// - parameter mayRetry: whether the statement can be sent again when
    ///   the connection was lost before it was answered (a read).
    /// - throws: `DqliteWire.Failure` (the leader's SQLite refused it), or
    ///   `SQLiveError` (the cluster could not be reached).
    func run(
        _ sql: String, _ parameters: [SQLValue], returnsRows: Bool, mayRetry: Bool,
        rows: ([String], [[SQLValue]]) throws -> Void
    ) throws -> Outcome {
        try session.withLock { session in
            var attempt = 0
            while true {
                attempt += 1
                var handedOver = false
                do {
                    if session.connection?.isOpen != true {
                        session.connection = try leaderConnection(knowing: &session.nodes)
                    }
                    let connection = session.connection!
                    if returnsRows {
                        let columns = try connection.query(sql, parameters) { columns, batch in
                            handedOver = true
                            try rows(columns, batch)
                        }
                        return Outcome(columns: columns, changes: 0)
                    }
                    return Outcome(columns: [], changes: try connection.exec(sql, parameters))
                } catch let failure as DqliteWire.Failure {
                    // Refused because it no longer leads: it did not run there.
                    guard failure.code == DqliteWire.notLeader, attempt == 1, !handedOver else { throw failure }
                    session.connection?.shutdown()
                    session.connection = nil
                } catch let error as SQLiveError {
                    let lost = session.connection?.isOpen == false
                    session.connection?.shutdown()
                    session.connection = nil
                    guard lost, mayRetry, attempt == 1, !handedOver else {
                        if lost && !mayRetry {
                            throw SQLiveError.remote(
                                "the connection to the leader was lost before it answered (\(error)); the "
                                    + "statement may or may not have run, and an open transaction is gone")
                        }
                        throw error
                    }
                }
            }
        }
    }

    // MARK: - Finding the leader

    /// A connection to the leader, with the database open on it.
    private func leaderConnection() throws(SQLiveError) -> DqliteConnection {
        try session.withLock { session throws(SQLiveError) in try leaderConnection(knowing: &session.nodes) }
    }

    /// Asks the nodes known which one leads, until one answers for itself
    /// (an election may take seconds: it asks again, for `leaderSearch`).
    private func leaderConnection(knowing nodes: inout [String]) throws(SQLiveError) -> DqliteConnection {
        let started = ContinuousClock.now
        let deadline = started + Self.leaderSearch
        var pause = Duration.milliseconds(100)
        var last = "no node answered"
        // Whether any node took a connection: an election is waited for,
        // a cluster none of whose nodes listens is given up on sooner.
        var reached = false
        while true {
            for node in nodes {
                do {
                    let connection = try Self.leader(asking: node, reached: &reached)
                    try connection.register()
                    try connection.open(target.name)
                    // The cluster's nodes, for the next search.
                    if let known = try? connection.cluster(), !known.isEmpty {
                        nodes = Array(Set(known).union(target.nodes)).sorted()
                    }
                    return connection
                } catch {
                    last = "\(node): \(error)"
                }
            }
            let giveUp = reached ? deadline : started + Self.unreachableSearch
            guard ContinuousClock.now + pause < giveUp else {
                throw .remote("no leader found among \(nodes.joined(separator: ", ")) (\(last))")
            }
            Thread.sleep(forTimeInterval: pause.timeInterval)
            pause = min(pause * 2, .seconds(1))
        }
    }

    /// A connection to the node `node` names as the leader, if that node
    /// says so itself.
    private static func leader(asking node: String, reached: inout Bool) throws(SQLiveError) -> DqliteConnection {
        let connection = try DqliteConnection(address: node, timeout: requestTimeout)
        reached = true
        let named = try connection.leader()
        if named == node { return connection }
        connection.shutdown()
        guard !named.isEmpty else { throw .remote("\(node) knows no leader (an election?)") }
        let leader = try DqliteConnection(address: named, timeout: requestTimeout)
        guard try leader.leader() == named else {
            leader.shutdown()
            throw .remote("\(named) does not lead (an election?)")
        }
        return leader
    }

    // MARK: - Following

    /// The follower's connection and mirror, handed to its thread at start
    /// and touched only there afterwards.
    private final class Owned: @unchecked Sendable {
        let mirror: MirrorFile
        var connection: DqliteConnection?
        init(mirror: MirrorFile, connection: DqliteConnection) {
            self.mirror = mirror
            self.connection = connection
        }
    }

    private func start(mirror: MirrorFile, connection: DqliteConnection) {
        let owned = Owned(mirror: mirror, connection: connection)
        let thread = Thread { [self] in
            followLoop(owned)
            follow.withLock { $0.finished = true }
            follow.broadcast()
        }
        thread.name = "sqlive dqlite follower"
        thread.start()
    }

    private func followLoop(_ owned: Owned) {
        var lastVersion: Int64?
        var pause = Duration.milliseconds(100)
        var nodes = target.nodes
        while true {
            let (stopped, requested) = follow.withLock { ($0.stopped, $0.requested) }
            if stopped { break }
            var wait = Self.pollInterval
            do {
                if owned.connection?.isOpen != true {
                    owned.connection = try leaderConnection(knowing: &nodes)
                    lastVersion = nil
                }
                let connection = owned.connection!
                var version: Int64?
                try connection.query("PRAGMA data_version", []) { _, rows in
                    if case .integer(let value)? = rows.first?.first { version = value }
                }
                let completed = follow.withLock { $0.completed }
                if version == nil || version != lastVersion || requested > completed {
                    let image = try image(from: connection)
                    if try owned.mirror.apply(image) {
                        Log.monitor.debug("dqlite: \(target.url) copied into its mirror")
                    }
                    lastVersion = version
                }
                follow.withLock { $0.completed = max($0.completed, requested) }
                follow.broadcast()
                pause = .milliseconds(100)
            } catch {
                owned.connection?.shutdown()
                owned.connection = nil
                Log.monitor.warning("dqlite: following \(target.url): \(error)")
                wait = pause
                pause = min(pause * 2, .seconds(1))
            }
            let deadline = ContinuousClock.now + wait
            follow.wait { follow in
                if follow.stopped || follow.requested > requested { return .done(()) }
                let left = deadline - ContinuousClock.now
                return left > .zero ? .waitAtMost(left) : .done(())
            }
        }
        owned.connection?.shutdown()
    }

    // MARK: - The database's image

    /// The database as one rollback-journal file's bytes: its main file
    /// with its WAL's committed frames applied (by SQLite, which checks
    /// the frames' checksums).
    private func image(from connection: DqliteConnection) throws(SQLiveError) -> [UInt8] {
        let files = try connection.dump(target.name)
        guard let main = files.first(where: { $0.name == target.name }) else {
            throw .remote("the dump of \(target.name) holds no main file")
        }
        let wal = files.first { $0.name == target.name + "-wal" }?.bytes ?? []
        if main.bytes.isEmpty && wal.isEmpty {
            // A database no one wrote yet: an empty one.
            return try Self.emptyImage()
        }
        guard !wal.isEmpty else { return Array(main.bytes) }
        let scratch = (directory as NSString).appendingPathComponent("dump.db")
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(scratch + suffix) }
        defer { for suffix in ["", "-wal", "-shm", "-journal"] { unlink(scratch + suffix) } }
        guard FileManager.default.createFile(atPath: scratch, contents: Data(main.bytes)),
            FileManager.default.createFile(atPath: scratch + "-wal", contents: Data(wal))
        else { throw .remote("cannot write the dump into \(directory)") }
        do {
            let raw = try RawConnection(path: scratch, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX)
            guard raw.execute("PRAGMA journal_mode = DELETE") else {
                throw SQLiveError.remote("cannot read the dump's WAL: \(raw.lastError)")
            }
        } catch let error as RawSQLiteError {
            throw .remote("cannot read the dump: \(error.message)")
        } catch {
            throw SQLiveError.wrap(error)
        }
        guard let bytes = FileManager.default.contents(atPath: scratch) else {
            throw .remote("cannot read the dump back from \(directory)")
        }
        return [UInt8](bytes)
    }

    private static func emptyImage() throws(SQLiveError) -> [UInt8] {
        do {
            let raw = try RawConnection.inMemory()
            raw.execute("CREATE TABLE x(y); DROP TABLE x")
            var size: Int64 = 0
            let bytes = sqlite3_serialize(raw.handle, "main", &size, 0)
            defer { sqlite3_free(bytes) }
            guard let bytes else { throw SQLiveError.remote("cannot make an empty database") }
            return Array(UnsafeBufferPointer(start: bytes, count: Int(size)))
        } catch let error as SQLiveError {
            throw error
        } catch {
            throw .remote("cannot make an empty database")
        }
    }

    /// The mirror's file name: the database's name, made safe.
    private static func fileName(_ name: String) -> String {
        let safe = name.map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "_" ? $0 : "_" }
        return String(safe).isEmpty ? "database" : String(safe)
    }
}
