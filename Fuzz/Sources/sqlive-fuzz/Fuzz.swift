import Foundation
import SQLiveEngine

@testable import SQLiveProtocol
@testable import SQLiveREPL
@testable import SQLiveRPC

/// libFuzzer's entry point: one executable, four targets, picked by
/// `SQLIVE_FUZZ_TARGET` (`frames`, `messages`, `dot-commands`, `input`).
///
/// Built only by `scripts/fuzz.sh`, with `swift build --sanitize fuzzer
/// --sanitize address`: libFuzzer provides `main`, drives this function
/// with inputs that reach new code, and stops at the first crash, trap or
/// memory error. Each target also checks what must hold for any input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    switch target {
    case .frames: FuzzTargets.frames(bytes)
    case .messages: FuzzTargets.messages(bytes)
    case .dotCommands: FuzzTargets.dotCommands(bytes)
    case .input: FuzzTargets.input(bytes)
    }
    return 0
}

enum FuzzTarget: String {
    case frames, messages, dotCommands = "dot-commands", input
}

let target: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["SQLIVE_FUZZ_TARGET"] ?? ""
    guard let target = FuzzTarget(rawValue: name) else {
        fatalError("set SQLIVE_FUZZ_TARGET to frames, messages, dot-commands or input (not \"\(name)\")")
    }
    return target
}()

enum FuzzTargets {
    /// The frame parser, fed in chunks whose sizes the input's first byte picks.
    static func frames(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let chunk = Int(first % 64) + 1
        let parser0 = FrameParser(maximumContentLength: 4096)
        var parser = parser0
        var index = 1
        var skipped = 0
        while index < bytes.count {
            let end = min(index + chunk, bytes.count)
            parser.append(bytes[index..<end])
            index = end
            while let event = parser.next() {
                switch event {
                case .message(let content):
                    precondition(content.count <= parser0.maximumContentLength, "a frame over the maximum")
                case .skipped(let count):
                    precondition(count > 0, "skipped nothing")
                    skipped += count
                case .malformed:
                    break
                }
            }
        }
        precondition(skipped <= bytes.count, "skipped more bytes than were given")
    }

    /// The message decoder, then each request's params as the server decodes them.
    static func messages(_ bytes: [UInt8]) {
        let content: IncomingContent
        do {
            content = try IncomingContent.decode(bytes)
        } catch {
            precondition(error.code == .parseError)
            return
        }
        let messages: [IncomingMessage]
        switch content {
        case .message(let message): messages = [message]
        case .batch(let batch): messages = batch
        }
        for message in messages {
            guard case .request(_, let method, let params) = message else { continue }
            for type in MessageRegistry.requests where type.method == method {
                decodeParams(type, params)
            }
        }
    }

    private static func decodeParams<R: RequestType>(_ type: R.Type, _ params: JSONValue?) {
        do {
            _ = try JSONCoding.decode(R.Params.self, from: params ?? .object([:]))
        } catch {
            let response = ResponseError(decoding: error)
            precondition(response.code == .invalidParams)
        }
    }

    /// The dot-command parser: any line parses or fails with a message.
    static func dotCommands(_ bytes: [UInt8]) {
        let line = "." + String(decoding: bytes, as: UTF8.self)
        do {
            _ = try DotCommand.parse(line)
        } catch {
            precondition(!error.description.isEmpty)
        }
    }

    /// The input splitter: lines in, units out, and no byte lost or added.
    static func input(_ bytes: [UInt8]) {
        var accumulator = InputAccumulator()
        var units: [InputAccumulator.Unit] = []
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
        for (number, line) in lines.enumerated() {
            if let unit = accumulator.add(ScriptText(bytes: line), lineNumber: number + 1) { units.append(unit) }
        }
        if let unit = accumulator.finish() { units.append(unit) }
        var kept = 0
        for unit in units {
            switch unit {
            case .dotCommand(let text, let line), .sql(let text, let line):
                precondition(line >= 1 && line <= lines.count)
                kept += text.bytes.count
                // Decoding either gives the bytes back exactly or refuses them.
                if let decoded = try? text.decoded(firstLine: line) {
                    precondition(Array(decoded.utf8) == text.bytes, "decoding altered the text")
                }
            }
        }
        precondition(kept <= bytes.count, "units hold more bytes than the input")
    }
}
