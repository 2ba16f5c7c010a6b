/// How query results are printed.
///
/// The modes are those of the sqlite3 CLI: `box`, `table` and `markdown` draw
/// aligned grids, `csv` is RFC 4180, `json` an array of objects per
/// statement, `line` one `column = value` line per value, `list` values
/// separated by `|`, `tabs` by tabs.
public enum OutputMode: String, CaseIterable, Sendable {
    case box, table, markdown, csv, json, line, list, tabs
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
