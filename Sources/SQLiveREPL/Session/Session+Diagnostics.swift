import CSQLiveSupport
import Foundation
import GRDBSQLite
import SQLiveEngine

// The sqlite3 shell's diagnostics: `.stats`, `.log`, `.trace` (both forms),
// and safe mode (`-safe`, `.nonce`).
extension Session {
    /// `.stats`, `.log`, `.trace`, `.nonce`; `false` for other commands.
    func performDiagnostic(_ command: DotCommand, source: Source) throws -> Bool {
        switch command {
        case .stats(let level?):
            shell.stats = level
        case .stats(nil):
            let database = try requireDatabase()
            let level = shell.stats
            let text = database.writer.writeWithoutTransaction { db in
                ShellStatistics.text(level: level, statement: nil, connection: db.sqliteConnection)
            }
            try sink.write(text)
        case .log(let file):
            let output = DiagnosticOutput.open(file, sink: sink)
            diagnostics.logOutput = output
            var receiver: (@Sendable (Int32, String) -> Void)?
            if let output {
                receiver = { @Sendable code, message in output.write("(\(code)) \(message)\n") }
            }
            if !SQLiteProcess.setErrorLog(receiver) && output != nil {
                throw CommandFailure("SQLite's error log cannot be had: SQLite was set up before sqlive could ask")
            }
        case .trace(let mode):
            shell.trace = mode
            database?.traceSettings = shell.traceSettings
            // Either form replaces the other; `off` stops both.
            if diagnostics.traceOutput != nil {
                diagnostics.traceOutput = nil
                try database?.setShellTrace(nil)
            }
        case .shellTrace(let request):
            let database = try requireDatabase()
            shell.trace = .off
            database.traceSettings = shell.traceSettings
            if let expanded = request.expanded { diagnostics.traceExpanded = expanded }
            if let file = request.file { diagnostics.traceOutput = DiagnosticOutput.open(file, sink: sink) }
            guard let output = diagnostics.traceOutput else {
                try database.setShellTrace(nil)
                return true
            }
            var events = ShellTrace.Events()
            if request.events.contains(.statement) { events.insert(.statement) }
            if request.events.contains(.profile) { events.insert(.profile) }
            if request.events.contains(.row) { events.insert(.row) }
            if request.events.contains(.close) { events.insert(.close) }
            try database.setShellTrace(
                ShellTrace(events: events, expanded: diagnostics.traceExpanded) { output.write($0) })
        case .nonce(let nonce):
            guard diagnostics.acceptNonce(nonce) else {
                exitForSafeMode("incorrect nonce: \"\(nonce)\"", line: currentLine)
                return true
            }
        default:
            return false
        }
        return true
    }

    // MARK: - Safe mode

    /// The line sqlite3 names in safe mode's messages: the command's, or 0
    /// for the command line's.
    var currentLine: Int { errorStyle == .argument ? 0 : commandLine }

    /// Whether a `.nonce` lifted safe mode for this command or the next.
    var isSafeModeSuspended: Bool { diagnostics.isSafeSession && !diagnostics.isSafe }

    /// The dot-commands safe mode refuses, by the name sqlite3 matches
    /// (`.open` is refused later, for a file only).
    static let refusedInSafeMode: Set<String> = [
        "backup", "save", "cd", "import", "log", "output", "once", "read", "restore", "shell", "system",
    ]

    /// Ends the session as sqlite3's safe mode does: `line N: MESSAGE` on
    /// standard error, exit status 1, nothing more run.
    func exitForSafeMode(_ message: String, line: Int) {
        runPendingSQL()
        writeErrorLine("line \(line): \(message)")
        exitCode = 1
    }

    /// Refuses a dot-command safe mode forbids, before it is parsed (as
    /// sqlite3 refuses before reading its arguments); returns whether it did.
    func refuseInSafeMode(_ line: String, number: Int) -> Bool {
        guard diagnostics.isSafe else { return false }
        let text = line.drop { $0.isWhitespace }.dropFirst()
        guard let typed = CommandLineTokens(String(text)).tokens.first?.text,
            let spec = DotCommandHelp.spec(named: typed.lowercased()),
            Self.refusedInSafeMode.contains(spec.name)
        else { return false }
        // sqlite3 names some as typed, some by their full name.
        let name = ["backup", "save", "output", "once", "shell", "system"].contains(spec.name) ? typed : spec.name
        exitForSafeMode("cannot run .\(name) in safe mode", line: errorStyle == .argument ? 0 : number)
        return true
    }

    /// `.open PATH` in safe mode: only `:memory:`.
    func refuseOpenInSafeMode(_ path: String) -> Bool {
        guard diagnostics.isSafe, path != ":memory:" else { return false }
        exitForSafeMode("cannot open disk-based database files in safe mode", line: currentLine)
        return true
    }

    /// A statement failed: when safe mode's guard refused it, the session
    /// ends as sqlite3's does; returns whether it did. `line` is where the
    /// command began: sqlite3 names the line where it ended.
    func exitIfRefused(sql: String, line: Int) -> Bool {
        guard let refusal = diagnostics.takeRefusal() else { return false }
        let last = errorStyle == .argument ? 0 : line + sql.utf8.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        exitForSafeMode(refusal, line: last)
        return true
    }

    /// After a dot-command: a statement it ran that the guard refused ends
    /// the session too, as sqlite3's authorizer does whoever prepares.
    func exitIfRefusedDuringCommand() {
        guard let refusal = diagnostics.takeRefusal(), exitCode == nil else { return }
        exitForSafeMode(refusal, line: currentLine)
    }

    /// Puts safe mode's guard on the session's connection (`-safe`).
    func installSafeModeGuard(on database: LiveDatabase) throws {
        guard diagnostics.isSafeSession else { return }
        // The diagnostics live as long as the session, which outlives its databases.
        let context = Unmanaged.passUnretained(diagnostics).toOpaque()
        database.writer.writeWithoutTransaction { db in
            guard let connection = db.sqliteConnection else { return }
            _ = sqlive_set_authorizer_guard(connection, safeModeGuard, context)
        }
    }
}

/// Safe mode's authorizer guard: refuses ATTACH and the functions that
/// reach outside the database, and notes what it refused.
private func safeModeGuard(
    _ context: UnsafeMutableRawPointer?, _ action: Int32, _ first: UnsafePointer<CChar>?,
    _ second: UnsafePointer<CChar>?, _ third: UnsafePointer<CChar>?, _ fourth: UnsafePointer<CChar>?
) -> Int32 {
    guard action == SQLITE_ATTACH || action == SQLITE_FUNCTION, let context else { return SQLITE_OK }
    let diagnostics = Unmanaged<ShellDiagnostics>.fromOpaque(context).takeUnretainedValue()
    guard let refusal = diagnostics.refusal(action: action, name: second.map { String(cString: $0) }) else {
        return SQLITE_OK
    }
    diagnostics.noteRefusal(refusal)
    return SQLITE_DENY
}
