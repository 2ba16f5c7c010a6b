import Foundation
import SQLiveEngine

/// Streams a script's results to the output, rendered in the current mode.
///
/// Output is buffered in chunks of about 64 KiB, so a million-row result
/// in csv mode flows through without being held in memory. With tracing
/// on, each statement is printed after its result, with its time and row
/// count when profiling.
struct RenderingConsumer: ResultConsumer {
    /// Ctrl-C was pressed between two statements.
    struct Interrupted: Error {}

    let settings: RenderSettings
    let sink: OutputSink
    let trace: DotCommand.TraceMode
    let signals: SignalState?
    /// `.stats`: sqlite3's statistics after each statement (0: none).
    let stats: UInt8
    /// Each row is handed to the sink as it is rendered (while SQLite's
    /// own trace writes there, so that its lines come between the rows,
    /// as in sqlite3).
    let flushesRows: Bool
    private var renderer: (any RowRenderer)?
    private var buffer = OutputBuffer(capacity: 1 << 16)
    /// The statement running now, or the last one that started: an error
    /// is located in it.
    private(set) var current: StatementHeader?
    /// The most columns of a result printed in a columnar mode (sqlite3
    /// grows `.width` to it).
    private(set) var widestColumnar = 0
    private var columnCount = 0
    private var columnar = false
    private var rowCount = 0

    init(
        settings: RenderSettings, sink: OutputSink, trace: DotCommand.TraceMode, signals: SignalState?,
        stats: UInt8 = 0, flushesRows: Bool = false
    ) {
        self.settings = settings
        self.sink = sink
        self.trace = trace
        self.signals = signals
        self.stats = stats
        self.flushesRows = flushesRows
    }

    mutating func statementDidStart(_ header: StatementHeader) throws {
        if signals?.isInterruptRequested == true { throw Interrupted() }
        current = header
        columnCount = header.columns.count
        rowCount = 0
        if header.columns.isEmpty {
            renderer = nil
        } else {
            // Only a statement of 8 columns may print in the explain layout (`.explain auto`).
            let sql = settings.explain == .all || header.columns.count == 8 ? header.sql : nil
            var renderer = makeRenderer(settings, sql: sql)
            columnar = renderer is ColumnarRenderer || renderer is GridRenderer
            renderer.begin(columns: header.columns, into: &buffer)
            self.renderer = renderer
        }
    }

    mutating func consume(row: StatementRow) throws {
        renderer?.row(row, into: &buffer)
        rowCount += 1
        if buffer.count >= 1 << 16 || flushesRows { try flush() }
    }

    /// `.stats`: the statistics after the statement's rows (a columnar
    /// result ends first), also when it failed, as sqlite3 prints them.
    mutating func statementDidStep(_ statement: RanStatement) throws {
        guard stats != 0 else { return }
        renderer?.end(into: &buffer)
        renderer = nil
        buffer.append(
            ShellStatistics.text(level: stats, statement: statement.statement, connection: statement.connection))
    }

    mutating func statementDidFinish(_ summary: StatementSummary) throws {
        renderer?.end(into: &buffer)
        renderer = nil
        if rowCount > 0 && columnar { widestColumnar = max(widestColumnar, columnCount) }
        if trace != .off, let current, current.index == summary.index {
            buffer.append(
                TraceLine.format(
                    sql: current.sql, elapsed: trace == .profile ? summary.elapsed : nil,
                    rows: trace == .profile ? summary.rowCount : nil,
                    counters: trace == .profile ? summary.counters : nil, live: false))
        }
        try flush()
    }

    /// Writes what is buffered.
    mutating func flush() throws(OutputSink.Closed) {
        guard buffer.count > 0 else { return }
        defer { buffer.removeAll() }
        let closed = buffer.bytes.withUnsafeBytes { bytes in
            do {
                try sink.write(bytes)
                return false
            } catch {
                return true
            }
        }
        if closed { throw OutputSink.Closed() }
    }
}

/// The lines `.trace` prints.
enum TraceLine {
    /// `-- trace: SQL`, with `(1.234 ms, 3 rows, …)` when profiling: the
    /// time, the rows, then SQLite's counters that are not zero (full-scan
    /// steps, sorts, automatic-index rows, VM steps, memory). Live-query
    /// refreshes say `-- trace live:`.
    static func format(
        sql: String, elapsed: Duration?, rows: Int?, counters: StatementCounters? = nil, live: Bool
    ) -> String {
        var line = (live ? "-- trace live: " : "-- trace: ") + sql.replacingOccurrences(of: "\n", with: " ")
        var details: [String] = []
        if let elapsed { details.append(String(format: "%.3f ms", elapsed.milliseconds)) }
        if let rows { details.append(rows == 1 ? "1 row" : "\(rows) rows") }
        if let summary = counters?.summary, !summary.isEmpty { details.append(summary) }
        if !details.isEmpty { line += " (" + details.joined(separator: ", ") + ")" }
        return line + "\n"
    }
}
