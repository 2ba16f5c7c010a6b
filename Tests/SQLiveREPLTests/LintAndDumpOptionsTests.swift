import Foundation
import Testing

/// `.lint fkey-indexes` and `.dump`'s options, compared byte for byte with
/// the real `sqlite3` 3.40.1 on the same database.
@Suite("sqlite3's .lint and .dump options", .timeLimit(.minutes(5)))
struct LintAndDumpOptionsTests {
    /// Runs one command on a copy of the database under each shell: both
    /// streams and the exit status.
    func compare(_ schema: String, _ command: String) async throws -> (ProcessOutput, ProcessOutput) {
        let directory = try TemporaryDirectory()
        let database = directory.file("t.sqlite")
        try await Processes.sqlite3(database, schema)
        let ours = try await Processes.sqlive([database, "-c", command], directory: directory)
        let theirs = try await Processes.sqlite3Shell([database, command], directory: directory)
        return (ours, theirs)
    }

    /// The schemas of SQLite's shell6.test, and keys to a missing table, to
    /// several parents, an index that serves and one that does not.
    static let schemas = [
        "CREATE TABLE p1(a PRIMARY KEY, b); CREATE TABLE c1(x, y REFERENCES p1);",
        "CREATE TABLE p1(a PRIMARY KEY, b); CREATE TABLE c2(x REFERENCES p1, y REFERENCES p1);",
        "CREATE TABLE 'p 1'(a, b, c, PRIMARY KEY(c, b)); CREATE TABLE 'c 1'(x, y, z, FOREIGN KEY (z, y) REFERENCES 'p 1');",
        """
        CREATE TABLE p1(a, 'b b b' PRIMARY KEY); CREATE TABLE c1('x y z' REFERENCES p1);
        CREATE INDEX i1 ON c1('x y z') WHERE "x y z" IS NOT NULL;
        """,
        """
        CREATE TABLE p1(a, 'b b b' PRIMARY KEY); CREATE TABLE c1('x y z' REFERENCES p1);
        CREATE INDEX i1 ON c1('x y z') WHERE "x y z" IS NOT 12;
        """,
        """
        CREATE TABLE x1(a, b, c, UNIQUE(a, b)); CREATE TABLE y1(a, b, c, FOREIGN KEY(b, a) REFERENCES x1(a, b));
        CREATE INDEX y1i ON y1(a, c, b);
        """,
        "CREATE TABLE x1(a COLLATE nocase, b, UNIQUE(a)); CREATE TABLE y1(a COLLATE rtrim REFERENCES x1(a));",
        "CREATE TABLE x1(a PRIMARY KEY COLLATE nocase, b); CREATE TABLE y1(a REFERENCES x1);",
        """
        CREATE TABLE x1(a, b COLLATE nocase, c COLLATE rtrim, PRIMARY KEY(c, b, a));
        CREATE TABLE y1(d, e, f, FOREIGN KEY(d, e, f) REFERENCES x1);
        """,
        "CREATE TABLE p1(a, b UNIQUE); CREATE TABLE c1(x INTEGER PRIMARY KEY REFERENCES p1(b));",
        """
        CREATE TABLE parent (id INTEGER PRIMARY KEY);
        CREATE TABLE child2 (id INT PRIMARY KEY, parentID INT REFERENCES parent) WITHOUT ROWID;
        """,
        """
        CREATE TABLE p1(a PRIMARY KEY, b); CREATE TABLE c1(x, y REFERENCES p1);
        CREATE TABLE c2(x REFERENCES p1, y REFERENCES c1(x)); CREATE TABLE c3(q REFERENCES p1);
        CREATE INDEX c3q ON c3(q); CREATE TABLE c4(z REFERENCES nosuch); CREATE TABLE "A"(k REFERENCES "B"(k));
        CREATE TABLE b(k PRIMARY KEY); CREATE TABLE a2(k REFERENCES B);
        """,
    ]

    @Test(
        "Every switch of .lint fkey-indexes on every schema",
        arguments: [
            ".lint fkey-indexes", ".lint fkey-indexes -verbose", ".lint fkey-indexes -groupbyparent",
            ".lint FKEY -g -V",
        ])
    func lint(command: String) async throws {
        var reported = 0
        for schema in Self.schemas {
            let (ours, theirs) = try await compare(schema, command)
            #expect(ours.stdout == theirs.stdout, "\(schema)")
            #expect(ours.stderr == theirs.stderr && ours.status == theirs.status, "\(schema)")
            reported += theirs.stdout.isEmpty ? 0 : 1
        }
        #expect(reported >= 8)
    }

