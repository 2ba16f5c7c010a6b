import Foundation
import Testing

@testable import SQLiveREPL

@Suite("Reading CSV and TSV fields")
struct DelimitedTextReaderTests {
    /// Every field of the text, row by row, and the warnings, read with a
    /// chunk of `chunkSize` bytes (small ones cross every boundary).
    func read(_ text: String, separator: Character = ",", chunkSize: Int = 1 << 18) -> (
        rows: [[String]], warnings: [DelimitedTextReader.Warning]
    ) {
        var warnings: [DelimitedTextReader.Warning] = []
        var reader = DelimitedTextReader(
            bytes: Array(text.utf8), separator: separator.asciiValue!, chunkSize: chunkSize,
            warn: { warnings.append($0) })
        var rows: [[String]] = []
        var row: [String] = []
        while reader.readField() {
            row.append(String(decoding: reader.field, as: UTF8.self))
            if reader.terminator != .column {
                rows.append(row)
                row = []
            }
        }
        if !row.isEmpty { rows.append(row) }
        return (rows, warnings)
    }

    @Test(
        "RFC 4180: quotes, doubled quotes, separators and line breaks inside quotes, CRLF",
        arguments: [4, 5, 7, 1 << 18])
    func quoting(chunkSize: Int) {
        let text = "a,\"b,c\",\"say \"\"hi\"\"\"\r\n\"two\nlines\",,\"\"\r\nlast,row,\"end\""
        let (rows, warnings) = read(text, chunkSize: chunkSize)
        #expect(rows == [["a", "b,c", "say \"hi\""], ["two\nlines", "", ""], ["last", "row", "end"]])
        #expect(warnings.isEmpty)
    }

    @Test("A UTF-8 byte-order mark at the start is skipped, UTF-8 is kept", arguments: [4, 1 << 18])
    func byteOrderMark(chunkSize: Int) {
        #expect(read("\u{FEFF}ünï,✓\n", chunkSize: chunkSize).rows == [["ünï", "✓"]])
        #expect(read("\u{FEFF}\"q\",x\n", chunkSize: chunkSize).rows == [["q", "x"]])
        // Only at the start.
        #expect(read("a\n\u{FEFF}b\n", chunkSize: chunkSize).rows == [["a"], ["\u{FEFF}b"]])
    }

    @Test func tabs() {
        #expect(read("a\tb,c\t\"d\te\"\n", separator: "\t").rows == [["a", "b,c", "d\te"]])
    }

    @Test("Malformed quotes are read as sqlite3 reads them, with its warnings and lines")
    func malformedQuotes() {
        let (rows, warnings) = read("a,b\n\"x\"y,2\n\"open,3\n")
        #expect(rows == [["a", "b"], ["x\"y,2\n\"open,3\n"]])
        #expect(
            warnings == [
                .init(line: 2, message: "unescaped \" character"), .init(line: 3, message: "unescaped \" character"),
                .init(line: 2, message: "unterminated \"-quoted field"),
            ])
    }

    @Test func linesCountLineBreaksInsideQuotes() {
        var reader = DelimitedTextReader(bytes: Array("\"a\nb\",1\nc,2\n".utf8))
        #expect(reader.readField() && reader.line == 2)
        reader.readField()
        #expect(reader.line == 3 && reader.terminator == .row)
        #expect(reader.readField() && String(decoding: reader.field, as: UTF8.self) == "c")
        reader.readField()
        #expect(!reader.readField() && reader.terminator == .end)
    }
}

