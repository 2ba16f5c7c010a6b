import Foundation
import SQLiveLocks

#if canImport(Glibc)
    import Glibc
#endif

/// One inotify instance for the whole process, shared by every file
/// watcher: each watched database (the main file and every attached one,
/// in every session of the process) subscribes to the events of its
/// directory, and is woken through a descriptor of its own.
///
/// Linux allows each user 128 inotify instances by default, across all of
/// that user's processes — a desktop's file watchers and editors take
/// many of them. One per watched file would run out (the test suite, which
/// opens databases in parallel, held 114 at once); one per process does
/// not, and a process's watches on one directory are one watch.
///
/// ```swift
/// let subscription = try DirectoryEvents.shared.subscribe(to: "/data/app.sqlite")
/// // poll(2) on subscription.descriptor, then:
/// let events = subscription.take()
/// ```
///
/// A subscriber that must act on its database's rollback journal the
/// moment it is created or deleted (`JournalCapture`) passes a handler:
/// it is called with each such event, in order, on the thread that reads
/// them. A subscription's `flush()` reads what the kernel has queued and hands it out
/// before it returns, so a caller knows every event queued before the call
/// has been handled.
///
/// Ownership: the hub's thread and its inotify descriptor exist while at
/// least one subscription does. The first subscription starts them; the
/// last one cancelled tells the thread to stop, and the thread closes the
/// descriptor as it exits (closing waits for the kernel to free its marks,
/// which the one who cancelled does not wait for). A later subscription
/// starts a new pair.
final class DirectoryEvents: Sendable {
    /// The file watchers' hub: every event of the databases' files.
    static let shared = DirectoryEvents(
        mask: UInt32(IN_MODIFY) | UInt32(IN_CLOSE_WRITE) | UInt32(IN_CREATE) | UInt32(IN_DELETE)
            | UInt32(IN_MOVED_TO) | UInt32(IN_MOVED_FROM) | UInt32(IN_ATTRIB),
        threadName: "sqlive.inotify")
    /// The journal captures' hub (`JournalCapture`): names created and
    /// deleted only. A second instance for the process, so that the thread
    /// that must open a journal before its commit deletes it (a millisecond
    /// or less) wakes for those events alone, not behind every write of
    /// every watched file (one shared thread fell behind under load, and
    /// the journals were missed).
    static let journals = DirectoryEvents(
        mask: UInt32(IN_CREATE) | UInt32(IN_DELETE) | UInt32(IN_MOVED_TO) | UInt32(IN_MOVED_FROM),
        threadName: "sqlive.journals")

    /// What the events since the last `take()` said about one database.
    struct Events: Equatable, Sendable {
        /// One named the database, its `-wal` or its `-journal`, or events
        /// were lost (the kernel's queue overflowed).
        var relevant = false
        /// One said the database file itself was modified.
        var database = false
    }

    /// What happened to a database's `-journal`, for a journal handler.
    enum JournalEvent: Equatable, Sendable {
        /// Created (or moved in).
        case created
        /// Deleted (or moved away).
        case removed
        /// The kernel dropped events: some may have been either.
        case lost
    }

    /// One watcher's interest in the events of a database's directory,
    /// until `cancel()`.
    final class Subscription: Sendable {
        /// Readable when events are waiting: poll(2) it, then `take()`
        /// (-1 for a subscription with a journal handler: its events reach
        /// it through the handler, and `flush`).
        var descriptor: Int32 { wake?.readDescriptor ?? -1 }
        /// Posted by the hub's thread; none with a journal handler.
        private let wake: WakePipe?
        fileprivate let names: Set<String>
        fileprivate let databaseName: String
        fileprivate let journalName: String
        fileprivate let watch: Int32
        /// The instance it was made in (`flush` reads that one's events).
        fileprivate let generation: Int
        fileprivate let journal: (@Sendable (JournalEvent) -> Void)?
        private let pending = Locked(Events())
        private let hub: DirectoryEvents

        fileprivate init(
            wake: WakePipe?, path: String, watch: Int32, generation: Int, hub: DirectoryEvents,
            journal: (@Sendable (JournalEvent) -> Void)?
        ) {
            self.wake = wake
            databaseName = URL(fileURLWithPath: path).lastPathComponent
            journalName = databaseName + "-journal"
            names = [databaseName, databaseName + "-wal", journalName]
            self.watch = watch
            self.generation = generation
            self.journal = journal
            self.hub = hub
        }

