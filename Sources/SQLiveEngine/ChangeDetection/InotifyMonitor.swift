#if canImport(Glibc)
    import Foundation
    import Glibc
    import Synchronization

    /// Watches the database's directory with inotify.
    ///
    /// The directory is watched, not the file: SQLite deletes and re-creates
    /// the `-wal` and `-journal` files, and another process may rename a new
    /// file over the database. Writes to `-shm` are invisible (it is memory-
    /// mapped) but every WAL commit also writes `-wal`. Events for other files
    /// in the directory are ignored.
    ///
    /// The watch runs on a thread of its own: it blocks in `poll(2)`, which
    /// must not happen on Swift concurrency's pool.
    final class InotifyMonitor: ExternalChangeMonitor {
        /// Why inotify could not be used; the caller falls back to polling.
        struct Unavailable: Error, CustomStringConvertible {
            var description: String
        }

        let directory: String
        /// The names that matter: the database, its `-wal` and its `-journal`.
        let names: Set<String>

        // Mutable State: guarded by the mutex; read by the watch thread
        // between polls (at most 200 ms apart), written by `stop()`.
        private let stopRequested = Mutex(false)

        init(databasePath: String) {
            let url = URL(fileURLWithPath: databasePath).standardizedFileURL
            directory = url.deletingLastPathComponent().path
            let name = url.lastPathComponent
            names = [name, name + "-wal", name + "-journal"]
        }

        func start(signal: @escaping @Sendable () -> Void) throws {
            let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            guard fd >= 0 else {
                throw Unavailable(description: "inotify_init1: \(String(cString: strerror(errno)))")
            }
            let mask =
                UInt32(IN_MODIFY) | UInt32(IN_CLOSE_WRITE) | UInt32(IN_CREATE) | UInt32(IN_DELETE)
                | UInt32(IN_MOVED_TO) | UInt32(IN_MOVED_FROM) | UInt32(IN_ATTRIB)
            guard inotify_add_watch(fd, directory, mask) >= 0 else {
                let reason = String(cString: strerror(errno))
                close(fd)
                throw Unavailable(description: "inotify_add_watch \(directory): \(reason)")
            }
            let names = names
            let thread = Thread { [weak self] in
                self?.watch(fd: fd, names: names, signal: signal)
                close(fd)
            }
            thread.name = "sqlive.inotify"
            stopRequested.withLock { $0 = false }
            thread.start()
        }

        func stop() {
            stopRequested.withLock { $0 = true }
        }

        private var isStopRequested: Bool { stopRequested.withLock { $0 } }

        private func watch(fd: Int32, names: Set<String>, signal: @Sendable () -> Void) {
            let bufferSize = 64 * 1024
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: bufferSize, alignment: 8)
            defer { buffer.deallocate() }
            var pollfd = Glibc.pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            while !isStopRequested {
                let ready = poll(&pollfd, 1, 200)
                if ready < 0 && errno != EINTR { return }
                guard ready > 0 else { continue }
                var relevant = false
                // Drain every pending event: one signal covers them all.
                while true {
                    let count = read(fd, buffer, bufferSize)
                    if count <= 0 { break }
                    var offset = 0
                    while offset < count {
                        let event = (buffer + offset).assumingMemoryBound(to: inotify_event.self)
                        let nameLength = Int(event.pointee.len)
                        if nameLength > 0 {
                            let namePointer = (buffer + offset + MemoryLayout<inotify_event>.size)
                                .assumingMemoryBound(to: CChar.self)
                            if names.contains(String(cString: namePointer)) { relevant = true }
                        }
                        if event.pointee.mask & UInt32(IN_Q_OVERFLOW) != 0 { relevant = true }
                        offset += MemoryLayout<inotify_event>.size + nameLength
                    }
                }
                if relevant && !isStopRequested { signal() }
            }
        }
    }
#endif
