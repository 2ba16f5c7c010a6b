import Foundation
import SQLiveTestSupport
import Testing

/// Every output setting of the sqlite3 3.40.1 shell, through both shells:
/// the same script on the same rows must give the same bytes on standard
/// output.
@Suite("Output modes and settings match the sqlite3 shell", .timeLimit(.minutes(5)))
struct OutputModeParityTests {
    /// Values that need care in every mode: separators, quotes, HTML and
    /// SQL specials, line breaks, CR, tabs, empty text, non-ASCII text,
    /// large and small numbers, a BLOB with a NUL byte, NULL, and a text
    /// long enough to wrap.
    static let rows = """
        CREATE TABLE t(a, b);
        INSERT INTO t VALUES ('plain', 1), ('a,b', -7), ('say "hi"', 9223372036854775807),
          ('line' || char(10) || 'break', 1.5), ('', 1e20), ('ünïcödé ✓', 0.1), ('x|y', -2.5e-7),
          ('cr' || char(13), NULL), ('tab' || char(9) || 'x', x'41c3a90042'), (NULL, 'it''s <b>&</b>'),
          ('a very long text that goes on and on and on well past sixty characters in all, to wrap', 3.0),
          ('crlf' || char(13) || char(10) || 'end', 1e-300), ('x' || char(1) || 'y', 'wide 漢字 text');

        """

    /// Runs `script` through sqlite3 and sqlive on copies of the same
    /// database; returns both outputs.
    func both(_ script: String, arguments: [String] = []) async throws -> (ours: ProcessOutput, theirs: ProcessOutput) {
        let directory = try TemporaryDirectory()
        // One file, read by both: `.show` names it.
        let database = directory.file("db.sqlite")
        try await Processes.sqlite3(database, Self.rows)
        let mine = try await Processes.sqlive(arguments + [database], stdin: script, directory: directory)
        let shell = try await Processes.sqlite3Shell(arguments + [database], stdin: script, directory: directory)
        return (mine, shell)
    }

    static let modes = [
        "ascii", "box", "column", "csv", "html", "insert", "insert other", "insert \"my table\"", "json", "line",
        "list", "markdown", "qbox", "quote", "table", "tabs", "tcl", "count", "off",
    ]

    @Test("Each mode, with headers off and on, and .mode alone after it", arguments: modes)
    func mode(_ mode: String) async throws {
        let script = """
            .mode \(mode)
            SELECT * FROM t;
            SELECT a AS "the a", b FROM t WHERE 0;
            .headers on
            SELECT * FROM t;
            SELECT 1 AS one, NULL AS "n u l l";
            .mode
            SELECT * FROM t LIMIT 3;

            """
        let (ours, theirs) = try await both(script)
        #expect(ours.stdout == theirs.stdout)
        #expect(ours.status == 0)
        #expect(!ours.stdout.isEmpty || mode == "off")
    }

    @Test(
        "The columnar modes' options: --wrap, --wordwrap, --ww, --quote, --noquote, qbox",
        arguments: ["column", "table", "markdown", "box"])
    func columnarOptions(_ mode: String) async throws {
        let script = """
            .mode \(mode) --wrap 10
            SELECT * FROM t;
            .mode \(mode) --wrap 12 --wordwrap on
            SELECT * FROM t;
            .mode --ww --wrap 7 \(mode)
            SELECT * FROM t;
            .mode \(mode) --quote --wrap 0
            SELECT * FROM t;
            .mode
            .mode qbox --noquote
            .mode
            .mode \(mode) --wordwrap off --noquote
            .show

            """
        let (ours, theirs) = try await both(script)
        #expect(ours.stdout == theirs.stdout)
        #expect(ours.stdout.contains("current output mode: \(mode) --wrap 0 --wordwrap off --quote\n"))
        #expect(ours.stdout.contains("current output mode: box --wrap 60 --wordwrap off --noquote\n"))
    }

    @Test(".width: minimum widths, negative ones right-aligned, wider values wrapped; .show grows it")
    func widths() async throws {
        let script = """
            .width 5 -12
            .mode column
            SELECT * FROM t;
            .mode table
            SELECT a, b, 'third' AS c FROM t;
            .width -3 0 7
            .mode box
            SELECT * FROM t;
            .mode markdown
            SELECT * FROM t;
            .show
            .width
            .mode box
            SELECT 1, 2, 3, 4;
            .show

            """
        let (ours, theirs) = try await both(script)
        #expect(ours.stdout == theirs.stdout)
        #expect(ours.stdout.contains("       width: 0 0 0 0 \n"))
    }

