import GRDBSQLite

/// The `-wal` file and the wal-index of a database, read through a SQLite
/// connection's own open files.
///
/// Nothing here opens or closes a file: POSIX locks belong to a process
/// and a file, so closing any descriptor of `-shm` (or of the database)
/// would drop the locks every connection of this process holds on it. The
/// WAL is read with the connection's own `-wal` file
/// (`SQLITE_FCNTL_JOURNAL_POINTER`), and the wal-index header from the
/// connection's own mapping of `-shm` (`xShmMap`).
///
/// Not thread-safe: confined to the thread that owns the connection.
struct WALStorage {
    let connection: OpaquePointer

    /// The two copies of the wal-index header, or `nil` when the
    /// connection has no wal-index mapped (not in WAL mode yet).
    func indexHeader() -> WALFormat.IndexHeader? {
        guard let (file, methods) = DatabaseHeader.openFile(of: connection), methods.iVersion >= 2,
            let xShmMap = methods.xShmMap
        else { return nil }
        var region: UnsafeMutableRawPointer?
        // `void volatile **` in C: a pointer to the mapped region.
        let code = xShmMap(file, 0, 32768, 0, &region)
        guard code == SQLITE_OK, let region else { return nil }
        // Read both copies as SQLite's readers do, after a barrier; a
        // writer caught between them makes them differ: try again.
        for _ in 0..<8 {
            methods.xShmBarrier?(file)
            var copies = [UInt8](repeating: 0, count: 2 * WALFormat.indexHeaderSize)
            copies.withUnsafeMutableBytes { buffer in
                // Copy 0 first, then copy 1 (writers write 1 then 0).
                buffer.baseAddress!.copyMemory(from: region, byteCount: WALFormat.indexHeaderSize)
                methods.xShmBarrier?(file)
                (buffer.baseAddress! + WALFormat.indexHeaderSize).copyMemory(
                    from: region + WALFormat.indexHeaderSize, byteCount: WALFormat.indexHeaderSize)
            }
            if let header = copies.withUnsafeBytes({ WALFormat.IndexHeader(copies: $0) }) { return header }
        }
        return nil
    }

    /// The wal-index's generation (its salts) and `nBackfillAttempted`:
    /// the last frame a checkpoint has begun to copy into the database
    /// file (a checkpoint sets it before it writes a page). `nil` when the
    /// wal-index cannot be read.
    func checkpointState() -> (salt: UInt64, backfillAttempted: UInt32)? {
        guard let header = indexHeader(), let (file, methods) = DatabaseHeader.openFile(of: connection),
            let xShmMap = methods.xShmMap
        else { return nil }
        var region: UnsafeMutableRawPointer?
        guard xShmMap(file, 0, 32768, 0, &region) == SQLITE_OK, let region else { return nil }
        methods.xShmBarrier?(file)
        // `WalCkptInfo` follows the two header copies: nBackfill, aReadMark[5],
        // aLock[8], nBackfillAttempted (native byte order).
        let attempted = region.loadUnaligned(fromByteOffset: 2 * WALFormat.indexHeaderSize + 32, as: UInt32.self)
        methods.xShmBarrier?(file)
        // The generation again: a restart in between zeroes the checkpoint info.
        guard let again = indexHeader(), again.salt == header.salt else { return nil }
        return (header.salt, attempted)
    }

    /// Reads a page of the database file, as it is now, through the
    /// connection's own open file (no lock taken); `false` when it cannot
    /// be read. Past the end of the file the bytes are zeros.
    func readDatabase(into buffer: UnsafeMutableRawBufferPointer, page: UInt32) -> Bool {
        guard let (file, methods) = DatabaseHeader.openFile(of: connection), let xRead = methods.xRead,
            let base = buffer.baseAddress
        else { return false }
        let code = xRead(file, base, Int32(buffer.count), Int64(page - 1) * Int64(buffer.count))
        // SQLITE_IOERR_SHORT_READ: zero-filled past the end.
        return code == SQLITE_OK || code == (10 | (2 << 8))
    }

    /// Reads `count` bytes of `-wal` at `offset`; `false` when the file is
    /// not open or shorter.
    func readWAL(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) -> Bool {
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(connection, "main", SQLITE_FCNTL_JOURNAL_POINTER, &file) == SQLITE_OK,
            let file, let methods = file.pointee.pMethods, let xRead = methods.pointee.xRead,
            let base = buffer.baseAddress
        else { return false }
        return xRead(file, base, Int32(buffer.count), offset) == SQLITE_OK
    }
}
