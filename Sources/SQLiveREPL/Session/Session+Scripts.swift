import Foundation
import SQLiveEngine

// Scripts: their lines, `.read`, and consecutive SQL commands run together.
extension Session {
    /// Runs a script's lines (a `-f` file, `.read`, the `-c` commands, piped input).
    ///
    /// - parameter firstLine: The number of the first line, when several inputs count as one script.
    /// - returns: The number of the last line read.
    @discardableResult
    func runScript<Lines: Sequence<ScriptText>>(
        _ lines: Lines, source: Source = Source(), firstLine: Int = 1
    ) -> Int {
        var input = InputAccumulator()
        var number = firstLine - 1
        defer { runPendingSQL() }
        for line in lines {
            number += 1
            if echo && input.isEmpty {
                // `.echo on`: blank lines, comments and dot-commands as read.
                let bytes = line.bytes
                if bytes.first == UInt8(ascii: ".") || bytes.first == UInt8(ascii: "#")
                    || InputAccumulator.isAllWhitespace(bytes)
                {
                    writeEcho(bytes)
                }
            }
            if let unit = input.add(line, lineNumber: number) {
                // `.echo on`: a complete SQL command, from its first character.
                if echo, case .sql(let text, _) = unit {
                    writeEcho(Array(text.bytes.drop { $0 == 0x20 || ($0 >= 0x09 && $0 <= 0x0D) }))
                }
                submit(unit, source: source)
            }
            if isFinished { return number }
        }
        if let unit = input.finish() { submit(unit, source: source) }
        return number
    }

    /// A script's SQL command, decoded, waiting to run.
    struct PendingSQL {
        var sql: String
        var line: Int
        var source: Source
    }

    /// The most SQL commands that wait to run together.
    static let pendingSQLLimit = 512

    /// Runs a unit of a script, or keeps it to run with the SQL commands
    /// that follow it.
    ///
    /// A script's consecutive SQL commands run in one visit to the
    /// database (`LiveDatabase.run(scripts:)`) rather than one each, when
    /// nothing has to happen between two of them: in a scripted session
    /// with no live query (whose updates print between commands), no
    /// `.changes`, `.timer` or `.once`. Each keeps its own errors, line
    /// numbers and results, in order; they run before any dot-command,
    /// before the input is read again (`runPendingSQL`), at the script's
    /// end, and every `pendingSQLLimit` commands.
    func submit(_ unit: InputAccumulator.Unit, source: Source) {
        if !interactive, !echo, database != nil, watches.isEmpty, !shell.changes, !shell.timer, onceCountdown == nil,
            !isSafeModeSuspended,
            case .sql(let text, let line) = unit, let sql = try? text.decoded(firstLine: line),
            Self.explainedQuery(sql) == nil
        {
            pendingSQL.append(PendingSQL(sql: sql, line: line, source: source))
            if pendingSQL.count >= Self.pendingSQLLimit { runPendingSQL() }
            return
        }
        runPendingSQL()
        run(unit, source: source)
    }

    /// Runs the SQL commands that `submit` kept, as `run` would run each.
    func runPendingSQL() {
        guard !pendingSQL.isEmpty else { return }
        let batch = pendingSQL
        pendingSQL = []
        guard !isFinished, let database else { return }
        usedDatabase = true
        let outermost = beginCommand()
        var consumer = RenderingConsumer(
            settings: renderSettings, sink: sink, trace: shell.trace, signals: nil, stats: shell.stats,
            flushesRows: diagnostics.traceOutput != nil)
        do {
            let signals = signals
            try database.run(
                scripts: batch.map(\.sql), parameters: .shell, isCancelled: { signals.isCommandCancelled },
                consumer: &consumer
            ) { index, failure, consumer in
                let command = batch[index]
                report(failure, in: command.sql, line: command.line, source: command.source, consumer: &consumer)
                commandFailed()
                return !isFinished
            }
        } catch is OutputSink.Closed {
            stopped = true
        } catch {
            // The consumer's own errors, or a database that cannot run
            // anything (closed): the commands left do not run.
            flush(&consumer)
            reportError("\(error)", source: batch[0].source)
            commandFailed()
        }
        shell.didPrintColumns(consumer.widestColumnar)
        endCommand(outermost: outermost)
        if sink.resultsFile != nil { sink.flush() }
        printEvents()
    }

    /// Writes a line `.echo on` prints, where results go.
    func writeEcho(_ bytes: [UInt8]) {
        runPendingSQL()
        do {
            try sink.write(String(decoding: bytes, as: UTF8.self) + "\n")
        } catch {
            stopped = true
        }
    }

    /// `.read PATH`.
    func read(path: String) throws {
        // sqlite3's limit, and its words (the line of the `.read` that went too deep).
        guard readDepth < 24 else {
            throw CommandFailure(
                verbatim: "Input nesting limit (25) reached at line \(commandLine). Check recursion.")
        }
        guard let text = FileManager.default.contents(atPath: path) else {
            throw CommandFailure("cannot open \"\(path)\"")
        }
        readDepth += 1
        defer { readDepth -= 1 }
        let failedBefore = failed
        failed = false
        runScript(Self.lines(of: text), source: Source(name: path))
        let nestedFailed = failed
        failed = failedBefore || nestedFailed
        if nestedFailed && !interactive && bail { stopped = true }
    }

    /// The lines of a script's bytes, without their line terminators.
    static func lines(of bytes: some Collection<UInt8>) -> [ScriptText] {
        let bytes = Array(bytes)
        var lines: [ScriptText] = []
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var start = 0
            while start <= buffer.count {
                let rest = buffer.count - start
                let end =
                    memchr(base + start, 0x0A, rest).map {
                        UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - base
                    } ?? buffer.count
                var lineEnd = end
                if lineEnd > start && buffer[lineEnd - 1] == 0x0D { lineEnd -= 1 }
                lines.append(ScriptText(bytes: UnsafeBufferPointer(rebasing: buffer[start..<lineEnd])))
                start = end + 1
            }
        }
        if lines.last?.isEmpty == true { lines.removeLast() }
        return lines
    }

    /// The lines of a text, without their line terminators.
    static func lines(of text: String) -> [ScriptText] {
        lines(of: Array(text.utf8))
    }
}