@Suite("Tables made by .import")
struct ImportedTableTests {
    @Test func columnsAreTextFourToALine() {
        let table = ImportedTable(header: ["a", "b", "c d", "e", "f"])
        #expect(table.renames.isEmpty)
        #expect(
            table.createStatement(quotedName: "\"t\"")
                == "CREATE TABLE \"t\"(\n\"a\" TEXT, \"b\" TEXT, \"c d\" TEXT, \"e\" TEXT,\n \"f\" TEXT)")
    }

    @Test("Repeated names (ignoring case) get their position, an empty name is ?")
    func duplicates() {
        let table = ImportedTable(header: ["a", "a", "", "b", "A", "q\"x"])
        #expect(table.columns == ["a_1", "a_2", "?", "b", "A_5", "q\"x"])
        #expect(
            table.renameMessage(file: "f.csv")
                == "Columns renamed during .import f.csv due to duplicates:\n\"a\" to \"a_1\",\n\"a\" to \"a_2\",\n\"A\" to \"A_5\"\n"
        )
        #expect(table.createStatement(quotedName: "x").hasSuffix("\"A_5\" TEXT, \"q\"\"x\" TEXT)"))
        // A suffix that collides with another name gets zeros until it does not.
        #expect(ImportedTable(header: ["x_1", "x", "x"]).columns == ["x_1", "x_2", "x_3"])
        #expect(ImportedTable(header: ["x", "x_1", "x"]).columns == ["x_01", "x_1", "x_03"])
    }
}

/// `.import` through the real binary, beside the sqlite3 shell's own.
@Suite("Importing files", .serialized, .timeLimit(.minutes(5)))
struct ImportTests {
    /// Files that need care, each imported by both shells into a new table.
    static let files: [(name: String, text: String)] = [
        // A byte-order mark, CRLF, quotes, a record over two lines, rows
        // too short and too long, empty fields, an empty quoted field.
        (
            "edges.csv",
            "\u{FEFF}a,b,\"c d\"\r\n1,\"x \"\"q\"\" y\",3\r\n2,\"multi\nline\",\r\n3\r\n4,5,6,7,8\r\n,,\r\n\"\",x,y\n"
        ),
        ("malformed.csv", "a,b\n\"x\"y,2\n\"unterminated,3\n4,5\n"),
        ("duplicates.csv", "a,a,,b,A\n1,2,3,4,5\n"),
        ("no-final-newline.csv", "a,b\n1,2\n\n3,4"),
        ("unicode.csv", "name,emoji\nünïcödé,✓\n\"日本\",\"a\u{301}\"\n"),
    ]

    @Test("A new table and its rows are sqlite3's, warnings and all", arguments: files.map(\.name))
    func newTableMatchesSQLite3(_ name: String) async throws {
        let directory = try TemporaryDirectory()
        let text = try #require(Self.files.first { $0.name == name }).text
        try directory.write(name, text)
        let ours = directory.file("ours.sqlite")
        let theirs = directory.file("theirs.sqlite")
        // Relative file names, as a user types them: the messages name them so.
        let command = ".import --csv \(name) t"
        let sqlive = try await Processes.sqlive(
            [ours, "-c", "\(command)"], directory: directory, cwd: directory.path)
        let sqlite3 = try await Processes.sqlite3Shell([theirs, command], directory: directory, cwd: directory.path)
        #expect(sqlive.status == sqlite3.status)
        #expect(sqlive.stderr == sqlite3.stderr)
        #expect(sqlive.stdout == sqlite3.stdout)
        let ourContents = try await DatabaseContents.read(ours, directory: directory)
        #expect(ourContents == (try await DatabaseContents.read(theirs, directory: directory)))
        #expect(ourContents.tables["t"]?.isEmpty == false)
    }

