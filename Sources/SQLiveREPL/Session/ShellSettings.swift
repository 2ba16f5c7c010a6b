import SQLiveEngine

/// What a session's dot-commands set, as in the sqlite3 3.40.1 shell: how
/// results print (`.mode`, `.headers`, `.separator`, `.nullvalue`,
/// `.width`, `.explain`) and what prints beside them (`.timer`, `.trace`,
/// `.changes`).
///
/// The defaults are sqlite3's: `list` mode, no headers, `|` between
/// columns and `\n` after rows, NULL as the empty string, columnar modes
/// wrapping at 60 characters.
struct ShellSettings {
    /// The mode, never `tabs` nor `qbox` (they set `list` and `box`).
    private(set) var mode: OutputMode
    /// `.explain on`: every statement prints in the explain layout, and
    /// `.mode` says `explain` (`mode` is the mode to go back to).
    private(set) var explain = false
    /// `.explain auto` (the default): `EXPLAIN` statements print in the explain layout.
    private(set) var autoExplain = true
    /// `.headers`: sqlite3 keeps the number it was given (`.headers 2`).
    var headers = 0
    /// Whether `.headers` was used: `.mode column` then leaves headers alone.
    var headersSet = false
    var columnSeparator = "|"
    var rowSeparator = "\n"
    var nullText = ""
    /// `.width`: a width per column (0: as wide as needed, negative: right-aligned).
    var widths: [Int] = []
    /// `--wrap N`, `--wordwrap`, `--quote` of the columnar modes.
    private(set) var columnar = ColumnarOptions()
    /// The table of `.mode insert`, quoted as SQL needs it.
    private(set) var insertTable = "\"table\""
    /// `.timer on`: the run time after each SQL command.
    var timer = false
    var trace = DotCommand.TraceMode.off
    /// `.changes on`: the change counters after each SQL command.
    var changes = false
    /// `.stats` (`-stats`): sqlite3's statistics after each statement; 0
    /// off, 2 `stmt`, 3 `vmstep`, anything else `on` (`ShellStatistics`).
    var stats: UInt8 = 0

    /// Starts in `mode`, set as `.mode` sets it.
    init(mode: OutputMode) {
        self.mode = .list
        setMode(mode, table: nil, options: ColumnarOptions())
    }

    /// The name `.mode` and `.show` print for the mode.
    var modeName: String { explain ? "explain" : mode.rawValue }

    /// `current output mode: …` (`.mode`) or `mode: …` (`.show`): the
    /// columnar modes add their options.
    var modeDescription: String {
        guard mode.isColumnar && !explain else { return modeName }
        return modeName + " " + columnar.description
    }

    /// `.mode MODE [TABLE] [OPTIONS]`, as sqlite3 sets it: some modes set
    /// the separators, some keep them, and the columnar modes take their options.
    mutating func setMode(_ newMode: OutputMode, table: String?, options: ColumnarOptions) {
        explain = false
        switch newMode {
        case .line:
            mode = .line
            rowSeparator = "\n"
        case .column:
            mode = .column
            if !headersSet { headers = 1 }
            rowSeparator = "\n"
            columnar = options
        case .list:
            mode = .list
            (columnSeparator, rowSeparator) = ("|", "\n")
        case .html, .json, .count, .off:
            mode = newMode
        case .tcl:
            mode = .tcl
            (columnSeparator, rowSeparator) = (" ", "\n")
        case .csv:
            mode = .csv
            (columnSeparator, rowSeparator) = (",", "\r\n")
        case .tabs:
            mode = .list
            columnSeparator = "\t"
        case .insert:
            mode = .insert
            insertTable = SQLiteText.quotedTableName(table ?? "table")
        case .quote:
            mode = .quote
            (columnSeparator, rowSeparator) = (",", "\n")
        case .ascii:
            mode = .ascii
            (columnSeparator, rowSeparator) = ("\u{1F}", "\u{1E}")
        case .markdown, .table, .box:
            mode = newMode
            columnar = options
        case .qbox:
            mode = .box
            columnar = options
        }
    }

