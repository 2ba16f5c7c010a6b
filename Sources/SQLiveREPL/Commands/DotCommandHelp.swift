/// The dot-commands' names, usages and help texts, for `.help` and completion.
public enum DotCommandHelp {
    /// One dot-command's documentation.
    public struct Spec: Hashable, Sendable {
        /// The name without the dot.
        public var name: String
        public var usage: String
        public var summary: String
        public var details: String
    }

    /// Every dot-command, in `.help` order.
    public static let all: [Spec] = [
        Spec(
            name: "backup", usage: ".backup ?DB? ?OPTIONS? FILENAME",
            summary: "Backup DB (default \"main\") to FILENAME",
            details: """
                Copies the database with SQLite's backup API into a new file beside FILENAME,
                synced, then renamed to FILENAME: a failure never leaves a half-written copy.
                  --async   accepted, as in sqlite3 (the copy is synced all the same)
                """),
        Spec(name: "bail", usage: ".bail on|off", summary: "Stop after hitting an error.  Default OFF", details: ""),
        Spec(
            name: "binary", usage: ".binary on|off", summary: "Turn binary output on or off.  Default OFF",
            details: "Accepted as in sqlite3; on Linux output is always binary, so it changes nothing."),
        Spec(
            name: "cd", usage: ".cd DIRECTORY", summary: "Change the working directory to DIRECTORY",
            details: "Relative paths given later (.open, .read, .output, .import) are read from there."),
        Spec(
            name: "changes", usage: ".changes on|off", summary: "Show the number of rows changed by SQL",
            details: """
                After each SQL command, prints "changes: N   total_changes: M", as sqlite3 does:
                the rows changed by the last INSERT, UPDATE or DELETE, and all rows changed
                since the database was opened.
                """),
        Spec(
            name: "databases", usage: ".databases", summary: "List names and files of attached databases",
            details: ""),
        Spec(
            name: "dump", usage: ".dump [OPTIONS] [TABLE...]", summary: "Render the database (or TABLEs) as SQL text",
            details: """
                Writes the CREATE statements and an INSERT per row, in one transaction, as
                sqlite3's .dump writes them; the sqlite3 shell loads the text back into an
                identical database (REAL values come back exactly). TABLE is a LIKE pattern
                on table names (indexes, triggers and views: on their own names).
                  --data-only        only the INSERT statements
                  --newlines         text with line breaks as it is, not as replace(…, char(10))
                  --nosys            leave out sqlite_sequence and sqlite_stat1 (system tables)
                  --preserve-rowids  the rowid of each row too, where it is not a column
                """),
        Spec(name: "echo", usage: ".echo on|off", summary: "Turn command echo on or off", details: ""),
        Spec(
            name: "feed", usage: ".feed [TABLE...] | .feed off",
            summary: "Print each commit's changed rows, whoever wrote them",
            details: """
                Every commit by any process or connection: the rows of TABLEs (every table when
                none is named) it inserted (+), deleted (-) and updated (~, the columns that
                changed, old → new), read from the pages it wrote. A table whose rows cannot be
                read for a commit is said to be unknown, with why. `sqlive FILE --changes`
                prints the same as JSON lines.
                """),
        Spec(
            name: "exit", usage: ".exit [CODE]", summary: "Exit this program with return-code CODE (default 0)",
            details: ""),
        Spec(
            name: "explain", usage: ".explain [on|off|auto] | [--bytecode|--advise] SQL",
            summary: "Set the explain layout, or show the query plan of SQL",
            details: """
                on|off|auto, as sqlite3: print every statement (on), EXPLAIN statements only
                (auto, the default) or none (off) in the explain layout: columns 4, 13, 4, 4,
                4, 13, 2, 13 wide, an EXPLAIN program's loops indented. No argument is on.
                With SQL: prints EXPLAIN QUERY PLAN as the tree sqlite3 draws, then what is
                costly in it (full scans with the table's size, temporary b-trees, automatic
                indexes), each after ⚠.
                With --advise, also the indexes that would make the planner stop scanning or
                sorting, found by asking SQLite's planner on a copy of the schema, each as a
                CREATE INDEX statement with the plan it would give. The database is not changed.
                With --bytecode, prints the EXPLAIN program as a table in the current mode.
                The statement is prepared, never run.
                """),
        Spec(
            name: "headers", usage: ".headers on|off", summary: "Turn display of headers on or off",
            details: """
                For list, csv, column, html, tcl, quote, ascii and insert (its column list);
                box, table and markdown always show them, json and line name every value.
                """),
        Spec(
            name: "help", usage: ".help [COMMAND]", summary: "Show help for every command, or for one command",
            details: ""),
        Spec(
            name: "import", usage: ".import [OPTIONS] FILE TABLE",
            summary: "Import data from FILE into TABLE",
            details: """
                  --csv       comma-separated values (the default, unless .mode tabs)
                  --tsv       tab-separated values
                  --skip N    skip the first N rows of FILE
                  --schema S  the table is S.TABLE
                FILE is RFC 4180 text: quoted fields, "" for a quote, line breaks inside quotes,
                LF or CRLF line ends, a UTF-8 byte-order mark skipped. If TABLE does not exist,
                it is created from the first row: one TEXT column per field. If it exists,
                every row is data. Rows with too few fields get NULLs, too many lose the
                extras, with a warning naming the file and line. All rows go in one
                transaction, with one prepared INSERT: live queries re-print once.
                """),
        Spec(
            name: "indexes", usage: ".indexes ?LIKE-PATTERN?",
            summary: "Show names of indexes (on TABLE, a LIKE pattern)",
            details: ""),
        Spec(
            name: "lint", usage: ".lint fkey-indexes [-verbose] [-groupbyparent]",
            summary: "Report potential schema issues",
            details: """
                fkey-indexes    the foreign keys no index serves in their child table, each
                                with the CREATE INDEX that would (deleting or updating a
                                parent row then searches the children instead of scanning)
                  -verbose        also the keys that are served
                  -groupbyparent  ordered by parent table, under "-- Parent table NAME"
                """),
        Spec(
            name: "fullschema", usage: ".fullschema ?--indent?",
            summary: "Show schema and the content of sqlite_stat tables",
            details: """
                As sqlite3's: the CREATE statements (SQLite's own tables left out), then the
                statistics ANALYZE left as INSERT statements, so that a copy plans queries alike.
                """),
        Spec(
            name: "limits", usage: ".limit ?LIMIT? ?NEW?", summary: "Display or change the value of an SQLITE_LIMIT",
            details: """
                SQLite's run-time limits of the session's connection (sqlite3_limit): all of them,
                one by its name (or a prefix of it), or one set to NEW; as sqlite3 prints them.
                """),
        Spec(
            name: "log", usage: ".log FILE|stdout|stderr|off", summary: "Turn SQLite's error log on or off",
            details: """
                Writes SQLite's error log (sqlite3_log: errors and warnings, and the
                sqlite_log(CODE, TEXT) SQL function) as "(CODE) MESSAGE" lines to FILE, standard
                output or standard error, from every connection of this process.
                """),
        Spec(
            name: "mode", usage: ".mode [MODE] [OPTIONS]", summary: "Set the output mode, or show it",
            details: """
                MODE is one of (as in sqlite3 3.40.1; any prefix, tried in sqlite3's order):
                  ascii      Columns/rows delimited by 0x1F and 0x1E
                  box        Tables using unicode box-drawing characters
                  column     Output in columns (headers on, unless .headers was used)
                  csv        Comma-separated values (separators "," and CRLF)
                  html       HTML <TR>/<TD> code
                  insert     SQL insert statements for TABLE (.mode insert TABLE)
                  json       Results in a JSON array
                  line       One value per line
                  list       Values delimited by "|" (sets the separators "|" and LF)
                  markdown   Markdown table format
                  qbox       Shorthand for "box --wrap 60 --quote"
                  quote      Escape answers as for SQL
                  table      ASCII-art table
                  tabs       Tab-separated values
                  tcl        TCL list elements
                OPTIONS (column, table, markdown, box):
                  --wrap N           Wrap output lines to no longer than N characters (0: never)
                  --wordwrap on|off  Try to wrap at word boundaries (--ww: on)
                  --quote|--noquote  Show values as SQL literals
                Without MODE, prints the current mode (and sets it again, as sqlite3 does).
                """),
        Spec(
            name: "nonce", usage: ".nonce STRING", summary: "Suspend safe mode for one command if nonce matches",
            details:
                "With -safe and -nonce STRING: the next command runs outside safe mode. A wrong STRING ends sqlive."),
        Spec(
            name: "nullvalue", usage: ".nullvalue STRING", summary: "Use STRING in place of NULL values",
            details: "The default is the empty string. json, insert, quote and --quote write NULL as SQL does."),
        Spec(
            name: "once", usage: ".once FILE", summary: "Send the next command's output to FILE",
            details: "As .output FILE, for the next command only."),
        Spec(
            name: "open", usage: ".open PATH [--readonly]", summary: "Close the database and open PATH",
            details: """
                PATH is a file (created if missing, unless --readonly), a file: URI, or :memory:.
                Live queries of the previous database are dropped.
                """),
        Spec(
            name: "output", usage: ".output [FILE]", summary: "Send output to FILE, or to stdout without FILE",
            details: """
                Results of SQL and the output of dot-commands go to FILE (emptied first), until
                .output alone (or .output stdout). Errors stay on standard error; live queries
                keep printing on the terminal.
                """),
        Spec(
            name: "panel", usage: ".panel on|off",
            summary: "Pin live results at the top of the terminal (on), or re-print them above the prompt",
            details: """
                Interactive sessions only; on by default. The latest result of each live query is
                drawn at the top of the terminal and redrawn in place when it changes, what changed
                highlighted; your commands and their output scroll underneath. The panel takes at
                most half of the terminal: a query that does not fit shows its first rows and
                "… N more rows". A terminal smaller than 12 rows or 20 columns, or TERM=dumb,
                re-prints above the prompt instead. .panel off prints the latest results once, then
                re-prints each change above the prompt.
                """),
        Spec(
            name: "parameter", usage: ".parameter CMD ...", summary: "Manage SQL parameter bindings",
            details: """
                As the sqlite3 shell's: the bindings live in the table temp.sqlite_parameters, and
                each statement you run binds its parameters (:a, @a, $a, ?1) from it; a parameter
                with no binding is NULL.
                  clear                   Erase all bindings
                  init                    Initialize the TEMP table that holds bindings
                  list                    List the current parameter bindings
                  set PARAMETER VALUE     Given SQL parameter PARAMETER a value of VALUE
                                          (an SQL expression, else the text itself)
                  unset PARAMETER         Remove PARAMETER from the binding table
                """),
        Spec(
            name: "pause", usage: ".pause NAME", summary: "Stop live query NAME's work until .resume",
            details: ""),
        Spec(
            name: "prompt", usage: ".prompt MAIN CONTINUE", summary: "Replace the standard prompts", details: ""),
        Spec(
            name: "print", usage: ".print STRING...", summary: "Print literal STRING",
            details: "The arguments joined by spaces; escapes (\\t, \\n, \\033) resolved unless single-quoted."),
        Spec(name: "quit", usage: ".quit", summary: "Exit this program", details: ""),
        Spec(
            name: "read", usage: ".read FILE", summary: "Run the commands of FILE",
            details: "Errors name the line of PATH. With --bail, the first error stops everything."),
        Spec(
            name: "restore", usage: ".restore ?DB? FILE", summary: "Restore content of DB (default \"main\") from FILE",
            details: "Live queries refresh after it."),
        Spec(
            name: "resume", usage: ".resume NAME",
            summary: "Resume live query NAME (refreshing once if anything changed)", details: ""),
        Spec(
            name: "save", usage: ".save ?OPTIONS? FILE", summary: "Write database to FILE (an alias for .backup ...)",
            details: ""),
        Spec(
            name: "schema", usage: ".schema ?--indent? ?--nosys? ?LIKE-PATTERN?",
            summary: "Show the CREATE statements matching PATTERN",
            details: "PATTERN is a LIKE pattern matched against object and table names."),
        Spec(
            name: "separator", usage: ".separator COL ?ROW?", summary: "Change the column and row separators",
            details: """
                For list, csv, quote, tcl and ascii (line mode ends its lines with ROW). Escapes
                such as \\t, \\n, \\r\\n and \\037 are resolved unless the argument is single-quoted.
                """),
        Spec(
            name: "shell", usage: ".shell CMD ARGS...", summary: "Run CMD ARGS... in a system shell",
            details: """
                As sqlite3 does: the output so far is flushed, then /bin/sh runs the words (those holding a
                space in double quotes). A status other than 0 is printed on stderr. Refused in safe mode.
                """),
        Spec(name: "show", usage: ".show", summary: "Show the current values for various settings", details: ""),
        Spec(
            name: "stats", usage: ".stats ?on|off|stmt|vmstep?", summary: "Show stats or turn stats on or off",
            details: """
                off      Turn off automatic stat display
                on       Turn on automatic stat display: sqlite3's statistics after each statement
                stmt     Also the statement's columns
                vmstep   Show the virtual machine step count only
                Without an argument, the statistics now. SQLite counts its memory only when
                sqlive starts with -stats: otherwise the memory lines say 0.
                """),
        Spec(
            name: "system", usage: ".system CMD ARGS...", summary: "Run CMD ARGS... in a system shell",
            details: "The same as .shell."),
        Spec(
            name: "tables", usage: ".tables [PATTERN]", summary: "List names of tables and views matching PATTERN",
            details: ""),
        Spec(
            name: "timeout", usage: ".timeout MS", summary: "Try opening locked tables for MS milliseconds",
            details: ""),
        Spec(
            name: "timer", usage: ".timer on|off", summary: "Turn the command timer on or off",
            details: "Prints \"Run Time: real S user S sys S\" after each SQL command, as sqlite3 does."),
        Spec(
            name: "trace", usage: ".trace on|profile|off | ?OPTIONS? ?FILE?", summary: "Print each statement run",
            details: """
                on       print each statement after its result, including live-query refreshes
                profile  also print its time, its rows and SQLite's counters
                off      stop tracing (either form)
                sqlite3's form: SQLite's own trace of the session's connection
                  FILE         send it to FILE (or stdout, stderr; off disables it)
                  --expanded   parameters' values in place
                  --plain      the SQL as it was written
                  --stmt       each statement as it starts (the default)
                  --profile    each statement as it ends, with its time in ns
                  --row        each row
                  --close      the connection's close
                """),
        Spec(
            name: "unwatch", usage: ".unwatch NAME|--all", summary: "Drop live query NAME, or all of them",
            details: ""),
        Spec(
            name: "wait", usage: ".wait [NAME] [--timeout SECONDS]",
            summary: "Wait until live query NAME (or any) prints its next change",
            details: """
                Returns at once if the query printed a change since the last .wait or .watch.
                Fails after the timeout (default 10 seconds). Ctrl-C stops waiting.
                """),
        Spec(
            name: "watch", usage: ".watch [--diff|--changes] [--max-rows N] [--replace] NAME SQL",
            summary: "Register live query NAME; re-print it whenever its result changes",
            details: """
                SQL is one read-only statement (the rest of the line). Its result is printed now,
                then again each time it changes, whoever writes the database.
                  --diff        re-print only the rows removed (-) and added (+)
                  --changes     re-print only what changed: rows removed (-), added (+) and
                                changed (~, matched by the table's rowid or primary key when
                                the query returns it), with their row numbers
                  --max-rows N  hold and show at most N rows (default 10000); the rest are counted
                  --replace     redefine an existing live query NAME in place
                """),
        Spec(
            name: "watches", usage: ".watches",
            summary: "List live queries: name, tables read, version, refreshes, last refresh", details: ""),
        Spec(
            name: "web", usage: ".web [[HOST:]PORT]|off",
            summary: "Serve this session's database and live queries as the live page in a browser",
            details: """
                Prints the page's address, with its token (127.0.0.1 and a free port unless given).
                The page shows this session's live queries and follows every writer; what it
                watches joins them (.watches lists them). .web again prints the address;
                .web off stops it, as closing the database or quitting does.
                """),
        Spec(
            name: "width", usage: ".width NUM1 NUM2 ...", summary: "Set minimum column widths for columnar output",
            details: """
                For column, table, markdown and box: 0 sizes a column to its values, a negative
                width right-aligns it; a value wider than its column wraps.
                """),
    ]

