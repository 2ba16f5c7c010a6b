import Foundation
import SQLiveProtocol
import Testing

@testable import SQLiveRPC

/// A manual instant: the batching decisions are driven by hand.
struct ManualInstant: InstantProtocol {
    var offset: Duration

    func advanced(by duration: Duration) -> ManualInstant { ManualInstant(offset: offset + duration) }
    func duration(to other: ManualInstant) -> Duration { other.offset - offset }
    static func < (lhs: ManualInstant, rhs: ManualInstant) -> Bool { lhs.offset < rhs.offset }
}

/// Drives the decisions with instants in microseconds.
final class BatchingDriver {
    private var batching: OutputBatching<ManualInstant>

    /// A writer that has started and found nothing to write.
    init(limit: Int = 64) {
        batching = OutputBatching(delay: .microseconds(200), limit: limit)
        _ = batching.next(at: ManualInstant(offset: .zero))
    }

    func send(deferrable: Bool, at microseconds: Int) -> Bool {
        batching.didSend(deferrable: deferrable, at: ManualInstant(offset: .microseconds(microseconds)))
    }

    func next(at microseconds: Int) -> OutputBatching<ManualInstant>.Step {
        batching.next(at: ManualInstant(offset: .microseconds(microseconds)))
    }

    func hurry() -> Bool { batching.hurry() }

    var pending: Int { batching.pending }
}

@Suite("Output batching decisions")
struct OutputBatchingTests {
    @Test("A message that must not wait wakes the writer, which writes it at once")
    func urgentMessage() {
        let writer = BatchingDriver()
        #expect(writer.send(deferrable: false, at: 10))
        #expect(writer.next(at: 11) == .write)
        #expect(writer.next(at: 12) == .wait)
    }

    @Test("Deferrable messages gather until the first one is due, then go together")
    func deferredMessagesGather() {
        let writer = BatchingDriver()
        #expect(writer.send(deferrable: true, at: 100))  // the idle writer must look
        #expect(writer.next(at: 101) == .sleep(.microseconds(199)))
        // While it sleeps for them, more deferrable messages do not wake it.
        #expect(!writer.send(deferrable: true, at: 150))
        #expect(!writer.send(deferrable: true, at: 250))
        // An early (spurious) wake-up sleeps again, for what is left.
        #expect(writer.next(at: 200) == .sleep(.microseconds(100)))
        #expect(writer.pending == 3)
        #expect(writer.next(at: 300) == .write)
        #expect(writer.pending == 0)
    }

    @Test("A steady stream of deferrable messages cannot postpone the write")
    func steadyStream() {
        let writer = BatchingDriver()
        _ = writer.send(deferrable: true, at: 0)
        #expect(writer.next(at: 0) == .sleep(.microseconds(200)))
        for time in stride(from: 10, to: 200, by: 10) {
            #expect(!writer.send(deferrable: true, at: time))
        }
        #expect(writer.next(at: 200) == .write)
    }

    @Test("A message that must not wait, or the limit, ends the sleep early")
    func sleepEndsEarly() {
        let writer = BatchingDriver()
        _ = writer.send(deferrable: true, at: 0)
        _ = writer.next(at: 0)
        #expect(writer.send(deferrable: false, at: 5))
        #expect(writer.next(at: 6) == .write)

        let limited = BatchingDriver(limit: 3)
        _ = limited.send(deferrable: true, at: 0)
        _ = limited.next(at: 0)
        #expect(!limited.send(deferrable: true, at: 1))
        #expect(limited.send(deferrable: true, at: 2))
        #expect(limited.next(at: 3) == .write)
    }

    @Test("A message sent while the writer writes is seen when it asks again, and is never lost")
    func noLostWakeUp() {
        let writer = BatchingDriver()
        _ = writer.send(deferrable: false, at: 0)
        #expect(writer.next(at: 0) == .write)
        // Writing: no wake-up needed, the writer asks again after writing.
        #expect(!writer.send(deferrable: false, at: 5))
        #expect(!writer.send(deferrable: true, at: 6))
        #expect(writer.next(at: 50) == .write)
        #expect(writer.next(at: 51) == .wait)
    }

