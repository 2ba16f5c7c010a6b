import Foundation
import SQLiveREPL
import SQLiveTestSupport
import Testing

/// sqlive's command line is the sqlite3 shell's: the same arguments give
/// the same bytes on standard output and standard error, and the same exit
/// status, as the installed `sqlite3` (3.40.1), the program's name aside.
@Suite("The command line, as sqlite3's", .timeLimit(.minutes(5)))
struct CommandLineParityTests {
    /// One invocation: arguments (`DB` stands for the database's path) and
    /// standard input.
    struct Case: CustomStringConvertible, Sendable {
        var arguments: [String]
        var stdin: String = ""
        var description: String { arguments.joined(separator: " ") + (stdin.isEmpty ? "" : " < script") }
    }

    static let script = "CREATE TABLE IF NOT EXISTS t(a, b);\nINSERT INTO t VALUES (1, NULL);\nSELECT * FROM t;\n"

    static let cases: [Case] = [
        // The options that read as bundles of short flags before (help and exit 0).
        Case(arguments: ["-header", "DB"], stdin: script),
        Case(arguments: ["-noheader", "DB"], stdin: script),
        Case(arguments: ["-batch", "DB"], stdin: script),
        Case(arguments: ["--header", "DB"], stdin: script),
        Case(arguments: ["DB", "-header"], stdin: script),
        Case(arguments: ["-csv", "-header", "DB"], stdin: script),
        Case(arguments: ["-line", "DB"], stdin: script),
        Case(arguments: ["-bail", "DB"], stdin: "SELECT 1;\nSELECT nope;\nSELECT 2;\n"),
        Case(arguments: ["-nullvalue", "NIL", "DB"], stdin: script),
        Case(arguments: ["-separator", ";", "DB"], stdin: script),
        // SQL and dot-commands after the database, instead of standard input.
        Case(arguments: ["DB", "SELECT 3", "SELECT 4"], stdin: "SELECT 'never read';\n"),
        Case(arguments: ["DB", "CREATE TABLE u(x);", ".tables"]),
        Case(arguments: ["DB", "FOO", "SELECT 5"]),
        Case(arguments: ["DB", "SELECT nope FROM sqlite_master"]),
        Case(arguments: ["DB", ".quit", "SELECT 6"]),
        Case(arguments: ["DB", ".nosuch", "SELECT 7"]),
        // -cmd runs before the input, in order with the settings.
        Case(arguments: ["-cmd", ".headers on", "-cmd", "SELECT 8 AS x", "DB"], stdin: "SELECT 9 AS y;\n"),
        Case(arguments: ["-cmd", "SELECT nope", "DB"], stdin: "SELECT 10;\n"),
        Case(arguments: ["-bail", "-cmd", "SELECT nope", "DB"], stdin: "SELECT 11;\n"),
        // Errors of the command line itself.
        Case(arguments: ["-bad", "DB"]),
        Case(arguments: ["DB", "-bad"]),
        Case(arguments: ["-separator"]),
        Case(arguments: ["DB", "-nullvalue"]),
        // Scripts' errors, in sqlite3's words.
        Case(
            arguments: ["DB"],
            stdin: "SELECT 1;\n\nSELECT *\n  FROM nowhere;\nSELECT nope, 2;\nINSERT INTO t VALUES (1, 2)\n;\n"),
        Case(
            arguments: ["DB"],
            stdin: "CREATE TABLE c(x UNIQUE);\nINSERT INTO c VALUES (1);\nINSERT INTO c VALUES (1);\n"),
        Case(
            arguments: ["DB"],
            stdin: "SELECT 1; SELECT a_rather_long_column_name, another_long_column_name, yet_another_name FROM t;\n"),
        Case(arguments: ["DB"], stdin: "\n SELECT 'unclosed;\n"),
        // A migration that opens with a comment over several lines loses nothing.
        Case(
            arguments: ["DB"],
            stdin:
                "/* A migration,\n   over several lines */\nCREATE TABLE m(x);\nINSERT INTO m VALUES (1); -- one\nSELECT * FROM m;\n"
        ),
        // Dot-commands start in the first column; `#` lines are comments.
        Case(arguments: ["DB"], stdin: "# a comment\n  .print indented\nSELECT 12;\n"),
        Case(
            arguments: ["DB"],
            stdin: ".echo on\nSELECT 13;\n\n.headers on\nSELECT 14 AS n; SELECT 15;\n.echo off\nSELECT 16;\n"),
        Case(arguments: ["DB"], stdin: ".bail on\nSELECT nope;\nSELECT 17;\n"),
        Case(
            arguments: ["DB"],
            stdin: ".bail\n.echo\n.prompt a b c\n.timeout 10\n.foo\n.\"foo OFF\"\n.print \"a\\tb\" 'c\\td'\n"),
        Case(arguments: ["DB"], stdin: ".restore\n.backup\n.backup a b c\n.backup nosuch x.db\n.read\n.indexes a b\n"),
        // Foreign keys are not enforced unless the script turns them on, as in sqlite3.
        Case(
            arguments: ["DB"],
            stdin: """
                CREATE TABLE parent(id INTEGER PRIMARY KEY);
                CREATE TABLE child(id INTEGER PRIMARY KEY, parent REFERENCES parent(id));
                INSERT INTO child VALUES (1, 42);
                PRAGMA foreign_keys;
                PRAGMA foreign_keys=ON;
                INSERT INTO child VALUES (2, 43);
                SELECT count(*) FROM child;

                """),
        // .schema as sqlite3 prints it: creation order, views' columns, every database, patterns.
        Case(
            arguments: ["DB"],
            stdin: """
                CREATE TABLE players(id INTEGER PRIMARY KEY AUTOINCREMENT, gameID INTEGER, score INTEGER);
                CREATE TABLE games(id INTEGER PRIMARY KEY, title TEXT);
                CREATE INDEX by_game ON players(gameID);
                CREATE VIEW "best scores" AS SELECT gameID, max(score) AS "top score" FROM players GROUP BY 1;
                CREATE TRIGGER no_negative BEFORE INSERT ON players WHEN NEW.score < 0 BEGIN SELECT RAISE(ABORT, 'no'); END;
                INSERT INTO players(gameID, score) VALUES (1, 2);
                CREATE TEMP TABLE scratch(x); -- a comment at the end
                ATTACH ':memory:' AS other;
                CREATE TABLE other.t(x);
                .schema
                .schema PLAY%
                .schema --nosys
                .schema other.%
                .schema ga*
                .schema json_e%
                .schema sqlite_master

                """),
    ]