    @Test(".separator with escapes, single quotes, ROW; modes that set or keep the separators")
    func separators() async throws {
        let script = """
            .separator , ;
            SELECT a, b FROM t LIMIT 3;
            .separator "\\t" "\\r\\n"
            SELECT a, b FROM t LIMIT 3;
            .separator '\\t' '\\n'
            SELECT a, b FROM t LIMIT 3;
            .separator \\037 \\036\\n
            SELECT a, b FROM t LIMIT 3;
            .mode csv
            .separator ;
            SELECT a, b FROM t;
            .mode quote
            .separator " | " "\\n--\\n"
            SELECT a, b FROM t;
            .mode tcl
            .separator :
            SELECT a, b FROM t;
            .mode ascii
            SELECT a, b FROM t LIMIT 2;
            .mode line
            SELECT a, b FROM t LIMIT 2;
            .mode tabs
            SELECT a, b FROM t LIMIT 2;
            .mode list
            SELECT a, b FROM t LIMIT 2;
            .separator 1234567890123456789012345
            SELECT 1, 2;
            .show
            .separator a b c

            """
        let (ours, theirs) = try await both(script)
        #expect(ours.stdout == theirs.stdout)
        #expect(ours.stdout.contains("plain;1\r\n"))
        #expect(ours.status == 1)
    }

    @Test(".nullvalue in every mode that shows it, and the empty default")
    func nullValue() async throws {
        var script = "SELECT NULL, 1;\n.nullvalue 'N/A <x>'\n"
        for mode in ["list", "csv", "html", "tcl", "line", "ascii", "column", "box", "insert", "quote", "json"] {
            script += ".mode \(mode)\nSELECT * FROM t WHERE a IS NULL OR b IS NULL;\n"
        }
        script += ".nullvalue \"\\tnull\\n\"\n.mode list\nSELECT NULL;\n.show\n"
        let (ours, theirs) = try await both(script)
        #expect(ours.stdout == theirs.stdout)
        #expect(ours.stdout.hasPrefix("|1\n"))
    }

    @Test(".headers, .print and .show: booleans, escapes, the exact layout")
    func showAndPrint() async throws {
        let script = """
            .show
            .headers yes
            .print hello "wor\\tld" 'a\\tb' \\x41 "\\101\\102" "\\"quoted\\""
            .print
            .headers 2
            SELECT 1 AS a;
            .headers maybe
            SELECT 1 AS a;
            .mode column
            .headers off
            .mode column
            SELECT 1 AS a;
            .mode insert
            .show

            """
        let (ours, theirs) = try await both(script)
        #expect(ours.stdout == theirs.stdout)
        #expect(ours.stdout.contains("hello wor\tld a\\tb x41 AB \"quoted\"\n\n"))
        #expect(ours.stderr.contains("ERROR: Not a boolean value: \"maybe\". Assuming \"no\".\n"))
    }

    @Test(".mode's names: prefixes in sqlite3's order, errors, and what .mode alone resets")
    func modeNames() async throws {
        let script = """
            .mode
            .mode c
            .mode
            .mode t
            .mode
            .mode ta
            .mode
            .mode tabl
            .mode
            .mode q
            .mode
            .mode lines
            .mode
            .mode tabs
            .mode
            SELECT 1, 2;
            .mode csv
            .separator ;
            .mode
            SELECT 1, 2;
            .mode fancy
            .mode box extra more
            .mode box x --bogus
            .mode

            """
        let (ours, theirs) = try await both(script)
        #expect(ours.stdout == theirs.stdout)
        #expect(ours.stdout.hasPrefix("current output mode: list\ncurrent output mode: column --wrap 60"))
        #expect(ours.stdout.contains("1|2\n"))
        #expect(ours.stderr.contains("mode should be one of: ascii box column csv html insert json line list markdown"))
        #expect(ours.stderr.contains("extra argument: \"more\""))
        #expect(ours.stderr.contains("unknown option: --bogus"))
        #expect(ours.status == 1)
    }

    @Test(".explain on, off and auto: the explain layout, loops indented, EXPLAIN QUERY PLAN")
    func explain() async throws {
        let script = """
            EXPLAIN SELECT a, count(*) FROM t GROUP BY a ORDER BY 2;
            EXPLAIN SELECT * FROM t WHERE a IN (SELECT b FROM t WHERE b > 1);
            .explain on
            SELECT 1 AS a, 'two' AS b;
            .mode
            .explain off
            EXPLAIN SELECT 1;
            EXPLAIN QUERY PLAN SELECT * FROM t;
            .explain
            .show
            .explain auto
            .mode box
            EXPLAIN SELECT 1;
            .show

            """
        let (ours, theirs) = try await both(script)
        #expect(ours.stdout == theirs.stdout)
        #expect(ours.stdout.contains("addr  opcode         p1    p2    p3    p4             p5  comment      \n"))
        #expect(ours.stdout.contains("     explain: on\n"))
    }
}