        /// Takes what arrived since the last call, and quiets the descriptor.
        func take() -> Events {
            wake?.drain()
            return pending.withLock { events in
                defer { events = Events() }
                return events
            }
        }

        /// Reads every event its hub's descriptor has queued now and hands
        /// them out, before it returns: every event queued before the call
        /// has then been handled (the journal handler called). Called by
        /// the subscriber on its own thread, never from the handler.
        func flush() {
            hub.readEvents(generation: generation)
        }

        /// Stops delivery. Idempotent.
        func cancel() {
            hub.remove(self)
        }

        /// Called by the hub's thread.
        fileprivate func deliver(_ events: Events) {
            pending.withLock { pending in
                pending.relevant = pending.relevant || events.relevant
                pending.database = pending.database || events.database
            }
            wake?.post()
        }
    }

    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    /// The running thread's inotify and stop descriptors, and the
    /// subscriptions by watch descriptor.
    private struct Instance {
        var inotify: Int32
        var stop: WakePipe
        /// Tells this instance's events from an earlier one's (watch
        /// descriptors count from 1 in every instance).
        var generation: Int
        var subscriptions: [Int32: [ObjectIdentifier: Subscription]] = [:]
    }

    private struct State {
        var instance: Instance?
        var generations = 0
    }

    // Mutable State: the running instance (nil while nobody subscribes),
    // guarded by the mutex.
    private let state = Locked(State())
    /// Whoever reads an inotify descriptor (the hub's thread, a `flush`)
    /// holds this while reading and handing out what it read, so events
    /// are handed out in the order they came; a descriptor is closed only
    /// while it is held.
    ///
    /// Lock order: `reading`, then `state`, `descriptors`, a
    /// subscription's own, a journal handler's. `state` never takes
    /// `reading`; `descriptors` takes nothing.
    private let reading = Locked(())
    /// The open inotify descriptors, by generation.
    private let descriptors = Locked<[Int: Int32]>([:])

    private let mask: UInt32
    private let threadName: String

    private init(mask: UInt32, threadName: String) {
        self.mask = mask
        self.threadName = threadName
    }

    /// Subscribes to the events of the directory of the database at `path`
    /// that concern it. Throws when inotify is refused (no instances or no
    /// watches left): then poll instead.
    ///
    /// `journal`, when given, is called with each event of the database's
    /// `-journal` as it is read, on the reading thread; it must not call
    /// into the hub, and should be quick (every database's events wait).
    func subscribe(to path: String, journal: (@Sendable (JournalEvent) -> Void)? = nil) throws(Unavailable)
        -> Subscription
    {
        let directory = URL(fileURLWithPath: path).standardizedFileURL.deletingLastPathComponent().path
        // A subscriber with a journal handler has its events through it (a
        // pipe no one polls would only fill).
        var wake: WakePipe?
        if journal == nil {
            do {
                wake = try WakePipe()
            } catch {
                throw Unavailable(description: error.description)
            }
        }
        return try state.withLock { (state: inout State) throws(Unavailable) -> Subscription in
            var instance: Instance
            if let running = state.instance {
                instance = running
            } else {
                state.generations += 1
                instance = try start(generation: state.generations)
            }
            let watch = inotify_add_watch(instance.inotify, directory, mask)
            guard watch >= 0 else {
                let reason = String(cString: strerror(errno))
                if state.instance == nil { Self.stop(instance) }
                throw Unavailable(description: "inotify_add_watch \(directory): \(reason)")
            }
            let subscription = Subscription(
                wake: wake, path: path, watch: watch, generation: instance.generation, hub: self, journal: journal)
            instance.subscriptions[watch, default: [:]][ObjectIdentifier(subscription)] = subscription
            state.instance = instance
            return subscription
        }
    }

    private func remove(_ subscription: Subscription) {
        let watch = subscription.watch
        let key = ObjectIdentifier(subscription)
        state.withLock { state in
            guard var instance = state.instance, var watchers = instance.subscriptions[watch],
                watchers.removeValue(forKey: key) != nil
            else { return }
            if watchers.isEmpty {
                instance.subscriptions[watch] = nil
                if instance.subscriptions.isEmpty {
                    Self.stop(instance)
                    state.instance = nil
                    return
                }
                inotify_rm_watch(instance.inotify, watch)
            } else {
                instance.subscriptions[watch] = watchers
            }
            state.instance = instance
        }
    }

