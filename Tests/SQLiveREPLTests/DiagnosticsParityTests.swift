import Foundation
import SQLiveREPL
import SQLiveTestSupport
import Testing

/// `.stats`, `.log`, `.trace` in sqlite3's form, and safe mode (`-safe`,
/// `-nonce`, `.nonce`) give the installed sqlite3 3.40.1's bytes and exit
/// status on the same scripts (standard output and error each); where the
/// numbers are the process's own (memory, I/O), the statistics' labels,
/// order and layout.
@Suite("Diagnostics and safe mode, as sqlite3's", .timeLimit(.minutes(5)))
struct DiagnosticsParityTests {
    struct Case: CustomStringConvertible, Sendable {
        var arguments: [String]
        var stdin: String = ""
        var description: String { arguments.joined(separator: " ") + " < " + stdin.debugDescription }
    }

    static let cases: [Case] = [
        // Safe mode: the functions, ATTACH and the commands it refuses, at the line sqlite3 names, exit 1.
        Case(arguments: ["-safe", ":memory:"], stdin: "\n SELECT edit('DoNotCare');\n"),
        Case(arguments: ["-safe", ":memory:"], stdin: "\n SELECT writefile('DoNotCare', x'');\n"),
        Case(arguments: ["-safe", ":memory:"], stdin: "SELECT 1;\nSELECT 2,\n readfile('x');\nSELECT 3;\n"),
        Case(arguments: ["-safe", ":memory:"], stdin: "SELECT 1; SELECT edit(\n'x'); SELECT 2;\n"),
        Case(arguments: ["-safe", ":memory:"], stdin: "CREATE VIEW v AS SELECT load_extension('x');\n"),
        Case(arguments: ["-safe", ":memory:"], stdin: "SELECT 1;\nATTACH ':memory:' AS other;\n"),
        Case(arguments: ["-safe", ":memory:"], stdin: "SELECT 1;\n.open :memory:\nSELECT 2;\n.open DB\nSELECT 3;\n"),
        Case(arguments: ["-safe", ":memory:"], stdin: ".rea nothing.sql\n"),
        Case(arguments: ["-safe", ":memory:"], stdin: ".outp out.txt\n"),
        Case(arguments: ["-safe", ":memory:"], stdin: ".import a.csv t\n"),
        Case(arguments: ["-safe", ":memory:"], stdin: ".log stderr\n"),
        Case(arguments: ["-safe", ":memory:"], stdin: "SELECT 1;\n.sh echo hi\n"),
        Case(arguments: ["-safe", ":memory:"], stdin: ".system echo hi\n"),
        Case(arguments: ["-safe", ":memory:", "SELECT 1", "SELECT readfile('x')", "SELECT 3"]),
        // .shell and .system: flushed output first, words with a space quoted, a failing status said.
        Case(
            arguments: [":memory:"],
            stdin:
                "SELECT 1;\n.shell echo 'a  b' c\nSELECT 2;\n.system false\n.sh sh -c 'exit 3'\n.system\n.shell\nSELECT 3;\n"
        ),
        Case(arguments: ["-cmd", ".shell printf x", ":memory:", ".system printf y", "SELECT 4"]),
        Case(arguments: ["-safe", "-cmd", ".once x.txt", ":memory:", "SELECT 3"]),
        // .nonce lifts safe mode for the next command only; a wrong one ends the session.
        Case(
            arguments: ["-safe", "-nonce", "abc", ":memory:"],
            stdin: ".nonce abc\nSELECT edit('x');\nSELECT 7;\nSELECT readfile('x');\n"),
        Case(
            arguments: ["-safe", "-nonce", "abc", ":memory:"],
            stdin: "SELECT 1;\n.nonce abc\n.output x.txt\nSELECT 9;\n.output\n.output y.txt\n"),
        Case(
            arguments: ["-safe", "-nonce", "abc", ":memory:"],
            stdin: "SELECT 1;\n.nonce\n.nonce a b\n.nonce abd\nSELECT 2;\n"),
        Case(arguments: [":memory:"], stdin: ".nonce x\nSELECT 1;\n"),
        // .log: SQLite's error log, as `(CODE) MESSAGE` lines.
        Case(arguments: ["DB"], stdin: ".log stdout\nSELECT coalesce(sqlite_log(123,'hello'),'456');\n"),
        Case(
            arguments: [":memory:"],
            stdin: ".log stderr\nSELECT sqlite_log(1, 'a');\n.log off\nSELECT sqlite_log(2, 'b');\n.log\n.log a b\n"),
        // .trace, sqlite3's form; sqlive's `off` is the same.
        Case(arguments: [":memory:"], stdin: "CREATE TABLE t1(x);\n.trace --unknown\n"),
        Case(arguments: [":memory:"], stdin: ".trace stdout\nCREATE TABLE t1(x);SELECT * FROM t1;"),
        Case(
            arguments: [":memory:"],
            stdin: "CREATE TABLE t1(x);\n.trace stdout\nSELECT * FROM t1;\n.trace off\nSELECT 2;\n"),
        Case(
            arguments: [":memory:"],
            stdin: ".trace stdout --expanded --row\nCREATE TABLE t(x); INSERT INTO t VALUES(1),(2); SELECT * FROM t;\n"
                + ".headers on\n.trace stderr --plain --row --stmt\nSELECT x AS y FROM t;\n.trace\nSELECT 3;\n"),
        Case(arguments: [":memory:"], stdin: ".trace stdout --close\nSELECT 1;\n.open :memory:\nSELECT 2;\n"),
        Case(arguments: [":memory:"], stdin: ".trace /nonexistent/directory/trace.txt\nSELECT 1;\n"),
        // .stats: its usage, .show's line, and `vmstep` (SQLite's count of the same program).
        Case(arguments: ["DB"], stdin: ".stats OFF BAD\n"),
        Case(arguments: ["DB"], stdin: ".stats ON\n.show\n.stats stmt\n.show\n.stats 3\n.show\n.stats foo\n.show\n"),
        Case(arguments: ["-stats", "DB"], stdin: ".show\n"),
        Case(
            arguments: [":memory:"],
            stdin:
                ".stats vmstep\nCREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT);\nINSERT INTO t(b) VALUES ('x'),('y');\n"
                + "SELECT * FROM t ORDER BY b;\nSELECT count(*) FROM t WHERE b > 'a';\n.stats\n.stats off\nSELECT 2;\n"),
        // Double-quoted string literals, as sqlite3 3.40.1 takes them (a
        // word that names no column is a string), in DML and DDL; a dump
        // of a schema that uses them loads again.
        Case(
            arguments: ["DB"],
            stdin:
                "CREATE TABLE t(a, b DEFAULT \"none\");\nINSERT INTO t(a) VALUES (\"hello\");\n"
                + "INSERT INTO t VALUES (\"a\", \"x\");\nSELECT *, \"a\", \"nope\" FROM t;\n"
                + "CREATE VIEW v AS SELECT a FROM t WHERE b = \"none\";\nSELECT * FROM v;\n.dump\n"),
        // .tables and .indexes: every database's (temp's and attached ones'
        // as schema.name), SQLite's own left out, in sqlite3's columns.
        Case(
            arguments: [":memory:"],
            stdin: """
                CREATE TABLE alpha(x); CREATE TABLE beta(y); CREATE TABLE gamma_long_name(z); CREATE VIEW v AS SELECT 1;
                CREATE TEMP TABLE tmp1(a);
                ATTACH ':memory:' AS aux; CREATE TABLE aux.auxt(x);
                .tables
                .tables a%
                .tables aux.%
                CREATE INDEX ia ON alpha(x); CREATE INDEX ib_long_index_name ON beta(y); CREATE INDEX aux.ic ON auxt(x);
                .indexes
                .indexes b%
                CREATE TABLE aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa(x);
                CREATE VIRTUAL TABLE f USING fts5(x);
                .tables

                """),
        // .cd: its usage, a directory that is not, relative paths after it; refused in safe mode.
        Case(arguments: [":memory:"], stdin: ".cd /nonexistent\n.cd\n.cd a b\n.cd ..\n.shell pwd\nSELECT 1;\n"),
        Case(arguments: ["-safe", ":memory:"], stdin: "SELECT 1;\n.cd /tmp\nSELECT 2;\n"),
        // .binary (nothing to do on Linux) and .limits: listed, by a name's prefix, set, refused.
        Case(
            arguments: [":memory:"],
            stdin:
                ".binary on\n.binary off\n.binary\n.binary x\nSELECT 1;\n.limit\n.limit length 1000\n.limit length\n"
                + ".limit nosuch 5\n.limit l\n.limit a b c\n.limits COL\nSELECT length(zeroblob(2000));\n"),
        // .output |COMMAND and .once |COMMAND: results piped to a command, its output in order.
        Case(
            arguments: [":memory:"],
            stdin:
                ".output '|sort -r'\nSELECT 1 UNION SELECT 2 UNION SELECT 3;\n.output\nSELECT 9;\n.once |cat\n"
                + "SELECT 4;\nSELECT 5;\n.output |sort -r\nSELECT 7 UNION SELECT 8;\n.output stdout\nSELECT 6;\n"),
        // .fullschema: the schema without SQLite's tables, then ANALYZE's statistics as INSERTs.
        Case(
            arguments: [":memory:"],
            stdin:
                "CREATE TABLE t(a,b);\nCREATE INDEX ia ON t(a);\n.fullschema\nINSERT INTO t VALUES(1,2),(3,4);\n"
                + "CREATE TEMP TABLE tt(x);\nANALYZE;\n.fullschema\n.fullschema x\n"),
        // .databases lists temp once something used it, as sqlite3 does.
        Case(
            arguments: [":memory:"],
            stdin:
                ".databases\nCREATE TEMP TABLE tt(a);\n.databases\nDROP TABLE tt;\n.databases\n"
                + "ATTACH ':memory:' AS aux;\n.databases\n"),
        Case(arguments: [":memory:"], stdin: ".databases\n.open :memory:\n.databases\n"),
        // Parameters, as sqlite3 binds them: from `.parameter`'s table by
        // name, NULL when unbound; `.parameter` itself (its help, list,
        // set as an expression or as text, unset, clear, init).
        Case(
            arguments: ["DB"],
            stdin: """
                .parameter
                .param list
                SELECT ?1, :a, 2, $z, @q, ?;
                .parameter set :a 1+1
                .parameter set @b hello
                .parameter set ?1 x'00ff'
                .parameter set :n NULL
                .parameter set :x hello world
                .parameter set :w abc
                .parameter set :verylongparametername_that_is_long 3.5
                .parameter list
                SELECT :a, @b, hex(?1), typeof(:n), :w, :verylongparametername_that_is_long, :missing;
                CREATE TABLE t(x); INSERT INTO t VALUES (:a), (@b);
                SELECT * FROM t;
                .parameter unset :a
                .parameter unset :nothere
                .parameter list
                .tables
                .schema
                .parameter clear
                .parameter list
                SELECT :a;
                .parameter init
                .parameter list
                .parameter bogus

                """),
    ]

