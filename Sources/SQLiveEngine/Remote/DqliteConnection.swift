import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One TCP connection to a dqlite node, speaking its wire protocol
/// (`DqliteWire`): one request at a time, each answered before the next is
/// sent (the server reads nothing while it answers).
///
/// Every wait has a deadline (`timeout`): a node that stops answering is
/// an error, never a hang. Not thread-safe: its owner calls it from one
/// thread at a time (`DqliteRemote` holds it under a mutex).
final class DqliteConnection {
    /// `HOST:PORT`, as the cluster names it.
    let address: String
    private var descriptor: Int32
    /// How long one request may wait for its answer.
    let timeout: Duration
    /// The database opened on it (one per connection, its id always 0).
    private(set) var database: UInt32?

    /// Connects and sends the protocol's version.
    init(address: String, timeout: Duration) throws(SQLiveError) {
        self.address = address
        self.timeout = timeout
        descriptor = try Self.connect(address, timeout: timeout)
        do {
            var version = DqliteWire.Body()
            version.uint64(DqliteWire.protocolVersion)
            try send(version.bytes)
        } catch {
            close(descriptor)
            throw error
        }
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Closes the socket; later requests fail.
    func shutdown() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
    }

    var isOpen: Bool { descriptor >= 0 }

    // MARK: - Requests

    /// Which node this one believes leads: its address (`""`: none known).
    func leader() throws(SQLiveError) -> String {
        let (type, body) = try request(DqliteWire.leader())
        guard type == .server else { throw unexpected(type, body, "LEADER") }
        var reader = DqliteWire.Reader(body)
        _ = try reader.uint64()
        return try reader.text()
    }

    /// Registers as a client (the leader's welcome).
    func register() throws(SQLiveError) {
        let (type, body) = try request(DqliteWire.client())
        guard type == .welcome else { throw unexpected(type, body, "CLIENT") }
    }

    /// The cluster's nodes, from this node's configuration.
    func cluster() throws(SQLiveError) -> [String] {
        let (type, body) = try request(DqliteWire.cluster())
        guard type == .servers else { throw unexpected(type, body, "CLUSTER") }
        return try DqliteWire.servers(body).map(\.address)
    }

    /// Opens the database by name (created by dqlite if it does not exist).
    func open(_ name: String) throws(SQLiveError) {
        let (type, body) = try request(DqliteWire.open(name))
        guard type == .db else { throw unexpected(type, body, "OPEN") }
        var reader = DqliteWire.Reader(body)
        database = try reader.uint32()
    }

    /// Runs SQL that answers no rows: the rows it changed.
    func exec(_ sql: String, _ parameters: [SQLValue]) throws -> Int {
        let (type, body) = try request(DqliteWire.sql(.execSQL, database: try openDatabase(), sql, parameters))
        if type == .failure { throw DqliteWire.failure(body) }
        guard type == .result else { throw unexpected(type, body, "EXEC_SQL") }
        var reader = DqliteWire.Reader(body)
        _ = try reader.uint64()  // the last insert rowid
        return Int(clamping: try reader.uint64())
    }

    /// Runs a query, handing each batch's rows over as it arrives (the
    /// server sends every batch whether or not they are wanted: all are read).
    ///
    /// - returns: the column names.
    @discardableResult
    func query(_ sql: String, _ parameters: [SQLValue], rows: (_ columns: [String], [[SQLValue]]) throws -> Void)
        throws -> [String]
    {
        try send(DqliteWire.sql(.querySQL, database: try openDatabase(), sql, parameters))
        var columns: [String] = []
        var handlerError: (any Error)?
        while true {
            let (type, body) = try receive()
            if type == .failure { throw DqliteWire.failure(body) }
            guard type == .rows else { throw unexpected(type, body, "QUERY_SQL") }
            let batch = try DqliteWire.rows(body)
            columns = batch.columns
            if handlerError == nil {
                do {
                    try rows(batch.columns, batch.rows)
                } catch {
                    // The rest is read, so that the connection stays in step.
                    handlerError = error
                }
            }
            if !batch.more { break }
        }
        if let handlerError { throw handlerError }
        return columns
    }

    /// The database's files as the node holds them: its main file and its WAL.
    func dump(_ name: String) throws(SQLiveError) -> [(name: String, bytes: ArraySlice<UInt8>)] {
        let (type, body) = try request(DqliteWire.dump(name))
        guard type == .files else { throw unexpected(type, body, "DUMP") }
        return try DqliteWire.files(body)
    }

    private func openDatabase() throws(SQLiveError) -> UInt32 {
        guard let database else { throw .remote("no database is open on the connection to \(address)") }
        return database
    }

