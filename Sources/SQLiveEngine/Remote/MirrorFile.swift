import Foundation
import GRDBSQLite

#if canImport(Glibc)
    import Glibc
#endif

/// A local file kept page for page equal to a database that lives
/// elsewhere (a dqlite cluster's), so that every part of sqlive — live
/// queries, the change feed, EXPLAIN, the schema, the language server's
/// checks — reads it as it reads any file another process writes.
///
/// The file is a rollback-journal database in a private directory. Each
/// new image is written as another process commits: under SQLite's
/// EXCLUSIVE lock (taken by a connection of its own, so no reader of
/// sqlive's is inside a read while pages change), only the pages that
/// differ, page 1 last, with the header's change counter moved on — which
/// is how every SQLite connection learns that the file changed (its
/// cache dropped, `data_version` moved), and how sqlive's watcher matches
/// the commit to tables and rows (the pages compared).
///
/// Not thread-safe: one owner (`DqliteRemote`'s follower thread) writes.
final class MirrorFile {
    let path: String
    /// Written pages go through this descriptor, open for the file's whole
    /// life: closing any descriptor of a file drops every POSIX lock the
    /// process holds on it, SQLite's included.
    private let descriptor: Int32
    /// Takes SQLite's EXCLUSIVE lock around each write.
    private let lock: RawConnection
    /// The bytes as last written.
    private var current: [UInt8]
    private var counter: UInt32

    /// Creates the file with a first image.
    init(path: String, image: [UInt8]) throws(SQLiveError) {
        self.path = path
        var image = image
        counter = 1
        try Self.normalize(&image, counter: counter)
        descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .cannotOpen(path: path, reason: String(cString: strerror(errno)))
        }
        current = []
        do {
            try Self.write(image, pages: nil, to: descriptor, path: path, currentCount: 0)
            lock = try RawConnection(path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX)
        } catch let error as RawSQLiteError {
            close(descriptor)
            throw .cannotOpen(path: path, reason: error.message)
        } catch {
            close(descriptor)
            throw SQLiveError.wrap(error)
        }
        sqlite3_busy_timeout(lock.handle, 5000)
        current = image
    }

    deinit {
        close(descriptor)
    }

    /// Writes a new image of the database; whether any page differed.
    func apply(_ image: [UInt8]) throws(SQLiveError) -> Bool {
        var image = image
        try Self.normalize(&image, counter: counter &+ 1)
        let pageSize = Self.pageSize(of: image)
        var changed: [Int] = []
        let pages = image.count / pageSize
        for page in 0..<pages {
            let range = page * pageSize..<(page + 1) * pageSize
            if range.upperBound > current.count || !Self.samePage(image, current, range, first: page == 0) {
                changed.append(page)
            }
        }
        guard !changed.isEmpty || image.count != current.count else { return false }
        guard sqlite3_exec(lock.handle, "BEGIN EXCLUSIVE", nil, nil, nil) == SQLITE_OK else {
            throw .remote("the mirror at \(path) stayed locked: \(lock.lastError)")
        }
        defer { sqlite3_exec(lock.handle, "COMMIT", nil, nil, nil) }
        // Page 1 last: a reader that compares the change counter before and
        // after its read sees a write that overlapped it.
        let ordered = changed.filter { $0 != 0 } + (changed.contains(0) || image.count != current.count ? [0] : [])
        try Self.write(image, pages: ordered, to: descriptor, path: path, currentCount: current.count)
        current = image
        counter &+= 1
        return true
    }

    private static func write(
        _ image: [UInt8], pages: [Int]?, to descriptor: Int32, path: String, currentCount: Int
    ) throws(SQLiveError) {
        let pageSize = Self.pageSize(of: image)
        let written: [Int] = pages ?? Array(0..<image.count / pageSize)
        for page in written {
            let offset = page * pageSize
            let count = image.withUnsafeBytes { buffer in
                pwrite(descriptor, buffer.baseAddress! + offset, pageSize, off_t(offset))
            }
            guard count == pageSize else {
                throw .remote("cannot write the mirror at \(path): \(String(cString: strerror(errno)))")
            }
        }
        if image.count < currentCount, ftruncate(descriptor, off_t(image.count)) != 0 {
            throw .remote("cannot truncate the mirror at \(path): \(String(cString: strerror(errno)))")
        }
    }

    // MARK: - The header

    static func pageSize(of image: [UInt8]) -> Int {
        let size = Int(image[16]) << 8 | Int(image[17])
        return size == 1 ? 65536 : size
    }

    /// Makes an image one of a rollback-journal file whose change counter
    /// is `counter`, its page count its own size.
    static func normalize(_ image: inout [UInt8], counter: UInt32) throws(SQLiveError) {
        guard image.count >= 100, image.starts(with: Array("SQLite format 3\0".utf8)) else {
            throw .remote("the database's image is not a SQLite database")
        }
        let pageSize = pageSize(of: image)
        guard pageSize >= 512, pageSize & (pageSize - 1) == 0, image.count % pageSize == 0 else {
            throw .remote("the database's image has \(image.count) bytes, not whole pages of \(pageSize)")
        }
        image[18] = 1
        image[19] = 1
        put(counter, at: 24, in: &image)
        put(UInt32(image.count / pageSize), at: 28, in: &image)
        put(counter, at: 92, in: &image)
    }

    private static func put(_ value: UInt32, at offset: Int, in image: inout [UInt8]) {
        image[offset] = UInt8(value >> 24)
        image[offset + 1] = UInt8(value >> 16 & 0xFF)
        image[offset + 2] = UInt8(value >> 8 & 0xFF)
        image[offset + 3] = UInt8(value & 0xFF)
    }

    /// Whether a page is the same in both, page 1's change counters aside.
    private static func samePage(_ a: [UInt8], _ b: [UInt8], _ range: Range<Int>, first: Bool) -> Bool {
        guard first else { return a[range] == b[range] }
        return a[0..<24] == b[0..<24] && a[28..<92] == b[28..<92]
            && a[96..<range.upperBound] == b[96..<range.upperBound]
    }
}
