import Foundation

/// Another process that commits when asked, with its own default settings.
///
/// The three writers users have: the sqlite3 CLI, Python's `sqlite3`
/// module, and a GRDB program (the `sqlive` binary's scripted session,
/// one process per commit). Each leaves `synchronous` and the busy timeout
/// at its defaults; `pragmas` run first (to pick a rollback journal mode,
/// say). `commit` returns once the writer's commit has returned.
public final class WriterProcess: @unchecked Sendable {
    public enum Kind: String, CaseIterable, Sendable, CustomStringConvertible {
        case sqlite3CLI = "sqlite3"
        case python
        case grdb

        public var description: String { rawValue }
    }

    public let kind: Kind
    public let path: String
    private let pragmas: [String]
    // Mutable State: only touched by the test that owns the writer, one
    // call at a time.
    private var python: PipedChild?
    private var cli: SQLite3CLI.Session?

    public init(_ kind: Kind, path: String, pragmas: [String] = []) throws {
        self.kind = kind
        self.path = path
        self.pragmas = pragmas
        switch kind {
        case .sqlite3CLI:
            let session = try SQLite3CLI.Session(path)
            for pragma in pragmas { session.send(pragma + ";") }
            cli = session
        case .python:
            python = try PipedChild("/usr/bin/env", ["python3", "-u", "-c", Self.pythonWriter, path])
            for pragma in pragmas { try exchange(pragma) }
        case .grdb:
            break
        }
    }

    /// Python's module with its defaults: `connect(path)`, implicit
    /// transactions, `commit()`.
    private static let pythonWriter = """
        import sqlite3, sys
        connection = sqlite3.connect(sys.argv[1])
        for line in sys.stdin:
            sql = line.strip()
            if sql == "quit":
                break
            if sql.upper().startswith("PRAGMA"):
                connection.execute(sql).fetchall()
            else:
                connection.execute(sql)
                connection.commit()
            print("ok", flush=True)
        """

    /// Runs one statement in a transaction of its own; returns when it committed.
    public func commit(_ sql: String) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try self.commitBlocking(sql) })
            }
        }
    }

    private func commitBlocking(_ sql: String) throws {
        switch kind {
        case .sqlite3CLI:
            cli!.send(sql)
            cli!.syncBlocking()
        case .python:
            try exchange(sql)
        case .grdb:
            let arguments = [path] + pragmas.flatMap { ["-c", $0 + ";"] } + ["-c", sql]
            let outcome = try Launcher.runBlocking(SQLiveBinary.path, arguments)
            guard outcome.status == 0 else {
                throw CommandFailure(command: "sqlive \(sql)", status: outcome.status, stderr: outcome.stderr)
            }
        }
    }

    private func exchange(_ line: String) throws {
        python!.write(line + "\n")
        var received = Data()
        while !received.contains(UInt8(ascii: "\n")) {
            let data = python!.read()
            guard !data.isEmpty else { throw CommandFailure(command: "python3 writer", status: -1, stderr: "ended") }
            received += data
        }
    }

    /// Ends the writer process.
    public func finish() async {
        if let cli { await cli.finish() }
        // "quit" first: see `SQLite3CLI.Session.finish`.
        python?.write("quit\n")
        python?.closeInput()
        if let python {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    python.child.waitUntilExit()
                    continuation.resume()
                }
            }
        }
    }
}
