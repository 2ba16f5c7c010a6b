import Foundation

/// The sqlite3 command-line shell, run as a real second process.
public enum SQLite3CLI {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs SQL with `sqlite3 PATH`, feeding it on standard input, and
    /// returns standard output. Throws when sqlite3 fails.
    ///
    /// - parameter defaultTimeout: leave the busy timeout at the shell's
    ///   default (none), as an application's writer has it (the default);
    ///   `false` gives it 10 s, for a writer that meets one of the session's
    ///   own writes or open transactions (two writers, or SQLite's ordinary
    ///   locks, as in the sqlite3 shell) — never for one beside watching alone.
    @discardableResult
    public static func run(_ path: String, _ sql: String, defaultTimeout: Bool = true) async throws -> String {
        try check(await Launcher.run("/usr/bin/sqlite3", arguments(path, defaultTimeout: defaultTimeout), input: sql))
    }

    /// `run`, blocking the calling thread: only on a thread of its own
    /// (`Launcher.runBlocking`).
    @discardableResult
    public static func runBlocking(_ path: String, _ sql: String, defaultTimeout: Bool = true) throws -> String {
        try check(Launcher.runBlocking("/usr/bin/sqlite3", arguments(path, defaultTimeout: defaultTimeout), input: sql))
    }

    private static func arguments(_ path: String, defaultTimeout: Bool) -> [String] {
        defaultTimeout ? ["-bail", path] : ["-bail", "-cmd", ".timeout 10000", path]
    }

    private static func check(_ outcome: Launcher.Outcome) throws -> String {
        guard outcome.status == 0 else { throw Failure(description: "sqlite3 failed: \(outcome.stderr)") }
        return outcome.stdout
    }

    /// Starts sqlite3 with an open standard input, to hold locks or write
    /// over time. Write commands with `send`, end with `finish`.
    public final class Session: @unchecked Sendable {
        private let child: PipedChild

        /// - parameter defaultTimeout: leave the busy timeout at the shell's
        ///   default (none; the default) instead of 10 s.
        public init(_ path: String, defaultTimeout: Bool = true) throws {
            child = try PipedChild(
                "/usr/bin/sqlite3", defaultTimeout ? [path] : ["-cmd", ".timeout 10000", path])
        }

        public func send(_ sql: String) {
            child.write(sql + "\n")
        }

        /// Sends a marker and waits until sqlite3 printed it: every command
        /// before it has run.
        public func sync() async {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    self.syncBlocking()
                    continuation.resume()
                }
            }
        }

        /// `sync`, blocking the calling thread.
        public func syncBlocking() {
            let marker = "sync-\(UUID().uuidString)"
            send("SELECT '\(marker)';")
            var buffer = ""
            while !buffer.contains(marker) {
                let data = child.read()
                if data.isEmpty { break }
                buffer += String(decoding: data, as: UTF8.self)
            }
        }

        /// Ends sqlite3: `.quit`, then the end of its input.
        public func finish() async {
            send(".quit")
            child.closeInput()
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    self.child.child.waitUntilExit()
                    continuation.resume()
                }
            }
        }
    }
}

extension Pipe {
    /// Keeps both ends out of the other children this process starts (each
    /// child gets its own copy of its ends as 0, 1 or 2), so a child waiting
    /// for the end of its input is not kept alive by another's inherited copy.
    public func closeOnExec() {
        for handle in [fileHandleForReading, fileHandleForWriting] {
            _ = fcntl(handle.fileDescriptor, F_SETFD, FD_CLOEXEC)
        }
    }
}