    @Test(arguments: cases)
    func sameBytesAndStatus(_ invocation: Case) async throws {
        let directory = try TemporaryDirectory()
        let (ours, theirs) = try await Self.run(invocation, in: directory)
        #expect(ours.stdout == theirs.stdout)
        #expect(ours.stderr == theirs.stderr)
        #expect(ours.status == theirs.status)
    }

    /// Exit statuses, as sqlite3's (their outputs differ: an interactive
    /// session's banner names sqlive): SQL given on the command line that
    /// fails exits with SQLite's result code, an init file's errors leave
    /// the status alone, an interactive session that saw an error exits 1.
    @Test func exitStatuses() async throws {
        let directory = try TemporaryDirectory()
        let cases: [Case] = [
            Case(arguments: ["DB", "CREATE TABLE t(x PRIMARY KEY); INSERT INTO t VALUES(1),(1)"]),
            Case(arguments: ["DB", "SELECT 1", "SELECT nosuch", "SELECT 3"]),
            Case(arguments: ["DB", ".bogus"]),
            Case(arguments: ["-init", "bad.sql", ":memory:", "SELECT 1"]),
            Case(arguments: ["-init", "bad.sql", ":memory:"], stdin: "SELECT 2;\n"),
            Case(arguments: ["-bail", "-init", "bad.sql", ":memory:"], stdin: "SELECT 2;\n"),
            Case(arguments: ["-interactive", ":memory:"], stdin: "SELECT nosuch;\nSELECT 1;\n"),
            Case(arguments: ["-interactive", ":memory:"], stdin: "SELECT 1;\n"),
        ]
        for (index, invocation) in cases.enumerated() {
            let run = try TemporaryDirectory()
            for side in ["ours", "theirs"] {
                try FileManager.default.createDirectory(atPath: run.file(side), withIntermediateDirectories: true)
                try "SELECT nosuch;\n".write(toFile: run.file(side) + "/bad.sql", atomically: true, encoding: .utf8)
            }
            let (ours, theirs) = try await Self.run(invocation, in: run)
            #expect(ours.status == theirs.status, "case \(index): \(invocation)")
        }
        _ = directory
    }