    @Test("A flush makes deferred messages go at once; with nothing pending it wakes nobody")
    func hurry() {
        let writer = BatchingDriver()
        #expect(!writer.hurry())
        _ = writer.send(deferrable: true, at: 0)
        _ = writer.next(at: 0)
        #expect(writer.hurry())
        #expect(writer.next(at: 1) == .write)
    }
}

@Suite("Message writer", .timeLimit(.minutes(1)))
struct MessageWriterTests {
    /// The frames' contents, decoded, as the client reads them.
    final class Reader {
        let fileDescriptor: Int32
        private var parser = FrameParser()

        init(fileDescriptor: Int32) {
            self.fileDescriptor = fileDescriptor
        }

        /// The next message, or nil at the end of the input or after
        /// `timeout` without one.
        func next(timeout: Duration = .seconds(10)) -> JSONValue? {
            let deadline = ContinuousClock.now.advanced(by: timeout)
            while true {
                if let event = parser.next() {
                    guard case .message(let content) = event else { return nil }
                    return try? JSONReader.parse(content)
                }
                let left = ContinuousClock.now.duration(to: deadline)
                guard left > .zero else { return nil }
                var descriptor = pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
                let (seconds, attoseconds) = left.components
                let milliseconds = Int32(seconds * 1000 + attoseconds / 1_000_000_000_000_000)
                guard poll(&descriptor, 1, max(1, milliseconds)) > 0 else { continue }
                var buffer = [UInt8](repeating: 0, count: 65536)
                let count = buffer.withUnsafeMutableBytes { read(fileDescriptor, $0.baseAddress, $0.count) }
                guard count > 0 else { return nil }
                parser.append(buffer[0..<count])
            }
        }
    }

    /// A pipe: the writer writes to `[1]`, the test reads `[0]`.
    func makePipe() throws -> [Int32] {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        return ends
    }

    func message(_ id: Int) -> OutgoingMessage {
        OutgoingMessage.response(id: .number(Int64(id)), result: ["n": id])
    }

    @Test("Messages come out whole and in order, deferrable or not, sent from another thread")
    func order() throws {
        let ends = try makePipe()
        defer { close(ends[0]) }
        let writer = MessageWriter(fileDescriptor: ends[1])
        let reader = Reader(fileDescriptor: ends[0])
        let count = 300
        let sending = Thread {
            for id in 0..<count { writer.send(message(id), batching: id % 5 != 4) }
        }
        sending.start()
        var ids: [Int] = []
        while ids.count < count, let json = reader.next() {
            guard let id = json["id"]?.integerValue else { break }
            ids.append(Int(id))
        }
        #expect(ids == Array(0..<count))
        writer.stop()
        close(ends[1])
    }

    @Test("A deferrable message sent alone is written without waiting for another")
    func lonelyDeferredMessage() throws {
        let ends = try makePipe()
        defer { close(ends[0]) }
        let writer = MessageWriter(fileDescriptor: ends[1])
        let reader = Reader(fileDescriptor: ends[0])
        for id in 0..<3 {
            writer.send(message(id), batching: true)
            #expect(reader.next(timeout: .seconds(5))?["id"]?.integerValue == Int64(id))
        }
        writer.stop()
        close(ends[1])
    }

    @Test("stop writes what is pending, ends the thread, and drops later messages")
    func stop() throws {
        let ends = try makePipe()
        defer { close(ends[0]) }
        let writer = MessageWriter(fileDescriptor: ends[1])
        let reader = Reader(fileDescriptor: ends[0])
        for id in 0..<10 { writer.send(message(id), batching: true) }
        #expect(writer.flush(timeout: .seconds(10)))
        writer.stop()
        writer.send(message(10))
        close(ends[1])
        var ids: [Int] = []
        while let json = reader.next(), let id = json["id"]?.integerValue { ids.append(Int(id)) }
        #expect(ids == Array(0..<10))
    }

    @Test("A client that went away: messages are dropped, flush and stop return")
    func clientGone() throws {
        let ends = try makePipe()
        close(ends[0])
        let writer = MessageWriter(fileDescriptor: ends[1])
        let previous = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, previous) }
        for id in 0..<100 { writer.send(message(id), batching: id % 2 == 0) }
        #expect(writer.flush(timeout: .seconds(10)))
        writer.stop(timeout: .seconds(10))
        close(ends[1])
    }
}