    @Test("In the default list mode, .import splits on |, as sqlite3 does; .separator and .mode ascii change it")
    func modeSeparators() async throws {
        let directory = try TemporaryDirectory()
        try directory.write("piped.txt", "c1|c2|c3\n1|\"a|b\"|3\n4|5|6\n")
        try directory.write("semi.txt", "x;y\n1;2\n")
        try directory.write("units.txt", "p\u{1F}q\u{1E}1\u{1F}\"2\"\u{1E}")
        let script = """
            .import piped.txt t
            .separator ;
            .import semi.txt s
            .mode ascii
            .import units.txt u
            .mode list
            .import "|printf 'k|v\\n1|2\\n'" w
            .separator ab
            .import piped.txt nope
            SELECT * FROM t; SELECT * FROM s; SELECT * FROM u; SELECT * FROM w;

            """
        let ours = try await Processes.sqlive(
            [directory.file("ours.sqlite")], stdin: script, directory: directory, cwd: directory.path)
        let theirs = try await Processes.sqlite3Shell(
            [directory.file("theirs.sqlite")], stdin: script, directory: directory, cwd: directory.path)
        #expect(ours.stdout == theirs.stdout)
        #expect(ours.stderr == theirs.stderr)
        #expect(ours.status == theirs.status)
        // Three columns, not one named `c1|c2|c3`.
        #expect(ours.stdout.hasPrefix("1aba|bab3\n4ab5ab6\n"))
    }

    @Test("Into an existing table every row is data; --skip skips rows; the separators of --csv, --tsv or the mode")
    func existingTable() async throws {
        let directory = try TemporaryDirectory()
        try directory.write("edges.csv", Self.files[0].text)
        try directory.write("rows.tsv", "x\ty\n1\t\"a\tb\"\n2\n")
        let ours = directory.file("ours.sqlite")
        let theirs = directory.file("theirs.sqlite")
        let create = "CREATE TABLE t(a, b, c); CREATE TABLE u(x INTEGER, y);"
        let sqlive = try await Processes.sqlive(
            [
                ours, "-c", create, "-c", ".import --csv edges.csv t", "-c", ".import --csv --skip 1 edges.csv t",
                "-c", ".import --tsv rows.tsv u", "-c", ".mode tabs", "-c", ".import rows.tsv u",
            ], directory: directory, cwd: directory.path)
        let sqlite3 = try await Processes.sqlite3Shell(
            [
                theirs, create, ".import --csv edges.csv t", ".import --csv --skip 1 edges.csv t", ".mode tabs",
                ".import rows.tsv u", ".import rows.tsv u",
            ], directory: directory, cwd: directory.path)
        #expect(sqlive.stderr == sqlite3.stderr)
        #expect(sqlive.status == 0)
        let contents = try await DatabaseContents.read(ours, directory: directory)
        #expect(contents == (try await DatabaseContents.read(theirs, directory: directory)))
        #expect(contents.tables["t"]?.count == 13)
        #expect(contents.tables["u"]?.contains("1,'a\tb'") == true, "a quoted tab is data; INTEGER affinity applies")
    }

