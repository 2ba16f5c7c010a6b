import FlyingFox
import FlyingSocks

/// A response body that is written as it is made: each element of the
/// stream goes out as one HTTP chunk, at once (Server-Sent Events).
///
/// When the client goes away, the server's write fails and drops the
/// iterator: the stream's `onTermination` runs, which is how a listen or a
/// long call learns that its client left.
struct ByteStream: AsyncBufferedSequence {
    typealias Element = UInt8

    let stream: AsyncStream<[UInt8]>

    func makeAsyncIterator() -> Iterator {
        Iterator(base: stream.makeAsyncIterator())
    }

    struct Iterator: AsyncBufferedIteratorProtocol {
        var base: AsyncStream<[UInt8]>.AsyncIterator
        var pending: ArraySlice<UInt8> = []

        mutating func next() async throws -> UInt8? {
            guard let buffer = try await nextBuffer(suggested: 1) else { return nil }
            return buffer.first
        }

        mutating func nextBuffer(suggested count: Int) async throws -> ArraySlice<UInt8>? {
            while pending.isEmpty {
                guard let bytes = await base.next() else { return nil }
                pending = bytes[...]
            }
            let taken = pending.prefix(Swift.max(count, 1))
            pending = pending.dropFirst(taken.count)
            return taken
        }
    }
}

extension HTTPBodySequence {
    /// A chunked body that follows a stream of bytes.
    static func streaming(_ stream: AsyncStream<[UInt8]>) -> HTTPBodySequence {
        HTTPBodySequence(from: ByteStream(stream: stream), suggestedBufferSize: 64 << 10)
    }
}

/// One Server-Sent Event of type `message` carrying a JSON-RPC message
/// (no `id:` line: the SDK's client would try to resume a stream that had
/// one), or a comment that keeps an idle stream alive.
enum ServerSentEvent {
    static func message(_ json: [UInt8]) -> [UInt8] {
        Array("event: message\ndata: ".utf8) + json + Array("\n\n".utf8)
    }

    static let keepAlive = Array(": ping\n\n".utf8)
}
