import SQLiveLocks

/// Confined readers for callers that run at once (an agent's tool calls,
/// each on a thread of its own): every call takes a reader of its own, so
/// a statement that runs to its time limit holds back no other call.
///
/// Readers are opened when a call finds none idle, up to `capacity`; a
/// call beyond that waits for one to be given back. Idle readers stay open
/// for the next calls (opening one costs a file open and a schema read).
///
/// ```swift
/// let readers = try database.makeConfinedReaderPool()
/// let outcome = try readers.withReader { try $0.run("SELECT 1") }
/// ```
public final class ConfinedReaderPool: Sendable {
    /// How many readers may be open at once.
    public let capacity: Int
    /// The file's path, to drop readers of a file that was replaced.
    private let path: String?
    private let open: @Sendable () throws(SQLiveError) -> ConfinedReader

    // Mutable State: guarded by the condition's mutex. Invariant: `opened`
    // counts the readers open or being opened, idle or taken; `idle` holds
    // those nobody has taken. A caller that finds none idle and `opened ==
    // capacity` sleeps until a reader is given back or an open fails.
    private struct State {
        var idle: [ConfinedReader] = []
        var opened = 0
    }
    private let state: Condition<State>

    /// - parameter first: A reader opened already (it proves the file can
    ///   be read confined); the pool opens the others with `open`.
    public init(
        capacity: Int, first: ConfinedReader, path: String? = nil,
        open: @escaping @Sendable () throws(SQLiveError) -> ConfinedReader
    ) {
        precondition(capacity >= 1)
        self.capacity = capacity
        self.path = path
        self.open = open
        state = Condition(State(idle: [first], opened: 1))
    }

    /// Runs `body` with a reader nobody else uses meanwhile, on the calling
    /// thread; waits for one when `capacity` are taken.
    ///
    /// - throws: `SQLiveError.cannotOpen` when a new reader cannot be
    ///   opened, or what `body` throws.
    public func withReader<T>(_ body: (ConfinedReader) throws(SQLiveError) -> T) throws(SQLiveError) -> T {
        let reader = try take()
        defer { giveBack(reader) }
        return try body(reader)
    }

    /// How many readers are open (idle or taken).
    public var openCount: Int {
        state.withLock { $0.opened }
    }

    private enum Taken {
        case reader(ConfinedReader)
        case openOne
    }

    private func take() throws(SQLiveError) -> ConfinedReader {
        // A file replaced at the path (and followed by the session): the
        // idle readers of the old one are dropped, so that every call reads
        // the file the path leads to.
        let current = path.flatMap { DataVersionProbe.status(of: $0)?.identity }
        let taken = state.wait { state -> Condition<State>.Step<Taken> in
            if current != nil {
                let before = state.idle.count
                state.idle.removeAll { $0.fileIdentity != current }
                state.opened -= before - state.idle.count
            }
            if let reader = state.idle.popLast() { return .done(.reader(reader)) }
            guard state.opened < capacity else { return .wait }
            state.opened += 1
            return .done(.openOne)
        }
        switch taken {
        case .reader(let reader):
            reader.beginCall()
            return reader
        case .openOne:
            do {
                return try open()
            } catch {
                state.withLock { $0.opened -= 1 }
                state.broadcast()
                throw error
            }
        }
    }

    private func giveBack(_ reader: ConfinedReader) {
        state.withLock { $0.idle.append(reader) }
        state.broadcast()
    }
}

extension LiveDatabase {
    /// A pool of confined readers of the database file, the first opened
    /// now.
    ///
    /// - throws: `SQLiveError.cannotOpen` (an in-memory database, a file
    ///   that cannot be read confined).
    public func makeConfinedReaderPool(capacity: Int = 4, allowWrites: Bool = false) throws(SQLiveError)
        -> ConfinedReaderPool
    {
        let first = try makeConfinedReader(allowWrites: allowWrites)
        let location = self.location
        return ConfinedReaderPool(capacity: capacity, first: first, path: location.filePath) { () throws(SQLiveError) in
            try Self.confinedReader(of: location, allowWrites: allowWrites)
        }
    }
}