    @Test(arguments: cases)
    func sameBytesAndStatus(_ invocation: Case) async throws {
        let directory = try TemporaryDirectory()
        let ours = try await Processes.sqlive(
            invocation.arguments.map { $0 == "DB" ? directory.file("ours.db") : $0 }, stdin: invocation.stdin,
            directory: directory)
        let theirs = try await Processes.sqlite3Shell(
            invocation.arguments.map { $0 == "DB" ? directory.file("theirs.db") : $0 }, stdin: invocation.stdin,
            directory: directory)
        #expect(ours.stdout == theirs.stdout)
        let program = "\(Processes.sqlive): "
        let ourErrors = ours.stderr.replacingOccurrences(of: program, with: "sqlite3: ")
            .replacingOccurrences(of: directory.file("ours.db"), with: "DB")
        let theirErrors = theirs.stderr.replacingOccurrences(of: "/usr/bin/sqlite3: ", with: "sqlite3: ")
            .replacingOccurrences(of: directory.file("theirs.db"), with: "DB")
        #expect(ourErrors == theirErrors)
        #expect(ours.status == theirs.status)
    }

    @Test func versionAndHelp() async throws {
        let directory = try TemporaryDirectory()
        let version = try await Processes.sqlive(["-version"], directory: directory)
        let theirs = try await Processes.sqlite3Shell(["-version"], directory: directory)
        #expect(version.stdout == theirs.stdout)
        #expect(version.status == 0)
        let help = try await Processes.sqlive(["-help"], directory: directory)
        #expect(help.status == 1)
        #expect(help.stdout.isEmpty)
        #expect(help.stderr.contains("Usage: \(Processes.sqlive) [OPTIONS] FILENAME [SQL]"))
        #expect(help.stderr.contains("   -init FILENAME       read/process named file"))
        #expect(help.stderr.contains("--mcp"))
        let own = try await Processes.sqlive(["--sqlive-version"], directory: directory)
        #expect(own.stdout == "0.1.0\n")
    }

    @Test func initFileRunsFirstThenTheOptionsThenTheInput() async throws {
        let directory = try TemporaryDirectory()
        try directory.write("init.sql", ".mode csv\nCREATE TABLE i(x);\nINSERT INTO i VALUES ('from init');\n")
        for (index, arguments) in [
            ["-init", directory.file("init.sql"), "-header"], ["-header", "-init", directory.file("init.sql")],
        ].enumerated() {
            let ours = try await Processes.sqlive(
                arguments + [directory.file("ours\(index).db")], stdin: "SELECT x FROM i;\n", directory: directory)
            let theirs = try await Processes.sqlite3Shell(
                arguments + [directory.file("theirs\(index).db")], stdin: "SELECT x FROM i;\n", directory: directory)
            // The init file's mode (csv) and the option's headers, either way round.
            #expect(ours.stdout == theirs.stdout)
            #expect(ours.stdout.hasPrefix("x\r\n"))
            #expect(ours.status == theirs.status)
        }
        let missing = try await Processes.sqlive(
            ["-init", directory.file("none.sql"), ":memory:"], directory: directory)
        #expect(missing.stderr == "cannot open: \"\(directory.file("none.sql"))\"\n")
    }

    @Test func parsing() throws {
        let line = try ShellCommandLine.parse(["-header", "db.sqlite", "--csv", "SELECT 1", ".tables"])
        #expect(line.database == "db.sqlite")
        #expect(line.steps == [.headers(true), .mode("csv")])
        #expect(line.trailing == ["SELECT 1", ".tables"])
        #expect(try ShellCommandLine.parse(["--rpc", "db"]).frontEnd == .rpc)
        #expect(try ShellCommandLine.parse(["--mode=csv"]).mode == "csv")
        #expect(try ShellCommandLine.parse(["-c", "SELECT 1", "-f", "x.sql"]).commands == ["SELECT 1"])
        #expect(throws: ShellCommandLine.Failure(message: "unknown option: -h", suggestsHelp: true)) {
            try ShellCommandLine.parse(["-h"])
        }
        #expect(throws: ShellCommandLine.Failure(message: "missing argument to -cmd", suggestsHelp: false)) {
            try ShellCommandLine.parse(["-cmd"])
        }
        #expect(throws: ShellCommandLine.Failure.self) { try ShellCommandLine.parse(["-zip", "x"]) }
    }
}
