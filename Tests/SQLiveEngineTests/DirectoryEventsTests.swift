import Foundation
import SQLiveLocks
import SQLiveTestSupport
import Testing

@testable import SQLiveEngine

#if canImport(Glibc)
    import Glibc
#endif

@Suite("One inotify instance for the process")
struct DirectoryEventsTests {
    /// Waits until the subscription's descriptor is readable (or `timeout`
    /// passes), lets the rest of the writer's events arrive (one write makes
    /// several: open, modify, close), then takes them all.
    static func events(
        _ subscription: DirectoryEvents.Subscription, within timeout: Duration = .seconds(10)
    ) -> DirectoryEvents.Events {
        var descriptor = pollfd(fd: subscription.descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
        _ = poll(&descriptor, 1, Int32(milliseconds))
        usleep(100_000)
        return subscription.take()
    }

    static func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    /// The inotify descriptors this process holds.
    static func inotifyDescriptors() throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count { name in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)"))
                == "anon_inode:inotify"
        }
    }

    /// A journal capture hears its events through its handler, on the hub's
    /// thread: it holds no pipe (one no one polled filled with a byte per
    /// event of the database).
    @Test("A subscriber with a journal handler gets its events through it, and holds no pipe")
    func journalHandlerHoldsNoPipe() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("j.sqlite")
        try Self.write("", to: path)
        let heard = Locked<[DirectoryEvents.JournalEvent]>([])
        let subscription = try DirectoryEvents.journals.subscribe(to: path) { event in
            heard.withLock { $0.append(event) }
        }
        defer { subscription.cancel() }
        #expect(subscription.descriptor == -1)
        try Self.write("x", to: path + "-journal")
        try FileManager.default.removeItem(atPath: path + "-journal")
        let deadline = ContinuousClock.now + .seconds(10)
        while heard.withLock({ !$0.contains(.removed) }), ContinuousClock.now < deadline {
            subscription.flush()
            usleep(10_000)
        }
        #expect(heard.withLock { $0.contains(.created) && $0.contains(.removed) })
        // The watcher's kind still has its descriptor.
        let watcher = try DirectoryEvents.shared.subscribe(to: path)
        defer { watcher.cancel() }
        #expect(watcher.descriptor >= 0)
    }

    @Test("Each database hears of its own files only: itself, its -wal and -journal")
    func routing() throws {
        let directory = try TemporaryDirectory()
        let a = directory.path("a.sqlite")
        let b = directory.path("b.sqlite")
        try Self.write("", to: a)
        try Self.write("", to: b)
        let first = try DirectoryEvents.shared.subscribe(to: a)
        let second = try DirectoryEvents.shared.subscribe(to: b)
        defer {
            first.cancel()
            second.cancel()
        }

        try Self.write("x", to: a)
        #expect(Self.events(first) == DirectoryEvents.Events(relevant: true, database: true))
        #expect(Self.events(second, within: .milliseconds(200)) == DirectoryEvents.Events())

        try Self.write("x", to: b + "-wal")
        #expect(Self.events(second) == DirectoryEvents.Events(relevant: true, database: false))
        #expect(Self.events(first, within: .milliseconds(200)) == DirectoryEvents.Events())

        try Self.write("x", to: a + "-journal")
        #expect(Self.events(first) == DirectoryEvents.Events(relevant: true, database: false))

        try Self.write("x", to: directory.path("unrelated.txt"))
        try Self.write("x", to: a + "-shm")
        #expect(Self.events(first, within: .milliseconds(200)) == DirectoryEvents.Events())
        #expect(Self.events(second, within: .milliseconds(200)) == DirectoryEvents.Events())
    }

    @Test("A cancelled subscription hears nothing more; the others still do")
    func cancellation() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        try Self.write("", to: path)
        let kept = try DirectoryEvents.shared.subscribe(to: path)
        let cancelled = try DirectoryEvents.shared.subscribe(to: path)
        defer { kept.cancel() }
        cancelled.cancel()
        cancelled.cancel()

        try Self.write("x", to: path)
        #expect(Self.events(kept).database)
        #expect(Self.events(cancelled, within: .milliseconds(200)) == DirectoryEvents.Events())

        // Subscribing again after everything was cancelled works (a new instance, if none runs).
        kept.cancel()
        let again = try DirectoryEvents.shared.subscribe(to: path)
        defer { again.cancel() }
        try Self.write("y", to: path)
        #expect(Self.events(again).database)
    }

    @Test("Two hundred databases in forty directories share one inotify descriptor")
    func sharedInstance() throws {
        let directories = try (0..<40).map { _ in try TemporaryDirectory() }
        var subscriptions: [DirectoryEvents.Subscription] = []
        defer { subscriptions.forEach { $0.cancel() } }
        for index in 0..<200 {
            let path = directories[index % 40].path("db\(index).sqlite")
            try Self.write("", to: path)
            subscriptions.append(try DirectoryEvents.shared.subscribe(to: path))
        }
        // This hub's one, and the journal captures' (other tests'); each
        // may have an earlier instance (its last subscription cancelled)
        // still being closed by its thread.
        #expect(try Self.inotifyDescriptors() <= 4)

        try Self.write("x", to: directories[7].path("db47.sqlite"))
        #expect(Self.events(subscriptions[47]).database)
        #expect(Self.events(subscriptions[7], within: .milliseconds(200)) == DirectoryEvents.Events())
    }
}