    /// A database file is created when a command needs it, as sqlite3
    /// opens it: a session that only changes settings, or reads nothing,
    /// leaves no file behind.
    @Test func aFileOnlyWhenUsed() async throws {
        let directory = try TemporaryDirectory()
        for (index, (stdin, arguments, created)) in [
            ("", [String](), false), (".mode csv\n.headers on\n", [], false), (".quit\n", [], false),
            ("", ["SELECT 1"], true), (".tables\n", [], true), ("CREATE TABLE t(x);\n", [], true),
        ].enumerated() {
            for shell in ["ours", "theirs"] {
                let path = directory.file("\(shell)-\(index).db")
                let output =
                    shell == "ours"
                    ? try await Processes.sqlive([path] + arguments, stdin: stdin, directory: directory)
                    : try await Processes.sqlite3Shell([path] + arguments, stdin: stdin, directory: directory)
                #expect(output.status == 0)
                #expect(FileManager.default.fileExists(atPath: path) == created, "\(shell): \(stdin) \(arguments)")
            }
        }
    }

    /// With a live query registered the session's statements run through
    /// GRDB, not SQLite's C API: parameters are bound from `.parameter`'s
    /// table the same (sqlite3 has no `.watch` to compare with).
    @Test func parametersBoundBesideALiveQuery() async throws {
        let directory = try TemporaryDirectory()
        let output = try await Processes.sqlive(
            ["test.db"],
            stdin: """
                CREATE TABLE t(x);
                .watch w SELECT count(*) FROM t
                .parameter set :v 41+1
                INSERT INTO t VALUES (:v), (:none), (?);
                SELECT x, typeof(x) FROM t;

                """, directory: directory, cwd: directory.file("."))
        #expect(output.stdout.contains("42|integer\n|null\n|null\n"), "\(output.stdout)")
        #expect(output.stderr == "", "\(output.stderr)")
        #expect(output.status == 0)
    }

