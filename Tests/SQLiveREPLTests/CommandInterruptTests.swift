import Foundation
import SQLiveEngine
import Testing

@testable import SQLiveREPL

@Suite("Ctrl-C before a command's statement starts")
struct CommandInterruptTests {
    /// Counts rows forever.
    static let endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c"

    /// Signals when the first row comes, then takes the rest.
    struct FirstRow: ResultConsumer {
        let started: DispatchSemaphore
        var signalled = false
        mutating func statementDidStart(_ header: StatementHeader) {}
        mutating func consume(row: StatementRow) {
            if !signalled {
                signalled = true
                started.signal()
            }
        }
        mutating func statementDidFinish(_ summary: StatementSummary) {}
    }

    /// The session, handed to the thread that runs its command, and what
    /// the command returned (written before `commandEnded` is signalled).
    final class Handle: @unchecked Sendable {
        let session: Session
        var succeeded: Bool?
        init(_ session: Session) { self.session = session }
    }

    @Test("A Ctrl-C that comes while the command waits for the connection still stops it")
    func interruptWhileWaiting() throws {
        let directory = try TemporaryDirectory()
        let session = Session(interactive: false, mode: .list, bail: false)
        try session.open(directory.file("db.sqlite"), readonly: false)
        let database = try session.requireDatabase()
        let handle = Handle(session)

        // Someone else on the session's connection (as the live queries'
        // resolver is) runs a statement: the command will wait for it.
        let blockerStarted = DispatchSemaphore(value: 0)
        let blockerEnded = DispatchSemaphore(value: 0)
        Thread {
            var consumer = FirstRow(started: blockerStarted)
            try? database.run(Self.endless, consumer: &consumer)
            blockerEnded.signal()
        }.start()
        blockerStarted.wait()

        // Ctrl-C once the command has begun: `interrupt()` reaches the
        // statement that runs, the other one; the command's has not started.
        let signals = session.signals
        Thread {
            while !signals.isRunning { usleep(1000) }
            usleep(50_000)
            signals.interrupt()
        }.start()

        let commandEnded = DispatchSemaphore(value: 0)
        Thread {
            handle.succeeded = handle.session.run(.sql(ScriptText(Self.endless + ";"), line: 1))
            commandEnded.signal()
        }.start()

        let ended = commandEnded.wait(timeout: .now() + 60) == .success
        #expect(ended, "the command went on after Ctrl-C")
        if !ended {
            // Do not leave it running.
            while commandEnded.wait(timeout: .now() + 0.1) == .timedOut { database.interrupt() }
        }
        #expect(handle.succeeded == false)
        #expect(blockerEnded.wait(timeout: .now() + 60) == .success)
        session.closeDatabase()
    }
}