    /// The subscriptions the events of `watch` go to (every one when
    /// `watch` is nil), if `generation` is still running.
    private func subscriptions(of watch: Int32?, generation: Int) -> [Subscription] {
        state.withLock { state in
            guard let instance = state.instance, instance.generation == generation else { return [] }
            guard let watch else { return instance.subscriptions.values.flatMap(\.values) }
            return instance.subscriptions[watch].map { Array($0.values) } ?? []
        }
    }

    /// Makes the inotify descriptor and the thread that reads it.
    private func start(generation: Int) throws(Unavailable) -> Instance {
        let inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard inotify >= 0 else {
            throw Unavailable(description: "inotify_init1: \(String(cString: strerror(errno)))")
        }
        let stop: WakePipe
        do {
            stop = try WakePipe()
        } catch {
            close(inotify)
            throw Unavailable(description: error.description)
        }
        // Registered before the thread runs, so that `flush` finds it as
        // soon as the first subscription exists.
        descriptors.withLock { $0[generation] = inotify }
        let thread = Thread { [self] in run(inotify: inotify, stop: stop, generation: generation) }
        thread.name = threadName
        thread.start()
        return Instance(inotify: inotify, stop: stop, generation: generation)
    }

    /// Tells an instance's thread to stop; it closes its inotify descriptor.
    private static func stop(_ instance: Instance) {
        instance.stop.post()
    }

    /// The thread: reads events until told to stop, and hands each to the
    /// subscriptions it concerns.
    private func run(inotify: Int32, stop: WakePipe, generation: Int) {
        defer {
            reading.withLock { _ in
                self.descriptors.withLock { $0[generation] = nil }
                close(inotify)
            }
        }
        var polled = [
            pollfd(fd: stop.readDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: inotify, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let ready = poll(&polled, 2, -1)
            if ready < 0 {
                // Only `stop` ends the thread (the instance and its
                // descriptor stay in use until then): try again.
                if errno != EINTR { usleep(1000) }
                continue
            }
            if polled[0].revents != 0 { return }
            guard polled[1].revents != 0 else { continue }
            readEvents(generation: generation)
        }
    }

    /// Reads what `generation`'s descriptor holds (nothing when it is
    /// closed), and hands it out while still the only reader.
    fileprivate func readEvents(generation: Int) {
        reading.withLock { _ in
            guard let inotify = descriptors.withLock({ $0[generation] }) else { return }
            let size = 16 * 1024
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
            defer { buffer.deallocate() }
            var found: [ObjectIdentifier: (Subscription, Events)] = [:]
            while true {
                let count = Glibc.read(inotify, buffer, size)
                if count <= 0 { break }
                var offset = 0
                while offset < count {
                    let event = (buffer + offset).assumingMemoryBound(to: inotify_event.self).pointee
                    let nameLength = Int(event.len)
                    if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                        for subscription in subscriptions(of: nil, generation: generation) {
                            if let journal = subscription.journal {
                                journal(.lost)
                            } else {
                                found[ObjectIdentifier(subscription), default: (subscription, Events())].1.relevant =
                                    true
                            }
                        }
                    } else if nameLength > 0 {
                        let name = String(
                            cString: (buffer + offset + MemoryLayout<inotify_event>.size)
                                .assumingMemoryBound(to: CChar.self))
                        for subscription in subscriptions(of: event.wd, generation: generation)
                        where subscription.names.contains(name) {
                            if name == subscription.journalName, let journal = subscription.journal {
                                if event.mask & (UInt32(IN_CREATE) | UInt32(IN_MOVED_TO)) != 0 {
                                    journal(.created)
                                } else if event.mask & (UInt32(IN_DELETE) | UInt32(IN_MOVED_FROM)) != 0 {
                                    journal(.removed)
                                }
                            }
                            // A journal handler's subscriber is told nothing else.
                            guard subscription.journal == nil else { continue }
                            let key = ObjectIdentifier(subscription)
                            found[key, default: (subscription, Events())].1.relevant = true
                            if name == subscription.databaseName, event.mask & UInt32(IN_MODIFY) != 0 {
                                found[key]!.1.database = true
                            }
                        }
                    }
                    offset += MemoryLayout<inotify_event>.size + nameLength
                }
            }
            for (subscription, events) in found.values {
                subscription.deliver(events)
            }
        }
    }
}