    /// The command with this name, or the one it abbreviates as the sqlite3
    /// shell reads abbreviations: the first of its commands, in its order,
    /// that the name begins, if long enough (`.h` is `.headers`, `.sep` is
    /// `.separator`, `.s` is `.scanstats`, which sqlive has not). sqlive's own
    /// commands are matched by their whole name, or as the only command the
    /// name abbreviates.
    public static func spec(named name: String) -> Spec? {
        guard !name.isEmpty else { return nil }
        if let exact = all.first(where: { $0.name == name }) { return exact }
        if let match = shellAbbreviations.first(where: { name.count >= $0.minimum && $0.name.hasPrefix(name) }) {
            return all.first { $0.name == match.name }
        }
        let candidates = all.filter { $0.name.hasPrefix(name) && !shellCommandNames.contains($0.name) }
        return candidates.count == 1 ? candidates[0] : nil
    }

    /// The sqlite3 shell's commands (3.40.1), in the order it tries them,
    /// each with the shortest abbreviation it accepts.
    static let shellAbbreviations: [(name: String, minimum: Int)] = [
        ("auth", 1), ("archive", 1), ("backup", 3), ("save", 3), ("bail", 3), ("binary", 3), ("breakpoint", 3),
        ("cd", 2), ("changes", 3), ("check", 3), ("clone", 1), ("connection", 1), ("databases", 2),
        ("dbconfig", 3), ("dbinfo", 3), ("recover", 1), ("dump", 1), ("echo", 1), ("eqp", 1), ("exit", 1),
        ("explain", 1), ("expert", 1), ("filectrl", 1), ("fullschema", 1), ("headers", 1), ("help", 1),
        ("import", 1), ("imposter", 1), ("iotrace", 1), ("limits", 5), ("lint", 3), ("load", 1), ("log", 1),
        ("mode", 1), ("nonce", 5), ("nullvalue", 1), ("open", 2), ("output", 1), ("once", 1),
        ("parameter", 3), ("print", 3), ("progress", 3), ("prompt", 1), ("quit", 1), ("read", 3),
        ("restore", 3), ("scanstats", 1), ("schema", 1), ("session", 3), ("selftest", 4), ("separator", 1),
        ("sha3sum", 4), ("shell", 1), ("system", 1), ("show", 1), ("stats", 1), ("tables", 2), ("indexes", 1),
        ("testcase", 8), ("testctrl", 8), ("timeout", 5), ("timer", 5), ("trace", 1), ("unmodule", 1),
        ("user", 1), ("version", 1), ("vfsinfo", 1), ("vfslist", 1), ("vfsname", 1), ("wheretrace", 1),
        ("width", 1),
    ]

