import GRDBSQLite

/// Whether a database file's first 100 bytes and its size make sense, as
/// SQLite's file format describes them.
///
/// The `DataVersionProbe` reads the header on every reading anyway (its
/// change counter, its journal mode), so checking it costs nothing more.
/// This catches a file damaged in place — its first pages overwritten, or
/// the file cut short — which changes no data version in WAL mode, so that
/// live queries would otherwise go on showing results from their cache.
///
/// ```swift
/// DatabaseHeader.assess(header, fileSize: 8192)   // nil: sound
/// ```
enum DatabaseHeader {
    /// The header's length in bytes.
    static let length = 100
    private static let magic = Array("SQLite format 3\0".utf8)

    /// What is wrong with the file, or `nil` when it looks sound. An empty
    /// file is sound: SQLite reads it as an empty database.
    ///
    /// - parameter header: The file's first bytes (up to `length`).
    /// - parameter checkSize: Whether to compare the size with the
    ///   header's page count. Not while the WAL holds frames: a checkpoint
    ///   writes page 1 before the pages it adds.
    static func assess(_ header: [UInt8], fileSize: Int64, checkSize: Bool = true) -> SQLiteFailure? {
        if fileSize == 0 { return nil }
        guard fileSize >= length, header.count >= length else {
            return notADatabase("it is \(fileSize) bytes long, shorter than a database header")
        }
        guard Array(header[0..<16]) == magic else {
            return notADatabase("its first bytes are not \"SQLite format 3\": the header was overwritten")
        }
        let rawPageSize = Int(header[16]) << 8 | Int(header[17])
        let pageSize = rawPageSize == 1 ? 65536 : rawPageSize
        guard pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0,
            (1...2).contains(header[18]), (1...2).contains(header[19]),
            header[21] == 64, header[22] == 32, header[23] == 32
        else {
            return notADatabase("its header is damaged")
        }
        // The page count at 28 is valid when the counter at 92 matches the
        // change counter at 24 (SQLite 3.7.0 and later write both).
        let pageCount = integer(header, at: 28)
        if checkSize, pageCount > 0, integer(header, at: 92) == integer(header, at: 24),
            fileSize < Int64(pageCount) * Int64(pageSize)
        {
            return SQLiteFailure(
                code: 11, extendedCode: 11,
                message:
                    "database disk image is malformed: the file was cut to \(fileSize) bytes, "
                    + "its header counts \(pageCount) pages of \(pageSize) bytes")
        }
        return nil
    }

    /// The file change counter, when the file is in a rollback-journal
    /// mode; `nil` in WAL mode (bytes 18 and 19 are 2) or when the header
    /// is too short.
    static func rollbackChangeCounter(_ header: [UInt8]) -> UInt32? {
        guard header.count >= 28, !isWAL(header) else { return nil }
        return integer(header, at: 24)
    }

    /// Whether a header says WAL mode (bytes 18 and 19 are 2).
    static func isWAL(_ header: [UInt8]) -> Bool {
        header.count >= 20 && header[18] == 2 && header[19] == 2
    }

    /// The main database file a connection has open, as SQLite's VFS holds
    /// it (`SQLITE_FCNTL_FILE_POINTER`): read through it without a lock,
    /// and without opening (and closing) a descriptor of the file, which
    /// would drop the process's POSIX locks on it.
    static func openFile(of connection: OpaquePointer?)
        -> (file: UnsafeMutablePointer<sqlite3_file>, methods: sqlite3_io_methods)?
    {
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(connection, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK,
            let file, let methods = file.pointee.pMethods
        else { return nil }
        return (file, methods.pointee)
    }

    /// The first `length` bytes of a connection's main file, read through
    /// `openFile(of:)`; `nil` when they cannot be read.
    static func read(_ length: Int, of connection: OpaquePointer?) -> [UInt8]? {
        guard let (file, methods) = openFile(of: connection), let xRead = methods.xRead else { return nil }
        var bytes = [UInt8](repeating: 0, count: length)
        guard xRead(file, &bytes, Int32(length), 0) == SQLITE_OK else { return nil }
        return bytes
    }

    private static func integer(_ header: [UInt8], at offset: Int) -> UInt32 {
        UInt32(header[offset]) << 24 | UInt32(header[offset + 1]) << 16 | UInt32(header[offset + 2]) << 8
            | UInt32(header[offset + 3])
    }

    private static func notADatabase(_ detail: String) -> SQLiteFailure {
        SQLiteFailure(code: 26, extendedCode: 26, message: "file is not a database: \(detail)")
    }
}

/// Decides when a database file is damaged, from the watcher's readings.
///
/// A writer may leave the file briefly inconsistent (a commit writes page 1
/// before the pages it adds), so a failure counts only when the same one is
/// seen again `confirmation` later, and never while a writer holds a lock.
/// Repair counts at once.
struct DamageCheck {
    enum Outcome: Equatable {
        case unchanged
        /// A failure was seen for the first time: read again soon.
        case suspected
        case damaged(SQLiteFailure)
        case repaired
    }

    static let confirmation = Duration.milliseconds(100)

    /// The damage reported last, until a repair.
    private(set) var damaged: SQLiteFailure?
    private var suspect: (failure: SQLiteFailure, since: ContinuousClock.Instant)?
    /// The size of the file when it was last seen sound and not empty: an
    /// empty file is sound to SQLite (an empty database), but one that held
    /// pages and is now empty was cut, and its tables are gone.
    private var lastSoundSize: Int64?

    /// Takes the file's state when watching starts, sound or not, without
    /// an outcome: what a later check compares with.
    mutating func noteInitialState(_ file: DataVersionProbe.FileState) {
        if file.size > 0, DatabaseHeader.assess(file.header, fileSize: file.size, checkSize: false) == nil {
            lastSoundSize = file.size
        }
    }

    mutating func check(
        _ file: DataVersionProbe.FileState, walSize: Int64, at now: ContinuousClock.Instant
    ) -> Outcome {
        if file.writerActive { return .unchanged }
        var found = DatabaseHeader.assess(file.header, fileSize: file.size, checkSize: walSize == 0)
        if found == nil, file.size == 0, walSize == 0, let lastSoundSize {
            found = SQLiteFailure(
                code: 11, extendedCode: 11,
                message:
                    "database disk image is malformed: the file was cut to 0 bytes (it held \(lastSoundSize) bytes)")
        } else if found == nil, file.size > 0 {
            lastSoundSize = file.size
        }
        guard let found else {
            suspect = nil
            guard damaged != nil else { return .unchanged }
            damaged = nil
            return .repaired
        }
        if found == damaged { return .unchanged }
        guard let suspect, suspect.failure == found else {
            suspect = (found, now)
            return .suspected
        }
        guard now - suspect.since >= Self.confirmation else { return .unchanged }
        self.suspect = nil
        damaged = found
        return .damaged(found)
    }
}