    @Test("Rows SQLite refuses are reported by line, the others are imported, and the command fails")
    func refusedRows() async throws {
        let directory = try TemporaryDirectory()
        try directory.write("dups.csv", "1,a\n2,b\n1,c\n3,d\n2,e\n")
        let ours = directory.file("ours.sqlite")
        let theirs = directory.file("theirs.sqlite")
        let create = "CREATE TABLE t(id INTEGER PRIMARY KEY, name);"
        let sqlive = try await Processes.sqlive(
            [ours, "-c", create, "-c", ".import --csv dups.csv t", "-c", "SELECT count(*) FROM t;"],
            directory: directory,
            cwd: directory.path)
        let sqlite3 = try await Processes.sqlite3Shell(
            [theirs, create, ".import --csv dups.csv t"], directory: directory, cwd: directory.path)
        #expect(
            sqlite3.stderr
                == "dups.csv:3: INSERT failed: UNIQUE constraint failed: t.id\ndups.csv:5: INSERT failed: UNIQUE constraint failed: t.id\n"
        )
        #expect(
            sqlive.stderr
                == sqlite3.stderr + "Error: 2 rows of dups.csv could not be inserted into t\n")
        #expect(sqlive.stdout == "3\n")
        #expect(sqlive.status == 1)
        #expect(
            try await DatabaseContents.read(ours, directory: directory)
                == (try await DatabaseContents.read(theirs, directory: directory)))
    }

    @Test func errors() async throws {
        let directory = try TemporaryDirectory()
        try directory.write("empty.csv", "")
        try directory.write("one.csv", "a\n1\n")
        let output = try await Processes.sqlive(
            [
                "-c", ".import missing.csv t", "-c", ".import empty.csv t", "-c", ".import --schema nope one.csv t",
                "-c", ".tables",
            ], directory: directory, cwd: directory.path)
        #expect(
            output.stderr == """
                Error: cannot open "missing.csv"
                Error: empty.csv: empty file
                Error: unknown database "nope"

                """)
        #expect(output.stdout == "", "the table of an empty file is not created")
        #expect(output.status == 1)
    }

    /// A live query on the table, 1,000 rows imported, one more row
    /// inserted: exactly one re-print for the import (with every row), one
    /// for the insert.
    @Test("A live query re-prints once for a whole .import", arguments: [false, true])
    func liveQueryRePrintsOnce(insideTransaction: Bool) async throws {
        let directory = try TemporaryDirectory()
        let csv = (1...1000).map { "\($0),name \($0)" }.joined(separator: "\n") + "\n"
        try directory.write("rows.csv", csv)
        let database = directory.file("live.sqlite")
        try await Processes.sqlite3(
            database, "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE other(x);")
        let begin = insideTransaction ? "BEGIN;\n" : ""
        let commit = insideTransaction ? "COMMIT;\n" : ""
        let output = try await Processes.sqlive(
            [database],
            stdin: """
                .watch n SELECT count(*) AS n, max(id) AS last FROM t
                .watch o SELECT count(*) AS others FROM other
                \(begin).import --csv rows.csv t
                \(commit).wait n
                INSERT INTO t(name) VALUES ('one more');
                .wait n

                """, directory: directory, cwd: directory.path)
        #expect(output.stderr == "")
        #expect(
            Processes.quietCauses(output.stdout) == """
                -- n v1 (watching, reads t)
                n|last
                0|
                -- o v1 (watching, reads other)
                others
                0
                -- n v2 (local, coalesced 1)
                n|last
                1000|1000
                -- n v3 (local, coalesced 1)
                n|last
                1001|1001

                """)
        #expect(output.status == 0)
    }

    @Test("Inside a transaction the rows join it: ROLLBACK undoes the import, table and all")
    func rollback() async throws {
        let directory = try TemporaryDirectory()
        try directory.write("rows.csv", "a,b\n1,2\n3,4\n")
        let output = try await Processes.sqlive(
            [
                directory.file("db.sqlite"), "-c", "BEGIN;", "-c", ".import --csv rows.csv t", "-c",
                "SELECT count(*) FROM t;", "-c", "ROLLBACK;", "-c", ".tables",
            ], directory: directory, cwd: directory.path)
        #expect(output.stdout == "2\n")
        #expect(output.stderr == "")
    }

    @Test("Rows imported into a table with a trigger refresh the live queries the trigger writes to")
    func triggersAreSeen() async throws {
        let directory = try TemporaryDirectory()
        try directory.write("rows.csv", "1\n2\n3\n")
        let database = directory.file("db.sqlite")
        try await Processes.sqlite3(
            database,
            """
            CREATE TABLE t(x); CREATE TABLE log(n);
            CREATE TRIGGER t_log AFTER INSERT ON t BEGIN INSERT INTO log VALUES (new.x); END;
            """)
        let output = try await Processes.sqlive(
            [database], stdin: ".watch l SELECT count(*) AS logged FROM log\n.import --csv rows.csv t\n.wait l\n",
            directory: directory, cwd: directory.path)
        #expect(output.stdout.hasSuffix("-- l v2 (local, coalesced 1)\nlogged\n3\n"))
        #expect(output.status == 0)
    }
}
