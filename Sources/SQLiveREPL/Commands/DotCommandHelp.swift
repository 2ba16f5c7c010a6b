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
            name: "changes", usage: ".changes on|off", summary: "Show the number of rows changed by SQL",
            details: """
                After each SQL command, prints "changes: N   total_changes: M", as sqlite3 does:
                the rows changed by the last INSERT, UPDATE or DELETE, and all rows changed
                since the database was opened.
                """),
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
        Spec(
            name: "exit", usage: ".exit [CODE]", summary: "Exit this program with return-code CODE (default 0)",
            details: ""),
        Spec(
            name: "explain", usage: ".explain [--bytecode|--advise] SQL",
            summary: "Show the query plan of SQL as a tree, or its bytecode program",
            details: """
                Without --bytecode, prints EXPLAIN QUERY PLAN as the tree sqlite3 draws, then
                what is costly in it (full scans with the table's size, temporary b-trees,
                automatic indexes), each after ⚠.
                With --advise, also the indexes that would make the planner stop scanning or
                sorting, found by asking SQLite's planner on a copy of the schema, each as a
                CREATE INDEX statement with the plan it would give. The database is not changed.
                With --bytecode, prints the EXPLAIN program as a table in the current mode.
                The statement is prepared, never run.
                """),
        Spec(
            name: "headers", usage: ".headers on|off", summary: "Turn display of headers on or off (list, csv)",
            details: "Grids (box, table, markdown) always show their headers; json and line name every value."),
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
            name: "indexes", usage: ".indexes [TABLE]", summary: "Show names of indexes (on TABLE, a LIKE pattern)",
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
            name: "mode", usage: ".mode [MODE]", summary: "Set the output mode, or show it",
            details: """
                MODE is one of:
                  box        Tables using unicode box-drawing characters
                  table      ASCII-art table
                  markdown   Markdown table format
                  csv        Comma-separated values (RFC 4180)
                  json       Results in a JSON array of objects
                  line       One value per line, "column = value"
                  list       Values delimited by "|"
                  tabs       Values delimited by tabs
                """),
        Spec(
            name: "nullvalue", usage: ".nullvalue TEXT", summary: "Show NULL values as TEXT (default NULL)",
            details: "Applies to box, table, markdown, line and list. csv leaves NULL empty; json writes null."),
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
            name: "pause", usage: ".pause NAME", summary: "Stop live query NAME's work until .resume",
            details: ""),
        Spec(name: "print", usage: ".print TEXT...", summary: "Print the arguments", details: ""),
        Spec(name: "quit", usage: ".quit", summary: "Exit this program", details: ""),
        Spec(
            name: "read", usage: ".read PATH", summary: "Run the commands of the file PATH",
            details: "Errors name the line of PATH. With --bail, the first error stops everything."),
        Spec(
            name: "resume", usage: ".resume NAME",
            summary: "Resume live query NAME (refreshing once if anything changed)", details: ""),
        Spec(
            name: "schema", usage: ".schema [PATTERN]", summary: "Show the CREATE statements matching PATTERN",
            details: "PATTERN is a LIKE pattern matched against object and table names."),
        Spec(
            name: "tables", usage: ".tables [PATTERN]", summary: "List names of tables and views matching PATTERN",
            details: ""),
        Spec(
            name: "timer", usage: ".timer on|off", summary: "Turn the command timer on or off",
            details: "Prints \"Run Time: real S\" after each command."),
        Spec(
            name: "trace", usage: ".trace on|profile|off", summary: "Print each statement run",
            details: """
                on       print each statement as it runs, including live-query refreshes
                profile  also print its time and the number of rows it returned
                off      stop tracing
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
    ]

    /// The command with this name, or the only one it abbreviates.
    public static func spec(named name: String) -> Spec? {
        if let exact = all.first(where: { $0.name == name }) { return exact }
        let candidates = all.filter { $0.name.hasPrefix(name) }
        return candidates.count == 1 && !name.isEmpty ? candidates[0] : nil
    }

    /// The text of `.help`: one line per command.
    public static var overview: String {
        let width = all.map(\.usage.count).max() ?? 0
        return all.map { spec in
            spec.usage + String(repeating: " ", count: width - spec.usage.count) + "  " + spec.summary
        }.joined(separator: "\n") + "\n"
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
