import Foundation
import SQLiveEngine

// What runs before the session's input, in sqlite3's order: the init file,
// then the command line's settings and `-cmd` commands.
extension Session {
    /// Runs the init file (`-init FILE`, or `~/.sqliterc` when it exists)
    /// and the command line's steps; returns an exit status when the
    /// session must end there (`-bail`, `.quit`).
    func runStartup(_ options: SessionOptions) -> Int32? {
        let explicit = options.initFile != nil
        let home = ProcessInfo.processInfo.environment["HOME"]
        if let path = options.initFile ?? home.map({ $0 + "/.sqliterc" }) {
            if let text = Self.regularFileContents(path) {
                if interactive { sink.writeError("-- Loading resources from \(path)\n") }
                // As sqlite3: the init file's errors end the session with
                // -bail only; otherwise they leave the exit status alone.
                let failedBefore = failed
                runScript(Self.lines(of: text), source: Source(name: path))
                if failed && bail { return 1 }
                failed = failedBefore
            } else if explicit {
                sink.writeError("cannot open: \"\(path)\"\n")
                if bail { return 1 }
            }
        }
        for step in options.steps where !isFinished {
            switch step {
            // The output options change the settings as sqlite3's main()
            // does (`-csv` keeps the row separator, where `.mode csv` sets CRLF).
            case .mode(let name): shell.apply(OutputMode(rawValue: name).map { [.mode($0)] } ?? [])
            case .headers(let on): shell.apply([on ? .header : .noHeader])
            case .separator(let separator): shell.apply([.separator(separator)])
            case .newline(let separator): shell.apply([.newline(separator)])
            case .nullValue(let text): shell.apply([.nullValue(text)])
            case .echo(let on): echo = on
            case .eqp(let full): runStep(".eqp \(full ? "full" : "on")")
            case .command(let text):
                // As sqlite3: a failing -cmd stops the session with -bail
                // only; otherwise it leaves the exit status alone.
                let failedBefore = failed
                errorStyle = .argument
                let ok = runArgument(text)
                errorStyle = .script
                if !ok && bail { return exitCode ?? 1 }
                failed = failedBefore
            }
        }
        if isFinished { return signals.termination.map { 128 + $0 } ?? exitCode ?? (hasFailed ? 1 : 0) }
        return nil
    }

    /// Runs one command-line argument: a dot-command, or SQL; returns
    /// whether it succeeded.
    @discardableResult
    func runArgument(_ text: String) -> Bool {
        let bytes = ScriptText(bytes: Array(text.utf8))
        if text.hasPrefix(".") { return run(.dotCommand(bytes, line: 1)) }
        return run(.sql(bytes, line: 1))
    }

    private func runStep(_ command: String) {
        run(.dotCommand(ScriptText(bytes: Array(command.utf8)), line: 1))
    }

    /// A regular file's bytes; `nil` for what is missing, unreadable, or
    /// not a regular file (a FIFO would block the session).
    static func regularFileContents(_ path: String) -> Data? {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        return FileManager.default.contents(atPath: path)
    }
}
