/// What `sqlive -help` prints on standard error: the sqlite3 shell's usage
/// text (3.40.1, as Debian builds it), then sqlive's own options.
public enum ShellUsage {
    public static func text(program: String) -> String {
        """
        Usage: \(program) [OPTIONS] FILENAME [SQL]
        FILENAME is the name of an SQLite database. A new database is created
        if the file does not previously exist.
        OPTIONS include:
           -A ARGS...           run ".archive ARGS" and exit
           -append              append the database to the end of the file
           -ascii               set output mode to 'ascii'
           -bail                stop after hitting an error
           -batch               force batch I/O
           -box                 set output mode to 'box'
           -column              set output mode to 'column'
           -cmd COMMAND         run "COMMAND" before reading stdin
           -csv                 set output mode to 'csv'
           -deserialize         open the database using sqlite3_deserialize()
           -echo                print inputs before execution
           -init FILENAME       read/process named file
           -[no]header          turn headers on or off
           -help                show this message
           -html                set output mode to HTML
           -interactive         force interactive I/O
           -json                set output mode to 'json'
           -line                set output mode to 'line'
           -list                set output mode to 'list'
           -lookaside SIZE N    use N entries of SZ bytes for lookaside memory
           -markdown            set output mode to 'markdown'
           -maxsize N           maximum size for a --deserialize database
           -memtrace            trace all memory allocations and deallocations
           -mmap N              default mmap size set to N
           -newline SEP         set output row separator. Default: '\\n'
           -nofollow            refuse to open symbolic links to database files
           -nonce STRING        set the safe-mode escape nonce
           -nullvalue TEXT      set text string for NULL values. Default ''
           -pagecache SIZE N    use N slots of SZ bytes each for page cache memory
           -quote               set output mode to 'quote'
           -readonly            open the database read-only
           -safe                enable safe-mode
           -separator SEP       set output column separator. Default: '|'
           -stats               print memory stats before each finalize
           -table               set output mode to 'table'
           -tabs                set output mode to 'tabs'
           -version             show SQLite version
           -vfs NAME            use NAME as the default VFS
           -zip                 open the file as a ZIP Archive
        sqlive's own options:
           -c, --command TEXT   run TEXT (SQL or a dot-command), then exit; repeatable
           -f, --file FILE      run the script FILE, then exit
           --mode MODE          the initial output mode
           --demo               a demo database that another connection keeps writing
           --rpc, --lsp         serve JSON-RPC 2.0 and the Language Server Protocol on stdio
           --mcp                serve the Model Context Protocol (read-only unless --allow-writes)
           --http [HOST:]PORT   with --mcp: over HTTP, one process for many agents
           --web [[HOST:]PORT]  serve the live page in a browser (prints its URL and token)
           --token-file FILE    with --mcp --http or --web: the token, from a file
           --max-sessions N     with --mcp --http: the most MCP sessions at once (256)
           --session-idle SECONDS
                                with --mcp --http: an idle session ends after this (600)
           --http-timeout SECONDS
                                with --mcp --http or --web: a request unfinished this long
                                is closed (10)
           --allow-writes       with --mcp or --web: let the agent's or the page's statements write
           --time-limit SECONDS with --mcp: each call's time limit (10)
           --max-rows N         with --mcp: the most rows a call returns (1000)
           --max-bytes N        with --mcp: the most bytes of values a call returns
           --refresh-budget SECONDS
                                how long a live query's refresh may run before it is
                                stopped, "too slow to keep live" (30; 0: no limit)
           --sqlive-version     print sqlive's own version
        (-A, -append, -deserialize, -maxsize and -zip are refused with the reason;
        -lookaside, -memtrace, -mmap and -pagecache are accepted and change nothing.)

        """
    }
}