    private func unexpected(_ type: DqliteWire.Response, _ body: [UInt8], _ request: String) -> SQLiveError {
        if type == .failure {
            let failure = DqliteWire.failure(body)
            return .remote("\(address) refused \(request): \(failure.message) (\(failure.code))")
        }
        return .remote("\(address) answered \(request) with message type \(type.rawValue)")
    }

    // MARK: - Framing

    func request(_ message: [UInt8]) throws(SQLiveError) -> (DqliteWire.Response, [UInt8]) {
        try send(message)
        return try receive()
    }

    private func send(_ bytes: [UInt8]) throws(SQLiveError) {
        guard descriptor >= 0 else { throw .remote("the connection to \(address) is closed") }
        let deadline = ContinuousClock.now + timeout
        var sent = 0
        while sent < bytes.count {
            try wait(for: Int16(POLLOUT), until: deadline)
            let count = bytes.withUnsafeBytes { buffer in
                Glibc.send(descriptor, buffer.baseAddress! + sent, buffer.count - sent, Int32(MSG_NOSIGNAL))
            }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                let message = String(cString: strerror(errno))
                shutdown()
                throw .remote("cannot send to \(address): \(message)")
            }
            sent += count
        }
    }

    private func receive() throws(SQLiveError) -> (DqliteWire.Response, [UInt8]) {
        let deadline = ContinuousClock.now + timeout
        let header = try read(8, until: deadline)
        let words = UInt32(header[0]) | UInt32(header[1]) << 8 | UInt32(header[2]) << 16 | UInt32(header[3]) << 24
        guard words <= 64 * 1024 * 1024 / 8 * 64 else {
            shutdown()
            throw .remote("\(address) sent a message of \(words) words")
        }
        guard let type = DqliteWire.Response(rawValue: header[4]) else {
            shutdown()
            throw .remote("\(address) sent a message of unknown type \(header[4])")
        }
        return (type, try read(Int(words) * 8, until: deadline))
    }

    private func read(_ count: Int, until deadline: ContinuousClock.Instant) throws(SQLiveError) -> [UInt8] {
        guard descriptor >= 0 else { throw .remote("the connection to \(address) is closed") }
        var bytes = [UInt8](repeating: 0, count: count)
        var received = 0
        while received < count {
            try wait(for: Int16(POLLIN), until: deadline)
            let result = bytes.withUnsafeMutableBytes { buffer in
                recv(descriptor, buffer.baseAddress! + received, count - received, 0)
            }
            if result == 0 {
                shutdown()
                throw .remote("\(address) closed the connection")
            }
            if result < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                let message = String(cString: strerror(errno))
                shutdown()
                throw .remote("cannot read from \(address): \(message)")
            }
            received += result
        }
        return bytes
    }

    private func wait(for events: Int16, until deadline: ContinuousClock.Instant) throws(SQLiveError) {
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else {
                shutdown()
                throw .remote("\(address) did not answer within \(timeout.readableSeconds)")
            }
            var entry = pollfd(fd: descriptor, events: events, revents: 0)
            let milliseconds = Int32(
                clamping: max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            let ready = poll(&entry, 1, milliseconds)
            if ready > 0 { return }
            if ready < 0, errno != EINTR {
                shutdown()
                throw .remote("cannot wait for \(address): \(String(cString: strerror(errno)))")
            }
        }
    }

    // MARK: - Connecting

    /// A connected, non-blocking TCP socket to `HOST:PORT`.
    private static func connect(_ address: String, timeout: Duration) throws(SQLiveError) -> Int32 {
        guard let colon = address.lastIndex(of: ":"), let port = UInt16(address[address.index(after: colon)...]) else {
            throw .remote("\(address) is not HOST:PORT")
        }
        var host = String(address[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &found)
        guard status == 0, let first = found else {
            throw .remote("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(found) }
        var failure = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let descriptor = socket(
                info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else { continue }
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            var one: Int32 = 1
            setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            if Glibc.connect(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return descriptor }
            guard errno == EINPROGRESS else {
                failure = String(cString: strerror(errno))
                close(descriptor)
                continue
            }
            var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            let milliseconds = Int32(clamping: timeout.components.seconds * 1000 + 1)
            if poll(&poller, 1, milliseconds) == 1 {
                var error: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length)
                if error == 0 { return descriptor }
                failure = String(cString: strerror(error))
            } else {
                failure = "no answer within \(timeout.readableSeconds)"
            }
            close(descriptor)
        }
        throw .remote("cannot connect to \(address): \(failure)")
    }
}

extension DqliteWire.Failure {
    /// As SQLite reports it: the primary code, the extended code, the message.
    var sqliteFailure: SQLiteFailure {
        let extended = Int32(truncatingIfNeeded: code)
        return SQLiteFailure(code: extended & 0xFF, extendedCode: extended, message: message)
    }
}