    /// `.explain on|off|auto`.
    mutating func setExplain(_ setting: DotCommand.ExplainSetting) {
        switch setting {
        case .on:
            explain = true
            autoExplain = false
        case .off:
            explain = false
            autoExplain = false
        case .auto:
            explain = false
            autoExplain = true
        case .unchanged:
            break
        }
    }

    /// Applies the sqlite3 shell's command-line options, as its `main()` does.
    mutating func apply(_ options: [OutputOption]) {
        for option in options {
            switch option {
            case .header:
                headers = 1
                headersSet = true
            case .noHeader:
                headers = 0
            case .mode(let newMode):
                explain = false
                switch newMode {
                case .quote, .ascii: setMode(newMode, table: nil, options: columnar)
                case .tabs:
                    mode = .list
                    (columnSeparator, rowSeparator) = ("\t", "\n")
                case .csv:
                    mode = .csv
                    columnSeparator = ","
                case .qbox: mode = .box
                default: mode = newMode
                }
                // sqlite3's options leave the columnar options zero: no wrapping.
                if newMode.isColumnar { columnar = ColumnarOptions(wrap: 0) }
            case .separator(let text): columnSeparator = SQLiteText.limited(text)
            case .newline(let text): rowSeparator = SQLiteText.limited(text)
            case .nullValue(let text): nullText = SQLiteText.limited(text)
            }
        }
    }

    /// What renderers use. `terminal`: interactive sessions' grids (numbers
    /// right-aligned, cells cut to `maxWidth`); otherwise sqlite3's exact bytes.
    func renderSettings(maxWidth: Int?, colour: Bool, terminal: Bool = false) -> RenderSettings {
        var settings = RenderSettings(
            mode: mode, headers: headers != 0, nullText: nullText, maxWidth: terminal ? maxWidth : nil,
            colour: colour)
        settings.columnSeparator = columnSeparator
        settings.rowSeparator = rowSeparator
        settings.widths = widths
        settings.columnar = columnar
        settings.insertTable = insertTable
        settings.terminal = terminal
        settings.explain = explain ? .all : autoExplain ? .explainStatements : .none
        return settings
    }

    /// What the engine's tracer must do for `.trace`.
    var traceSettings: TraceSettings {
        TraceSettings(enabled: trace != .off, profile: trace == .profile)
    }

    /// After a columnar result of `count` columns: sqlite3 grows `.width`
    /// with zeros to the widest result it printed (`.show` tells).
    mutating func didPrintColumns(_ count: Int) {
        if count > widths.count { widths += Array(repeating: 0, count: count - widths.count) }
    }

    /// The text of `.show`, as sqlite3 prints it.
    func show(output: String?, filename: String) -> String {
        func line(_ name: String, _ value: String) -> String {
            String(repeating: " ", count: max(0, 12 - name.count)) + name + ": " + value + "\n"
        }
        var text = line("echo", "off") + line("eqp", "off")
        text += line("explain", explain ? "on" : autoExplain ? "auto" : "off")
        text += line("headers", headers != 0 ? "on" : "off")
        text += line("mode", modeDescription)
        text += line("nullvalue", SQLiteText.cString(nullText))
        text += line("output", output ?? "stdout")
        text += line("colseparator", SQLiteText.cString(columnSeparator))
        text += line("rowseparator", SQLiteText.cString(rowSeparator))
        text += line("stats", ShellStatistics.name(of: stats))
        text += line("width", widths.map { "\($0) " }.joined())
        text += line("filename", filename)
        return text
    }
}

/// The options of the columnar modes: `--wrap N` (0: never), `--wordwrap
/// on|off` (`--ww`), `--quote` / `--noquote`.
public struct ColumnarOptions: Hashable, Sendable {
    public var wrap = 60
    public var wordWrap = false
    public var quote = false

    public init(wrap: Int = 60, wordWrap: Bool = false, quote: Bool = false) {
        self.wrap = wrap
        self.wordWrap = wordWrap
        self.quote = quote
    }

    /// `qbox`'s defaults.
    static let quoted = ColumnarOptions(quote: true)

    /// As `.mode` and `.show` print them: `--wrap 60 --wordwrap off --noquote`.
    var description: String {
        "--wrap \(wrap) --wordwrap \(wordWrap ? "on" : "off") --\(quote ? "" : "no")quote"
    }
}