    /// Runs both shells in directories of their own (files they write do not meet).
    static func run(_ invocation: Case, in directory: TemporaryDirectory) async throws -> (
        ProcessOutput, ProcessOutput
    ) {
        let ourDirectory = directory.file("ours")
        let theirDirectory = directory.file("theirs")
        for path in [ourDirectory, theirDirectory] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        let ours = try await Processes.sqlive(
            invocation.arguments.map { $0 == "DB" ? "test.db" : $0 }, stdin: invocation.stdin, directory: directory,
            cwd: ourDirectory)
        let theirs = try await Processes.sqlite3Shell(
            invocation.arguments.map { $0 == "DB" ? "test.db" : $0 }, stdin: invocation.stdin, directory: directory,
            cwd: theirDirectory)
        return (ours, theirs)
    }

    /// The labels of a statistics block: each line's first 37 characters
    /// (the label padded to 36, and a space), whole for the lines of `stmt`
    /// that describe columns (their values are the same in both).
    static func labels(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix("Column ") || line.hasPrefix("Number of output columns")
                ? String(line) : String(line.prefix(37))
        }
    }

    @Test func statisticsBlocksHaveSqlite3sLabelsOrderAndLayout() async throws {
        let directory = try TemporaryDirectory()
        let script = """
            CREATE TABLE t(a INT, b);
            INSERT INTO t VALUES (1, 2);
            .stats on
            SELECT a, b AS bee, 1 FROM t;
            .stats stmt
            .mode box
            SELECT a, b AS bee, 1 FROM t;
            .stats
            SELECT abs(-9223372036854775808);

            """
        let (ours, theirs) = try await Self.run(Case(arguments: [":memory:"], stdin: script), in: directory)
        #expect(Self.labels(ours.stdout) == Self.labels(theirs.stdout))
        #expect(ours.stdout.contains("Memory Used:                         "))
        // A columnar result is drawn before its statistics.
        #expect(ours.stdout.contains("└───┴─────┴───┘\nNumber of output columns:            3\n"))
        #expect(ours.stderr == theirs.stderr)
        #expect(ours.status == theirs.status)
        // After each statement, the failing one too; not for `.stats` alone.
        let autoindex = ours.stdout.components(separatedBy: "Autoindex Inserts:").count - 1
        #expect(autoindex == 3)
    }

    /// SQLite counts its memory only when sqlive starts with -stats; the
    /// lines say what SQLite reports.
    @Test func memoryLinesAreSQLitesOwnCounters() async throws {
        let directory = try TemporaryDirectory()
        let without = try await Processes.sqlive([":memory:"], stdin: ".stats on\nSELECT 1;\n", directory: directory)
        #expect(without.stdout.contains("Memory Used:                         0 (max 0) bytes\n"))
        let with = try await Processes.sqlive(["-stats", ":memory:"], stdin: "SELECT 1;\n", directory: directory)
        let line = with.stdout.split(separator: "\n").first { $0.hasPrefix("Memory Used:") }
        let used = line.flatMap { Int($0.dropFirst(37).prefix { $0.isNumber }) }
        #expect((used ?? 0) > 0)
    }

    @Test func traceToAFileAndErrorLogToAFile() async throws {
        let directory = try TemporaryDirectory()
        let script =
            ".trace trace.txt\nSELECT 1;\n.trace off\nSELECT 2;\n.log log.txt\nSELECT sqlite_log(7, 'seven');\n"
        _ = try await Self.run(Case(arguments: [":memory:"], stdin: script), in: directory)
        for name in ["trace.txt", "log.txt"] {
            let ours = try String(contentsOfFile: directory.file("ours/" + name), encoding: .utf8)
            let theirs = try String(contentsOfFile: directory.file("theirs/" + name), encoding: .utf8)
            #expect(ours == theirs, "\(name)")
            #expect(!ours.isEmpty)
        }
    }

    @Test func sqliveTraceWordsKeepTheirMeaning() throws {
        #expect(try DotCommand.parse(".trace on") == .trace(.on))
        #expect(try DotCommand.parse(".trace PROFILE") == .trace(.profile))
        #expect(try DotCommand.parse(".trace off") == .trace(.off))
        #expect(try DotCommand.parse(".trace stdout") == .shellTrace(.init(file: "stdout")))
        #expect(
            try DotCommand.parse(".trace --row -expanded t.txt")
                == .shellTrace(.init(file: "t.txt", events: [.row], expanded: true)))
        #expect(throws: DotCommand.ParseError.self) { try DotCommand.parse(".trace --nope") }
        #expect(try DotCommand.parse(".stats stmt") == .stats(2))
        #expect(try DotCommand.parse(".stats") == .stats(nil))
        #expect(try DotCommand.parse(".stats 258") == .stats(2))
    }
}
