/// How query results are printed: the modes of the sqlite3 3.40.1 shell's
/// `.mode`, in the order of its error message.
///
/// `column`, `table`, `markdown` and `box` are columnar (sized to every
/// row); the others stream. `tabs` is `list` with a tab between values, and
/// `qbox` is `box --quote`: neither is a mode of its own once set (`.mode`
/// then says `list` or `box`, as sqlite3 does). `count` and `off` are
/// sqlite3's undocumented modes (the number of rows; nothing).
public enum OutputMode: String, CaseIterable, Sendable {
    case ascii, box, column, csv, html, insert, json, line, list, markdown, qbox, quote, table, tabs, tcl
    case count, off

    /// Whether the mode sizes its columns to every row (and takes `.width`,
    /// `--wrap`, `--wordwrap` and `--quote`).
    public var isColumnar: Bool {
        switch self {
        case .column, .table, .markdown, .box, .qbox: true
        default: false
        }
    }
}

/// One of the sqlite3 shell's output options on its command line, applied
/// as the shell's `main()` applies it — which is not always what the
/// dot-command of the same name does: `-csv` keeps the row separator
/// (`.mode csv` sets CRLF), `-column` does not turn headers on, `-box`,
/// `-table` and `-markdown` do not wrap (`--wrap 0`), `-list`, `-html` and
/// `-line` keep both separators, `-separator`, `-newline` and `-nullvalue`
/// take their text as it is (no backslash escapes).
public enum OutputOption: Hashable, Sendable {
    /// `-header`.
    case header
    /// `-noheader`.
    case noHeader
    /// `-ascii`, `-box`, `-column`, `-csv`, `-html`, `-json`, `-line`,
    /// `-list`, `-markdown`, `-quote`, `-table`, `-tabs`.
    case mode(OutputMode)
    /// `-separator TEXT`: the column separator.
    case separator(String)
    /// `-newline TEXT`: the row separator.
    case newline(String)
    /// `-nullvalue TEXT`.
    case nullValue(String)
}

/// What a session was asked to do, from the command line.
///
/// ```swift
/// let options = SessionOptions(
///     database: "games.sqlite", readonly: false, commands: ["SELECT 1;"], file: nil,
///     mode: .csv, bail: true, demo: false)
/// let status = await SessionRunner.run(options)
/// ```
public struct SessionOptions: Sendable {
    /// The database path or URI; `nil` opens an in-memory database.
    public var database: String?
    /// Open the database read-only.
    public var readonly: Bool
    /// The `-c` commands, in order. Non-empty makes the session scripted.
    public var commands: [String]
    /// The `-f` script file. Non-nil makes the session scripted.
    public var file: String?
    /// The initial output mode; `nil` picks `box` interactively and `list` in scripts.
    public var mode: OutputMode?
    /// Stop a scripted session at the first error.
    public var bail: Bool
    /// Open a temporary demo database that a second connection keeps writing to.
    public var demo: Bool
    /// SQL and dot-commands given after the database name: run in order,
    /// stopping at the first that fails (as sqlite3), instead of reading
    /// standard input.
    public var trailing: [String] = []
    /// Settings and `-cmd` commands, applied in order after the init file.
    public var steps: [ShellCommandLine.Step] = []
    /// `-init FILE`; `nil` runs `~/.sqliterc` when it exists.
    public var initFile: String?
    /// `-interactive` or `-batch`; `nil`: whether standard input is a terminal.
    public var interactive: Bool?
    /// `-stats`: `.stats on` from the start.
    public var stats = false
    /// `-safe`: sqlite3's safe mode, and `-nonce`'s string for `.nonce`.
    public var safe = false
    public var nonce: String?
    /// `--refresh-budget`: the live queries' refresh budget (`.some(nil)`:
    /// no limit), nil for the engine's default.
    public var refreshBudget: Duration??

    public init(
        database: String?, readonly: Bool, commands: [String], file: String?, mode: OutputMode?, bail: Bool,
        demo: Bool
    ) {
        self.database = database
        self.readonly = readonly
        self.commands = commands
        self.file = file
        self.mode = mode
        self.bail = bail
        self.demo = demo
    }
}
