/// Everything a renderer needs to know besides the rows.
///
/// ```swift
/// var settings = RenderSettings(mode: .box)
/// settings.maxWidth = 80   // truncate wide cells to fit 80 columns
/// ```
public struct RenderSettings: Hashable, Sendable {
    /// The output mode.
    public var mode: OutputMode
    /// `.headers`: a header line in the modes that have one as an option
    /// (`list`, `csv`, `column`, `html`, `tcl`, `quote`, `ascii`, the
    /// column list of `insert`); `box`, `table` and `markdown` always have
    /// one, `json` and `line` name every value.
    public var headers: Bool
    /// `.nullvalue`: how NULL shows, except in `json`, `insert`, `quote`
    /// and `--quote` grids (`null`, `NULL`).
    public var nullText: String
    /// The terminal width: `box` and `table` cut wide cells with an ellipsis
    /// to fit it, in `terminal` style only. `nil` never cuts.
    public var maxWidth: Int?
    /// Whether ANSI colours may be used (NULL is dimmed).
    public var colour: Bool
    /// `.separator`: between the values of a row (list, csv, quote, tcl, ascii).
    public var columnSeparator = "|"
    /// `.separator`: after each row (list, csv, quote, tcl, ascii, line).
    public var rowSeparator = "\n"
    /// `.width`: a width per column of the columnar modes (0: as wide as
    /// needed; negative: right-aligned).
    public var widths: [Int] = []
    /// `--wrap`, `--wordwrap`, `--quote` of the columnar modes.
    public var columnar = ColumnarOptions()
    /// The table name of `.mode insert`, as SQL text.
    public var insertTable = "\"table\""
    /// Interactive sessions' grids (`box`, `table`, `markdown`): numbers
    /// right-aligned, a line break inside a cell shown as `\n`, cells cut
    /// to `maxWidth`, BLOBs as `X'…'` literals. Otherwise every mode writes
    /// the bytes the sqlite3 3.40.1 shell writes.
    public var terminal = false
    /// Which statements print in sqlite3's explain layout (`.explain`).
    public var explain = ExplainLayout.none

    /// Which statements print in sqlite3's explain layout.
    public enum ExplainLayout: Hashable, Sendable {
        /// None (`.explain off`).
        case none
        /// `EXPLAIN …` statements (`.explain auto`, the default).
        case explainStatements
        /// Every statement (`.explain on`).
        case all
    }

    /// Settings for `mode`, with the separators `.mode` gives it (`csv`:
    /// `,` and CRLF; `tabs`: a tab; `quote`: `,`; `tcl`: a space; `ascii`:
    /// 0x1F and 0x1E; otherwise `|` and LF).
    public init(
        mode: OutputMode, headers: Bool = false, nullText: String = "", maxWidth: Int? = nil,
        colour: Bool = false, terminal: Bool = false
    ) {
        self.mode = mode
        self.headers = headers
        self.nullText = nullText
        self.maxWidth = maxWidth
        self.colour = colour
        self.terminal = terminal
        switch mode {
        case .csv: (columnSeparator, rowSeparator) = (",", "\r\n")
        case .tabs: columnSeparator = "\t"
        case .quote: columnSeparator = ","
        case .tcl: columnSeparator = " "
        case .ascii: (columnSeparator, rowSeparator) = ("\u{1F}", "\u{1E}")
        default: break
        }
        if mode == .qbox { columnar.quote = true }
    }
}

/// ANSI escape sequences, used only when colour is on.
enum ANSI {
    static let dim = "\u{1B}[2m"
    static let bold = "\u{1B}[1m"
    static let red = "\u{1B}[31m"
    static let cyan = "\u{1B}[36m"
    /// A value that changed since the previous version: reverse video.
    static let changed = "\u{1B}[7m"
    /// A row added since the previous version: green.
    static let added = "\u{1B}[32m"
    /// A row removed since the previous version: red, struck through.
    static let removed = "\u{1B}[31;9m"
    static let reset = "\u{1B}[0m"
}