    @Test("The indexes .lint proposes make it quiet")
    func lintedIndexesServe() async throws {
        let directory = try TemporaryDirectory()
        let database = directory.file("t.sqlite")
        try await Processes.sqlite3(database, Self.schemas[11])
        let before = try await Processes.sqlive([database, "-c", ".lint fkey-indexes"], directory: directory)
        #expect(before.stdout.split(separator: "\n").count == 6)
        let statements = before.stdout.split(separator: "\n").map { $0.components(separatedBy: " --> ")[0] }
        let created = try await Processes.sqlive(
            [database, "-c", statements.joined(separator: "\n")], directory: directory)
        #expect(created.status == 0)
        let after = try await Processes.sqlive([database, "-c", ".lint fkey-indexes"], directory: directory)
        #expect(after.stdout == "" && after.stderr == "")
        let verbose = try await Processes.sqlive([database, "-c", ".lint fkey-indexes -v"], directory: directory)
        let theirs = try await Processes.sqlite3Shell([database, ".lint fkey-indexes -v"], directory: directory)
        #expect(verbose.stdout == theirs.stdout && verbose.stdout.contains("c4(z) -> (null)"))
    }

    @Test(
        "Usage texts of .lint go to standard error, and the command does not fail",
        arguments: [".lint", ".lint x", ".lint fk -x", ".lint fkey-indexes -", ".lint fkey-indexes -verbosity"])
    func lintUsage(command: String) async throws {
        let (ours, theirs) = try await compare(Self.schemas[0], command)
        #expect(!theirs.stderr.isEmpty)
        #expect(ours.stdout == theirs.stdout && ours.stderr == theirs.stderr && ours.status == theirs.status)
    }

    /// Rowid tables with gaps, an INTEGER PRIMARY KEY (the rowid), one
    /// with DESC (not the rowid), WITHOUT ROWID, columns that take the
    /// rowid's names, AUTOINCREMENT, statistics, a virtual table and its
    /// shadow tables, text with line breaks and quotes.
    static let dumpSchema = """
        CREATE TABLE t1(x INTEGER PRIMARY KEY, y); CREATE TABLE [table](x INTEGER PRIMARY KEY DESC, y);
        CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID; CREATE TABLE r(rowid, _rowid_, oid);
        CREATE TABLE r2(Rowid, a); CREATE TABLE plain(a,b); CREATE TABLE s(id INTEGER PRIMARY KEY AUTOINCREMENT, t);
        CREATE TABLE "we ird"("x y", "select");
        INSERT INTO t1 VALUES(5,'a'),(9,'b'); INSERT INTO [table] VALUES(3,'x'),(1,'y'); INSERT INTO w VALUES('k','v');
        INSERT INTO r VALUES(1,2,3); INSERT INTO r2(rowid, Rowid, a) VALUES(4, 7, 8);
        INSERT INTO plain(rowid,a,b) VALUES(10,'line1'||char(10)||'it''s',NULL),(20,2.5,x'00ff'),(-3,'cr'||char(13),1e300);
        INSERT INTO s(t) VALUES('q'); INSERT INTO "we ird"(rowid, "x y", "select") VALUES (42, 1, 2);
        CREATE INDEX pa ON plain(a); ANALYZE;
        CREATE VIRTUAL TABLE ft USING fts5(a); INSERT INTO ft VALUES('hello');
        CREATE VIEW v AS SELECT * FROM plain;
        """

    @Test(
        ".dump with options is sqlite3's text, byte for byte",
        arguments: [
            ".dump --preserve-rowids", ".dump --newlines", ".dump --data-only", ".dump --nosys",
            ".dump -preserve-rowids --data-only --nosys --newlines", ".dump --data-only pl%",
            ".dump --preserve-rowids t% r% w%", ".dump --nosys --preserve-rowids sqlite%", ".dump --data-only ft",
        ])
    func dump(command: String) async throws {
        let (ours, theirs) = try await compare(Self.dumpSchema, command)
        #expect(!theirs.stdout.isEmpty)
        #expect(ours.stdout == theirs.stdout)
        #expect(ours.stderr == theirs.stderr && ours.status == theirs.status)
    }

    @Test("An unknown .dump option is refused as sqlite3 refuses it", arguments: [".dump --bogus", ".dump - t"])
    func dumpUnknownOption(command: String) async throws {
        let (ours, theirs) = try await compare(Self.dumpSchema, command)
        #expect(ours.stdout == theirs.stdout)
        #expect(ours.stderr.hasSuffix(theirs.stderr) && !theirs.stderr.isEmpty)
        #expect(ours.status == theirs.status)
    }

    @Test("A dump with --preserve-rowids loads back with every rowid")
    func rowidsComeBack() async throws {
        let directory = try TemporaryDirectory()
        let original = directory.file("original.sqlite")
        let copy = directory.file("copy.sqlite")
        try await Processes.sqlite3(original, Self.dumpSchema)
        let dump = try await Processes.sqlive([original, "-c", ".dump --preserve-rowids"], directory: directory)
        #expect(dump.status == 0)
        let load = try await Processes.sqlite3Shell([copy], stdin: dump.stdout, directory: directory)
        #expect(load.status == 0 && load.stderr.isEmpty)
        let query = """
            SELECT rowid, quote(x), quote(y) FROM "table"; SELECT rowid, * FROM t1; SELECT _rowid_, quote(a), quote(b)
            FROM plain; SELECT rowid, * FROM s; SELECT rowid, * FROM "we ird"; SELECT _rowid_, * FROM r2;
            """
        let before = try await Processes.sqlite3Output(original, query)
        #expect(before.contains("-3|'cr"))
        #expect(try await Processes.sqlite3Output(copy, query) == before)
    }
}