    private static let shellCommandNames = Set(shellAbbreviations.map(\.name))

    /// The sqlite3 shell's help of the commands whose usage errors print
    /// it (3.40.1, byte for byte).
    static let shellHelp: [String: String] = [
        "import": """
        .import FILE TABLE       Import data from FILE into TABLE
           Options:
             --ascii               Use \\037 and \\036 as column and row separators
             --csv                 Use , and \\n as column and row separators
             --skip N              Skip the first N rows of input
             --schema S            Target table to be S.TABLE
             -v                    "Verbose" - increase auxiliary output
           Notes:
             *  If TABLE does not exist, it is created.  The first row of input
                determines the column names.
             *  If neither --csv or --ascii are used, the input mode is derived
                from the ".mode" output mode
             *  If FILE begins with "|" then it is a command that generates the
                input text.

        """,
        "parameter": """
        .parameter CMD ...       Manage SQL parameter bindings
           clear                   Erase all bindings
           init                    Initialize the TEMP table that holds bindings
           list                    List the current parameter bindings
           set PARAMETER VALUE     Given SQL parameter PARAMETER a value of VALUE
                                   PARAMETER should start with one of: $ : @ ?
           unset PARAMETER         Remove PARAMETER from the binding table

        """,
        "output": """
        .output ?FILE?           Send output to FILE or stdout if FILE is omitted
           If FILE begins with '|' then open it as a pipe.
           Options:
             --bom                 Prefix output with a UTF8 byte-order mark
             -e                    Send output to the system text editor
             -x                    Send output as CSV to a spreadsheet

        """,
        "once": """
        .once ?OPTIONS? ?FILE?   Output for the next SQL command only to FILE
             If FILE begins with '|' then open as a pipe
               --bom  Put a UTF8 byte-order mark at the beginning
               -e     Send output to the system text editor
               -x     Send output as CSV to a spreadsheet (same as ".excel")

        """,
    ]

    /// The text of `.help`: one line per command.
    public static var overview: String {
        let width = all.map(\.usage.count).max() ?? 0
        return all.map { spec in
            spec.usage + String(repeating: " ", count: width - spec.usage.count) + "  " + spec.summary
        }.joined(separator: "\n") + "\n"
    }

    /// The lines of `.help` for the commands whose names the glob pattern
    /// (`*`, `?`, `[...]`) matches from their start, as sqlite3's `.help
    /// PATTERN`; `nil` when the name holds no glob character.
    public static func overview(matching pattern: String) -> String? {
        guard pattern.contains(where: { "*?[".contains($0) }) else { return nil }
        let width = all.map(\.usage.count).max() ?? 0
        let lines = all.filter { glob(pattern + "*", $0.name) }.map { spec in
            spec.usage + String(repeating: " ", count: width - spec.usage.count) + "  " + spec.summary + "\n"
        }
        return lines.joined()
    }

    /// A small glob: `*` any run, `?` one character, `[...]` a set.
    static func glob(_ pattern: String, _ text: String) -> Bool {
        let pattern = Array(pattern)
        let text = Array(text)
        func match(_ p: Int, _ t: Int) -> Bool {
            if p == pattern.count { return t == text.count }
            switch pattern[p] {
            case "*": return (t...text.count).contains { match(p + 1, $0) }
            case "?": return t < text.count && match(p + 1, t + 1)
            case "[":
                guard let close = pattern[(p + 1)...].firstIndex(of: "]"), t < text.count else { return false }
                return pattern[(p + 1)..<close].contains(text[t]) && match(close + 1, t + 1)
            default: return t < text.count && pattern[p] == text[t] && match(p + 1, t + 1)
            }
        }
        return match(0, 0)
    }

    /// The text of `.help NAME`.
    public static func help(for name: String) -> String? {
        guard let spec = spec(named: name) else { return nil }
        var text = spec.usage + "\n  " + spec.summary + "\n"
        if !spec.details.isEmpty {
            text +=
                spec.details.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }
                .joined(separator: "\n") + "\n"
        }
        return text
    }
}
