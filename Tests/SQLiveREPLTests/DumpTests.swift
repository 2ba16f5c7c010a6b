import Foundation
import SQLiveEngine
import Testing

@testable import SQLiveREPL

@Suite("SQL text of .dump")
struct DumpTextTests {
    func literal(_ text: String) -> String {
        var output = OutputBuffer()
        var text = text
        text.withUTF8 { DumpText.appendTextLiteral($0, to: &output) }
        return output.string
    }

    @Test func textLiterals() {
        #expect(literal("plain") == "'plain'")
        #expect(literal("it's") == "'it''s'")
        #expect(literal("") == "''")
        #expect(literal("a\nb") == "replace('a\\nb','\\n',char(10))")
        #expect(literal("a\r\nb") == "replace(replace('a\\r\\nb','\\r',char(13)),'\\n',char(10))")
        // The text holds the marker itself: the next one, then numbered ones.
        #expect(literal("\\n\n") == "replace('\\n\\012','\\012',char(10))")
        #expect(literal("\\n\\012\n") == "replace('\\n\\012(\\n0)','(\\n0)',char(10))")
    }

    @Test func schemaLines() {
        #expect(DumpText.schemaLine("CREATE TABLE t(a)") == "CREATE TABLE t(a);\n")
        #expect(DumpText.schemaLine("CREATE TABLE \"t\"(a)") == "CREATE TABLE IF NOT EXISTS \"t\"(a);\n")
        #expect(DumpText.schemaLine("CREATE TABLE 'x_data'(a)") == "CREATE TABLE IF NOT EXISTS 'x_data'(a);\n")
        // A comment at the end cannot swallow the semicolon.
        #expect(DumpText.schemaLine("CREATE TABLE t(a) -- why") == "CREATE TABLE t(a) -- why\n;\n")
        #expect(DumpText.schemaLine("CREATE TABLE t(a) /* why") == "CREATE TABLE t(a) /* why*/;\n")
        #expect(DumpText.statementLine("CREATE VIEW v AS SELECT 1 -- one") == "CREATE VIEW v AS SELECT 1 -- one\n;\n")
    }
}

/// `.dump` through the real binary, loaded back by the real sqlite3 CLI.
@Suite("Dumping databases", .serialized, .timeLimit(.minutes(5)))
struct DumpTests {
    /// Every kind of object and value a dump must carry.
    static let schemaAndRows = #"""
        CREATE TABLE games(id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL UNIQUE);
        CREATE TABLE players(id INTEGER PRIMARY KEY, gameID INTEGER REFERENCES games(id), name TEXT, score REAL,
          avatar BLOB);
        CREATE INDEX players_gameID ON players(gameID);
        CREATE UNIQUE INDEX "players by name" ON players(name, gameID) WHERE name IS NOT NULL;
        CREATE TABLE kv(k TEXT PRIMARY KEY, v) WITHOUT ROWID;
        CREATE TABLE "we ird ""name"""(a, "b c" -- a comment
        );
        CREATE TABLE "order"(x);
        CREATE VIEW leaderboard AS SELECT g.title, count(p.id) AS n FROM games g LEFT JOIN players p
          ON p.gameID = g.id GROUP BY g.id;
        CREATE TRIGGER games_touch AFTER INSERT ON games BEGIN
          INSERT INTO kv VALUES ('last', new.title) ON CONFLICT(k) DO UPDATE SET v = excluded.v;
        END;
        CREATE VIRTUAL TABLE notes USING fts5(title, body);
        INSERT INTO games(title) VALUES ('Gin'), ('Poker'), ('it''s "quoted"');
        DELETE FROM games WHERE title = 'Poker';
        INSERT INTO players VALUES (1, 1, 'Blob', 0.1, x'00ff10'),
          (2, 1, 'line' || char(10) || 'break' || char(13) || char(10) || 'x\n', 1e300, NULL),
          (3, 3, NULL, 3.0, x''), (4, 3, 'ünïcödé ✓', -2.5e-7, zeroblob(3)),
          (5, NULL, '', 123456789012345678, 'text in a blob column'), (6, 1, 'big', 9007199254740993, NULL),
          (7, 1, 'inf', 1e999, NULL), (8, 1, 'minus inf', -1e999, NULL), (9, 1, 'real 1e20', 1e20, NULL),
          (10, 1, 'third', 1.0 / 3, -9223372036854775808);
        INSERT INTO kv VALUES ('b', 2), ('a', 1.5), ('c', x'cafe');
        INSERT INTO "we ird ""name""" VALUES (1, 'one'), (NULL, NULL);
        INSERT INTO "order" VALUES ('a--b');
        INSERT INTO notes VALUES ('hello', 'world'), ('it''s', 'two' || char(10) || 'lines');
        ANALYZE;
        """#

    /// REALs that the sqlite3 shell's `%!.20g` does not bring back: SQLite
    /// 3.40 reads its text as a neighbour (found among random doubles).
    static let tinyReals = """
        CREATE TABLE tiny(x REAL, y);
        INSERT INTO tiny VALUES (4.9406564584124654e-324, -0.0), (-8.30684765175859250729e-305, NULL),
          (3.32780325018360465254e-307, NULL), (-1.98762139504330328969e-290, NULL), (2.2250738585072014e-308, NULL);
        """

    /// A database made by the sqlite3 CLI, and its contents.
    func database(_ sql: String, in directory: TemporaryDirectory) async throws -> (String, DatabaseContents) {
        let path = directory.file("original.sqlite")
        try await Processes.sqlite3(path, sql)
        return (path, try await DatabaseContents.read(path, directory: directory))
    }

    /// Loads SQL text into a new database with the sqlite3 CLI.
    func load(_ sql: String, as name: String, in directory: TemporaryDirectory) async throws -> (
        String, ProcessOutput
    ) {
        let path = directory.file(name)
        let output = try await Processes.sqlite3Shell([path], stdin: sql, directory: directory)
        return (path, output)
    }

    @Test("sqlive's dump, loaded by sqlite3, is the same database; sqlite3's own loses the tiny REALs")
    func roundTrip() async throws {
        let directory = try TemporaryDirectory()
        let (original, contents) = try await database(Self.schemaAndRows + Self.tinyReals, in: directory)
        #expect(contents.tables["notes"]?.count == 2)
        #expect(contents.tables["sqlite_stat1"]?.isEmpty == false)

        let ours = try await Processes.sqlive([original, "-c", ".dump"], directory: directory)
        #expect(ours.status == 0)
        #expect(ours.stderr == "")
        let (ourCopy, ourLoad) = try await load(ours.stdout, as: "ours.sqlite", in: directory)
        #expect(ourLoad.stderr == "")
        #expect(ourLoad.status == 0)
        let ourContents = try await DatabaseContents.read(ourCopy, directory: directory)
        #expect(ourContents.schema == contents.schema)
        #expect(ourContents.differences(from: contents) == [])

        let theirs = try await Processes.sqlite3Shell([original, ".dump"], directory: directory)
        let (theirCopy, theirLoad) = try await load(theirs.stdout, as: "theirs.sqlite", in: directory)
        #expect(theirLoad.stderr == "")
        let theirContents = try await DatabaseContents.read(theirCopy, directory: directory)
        #expect(theirContents.schema == contents.schema)
        #expect(theirContents.differences(from: contents) == ["tiny"])
    }

    @Test("Without REALs SQLite cannot read back, the text is sqlite3's, byte for byte")
    func textMatchesSQLite3() async throws {
        let directory = try TemporaryDirectory()
        let (original, _) = try await database(Self.schemaAndRows, in: directory)
        for arguments in [[".dump"], [".dump players"], [".dump p% order"], [".dump 'we%'"], [".dump nothing"]] {
            let ours = try await Processes.sqlive([original, "-c"] + arguments, directory: directory)
            let theirs = try await Processes.sqlite3Shell([original] + arguments, directory: directory)
            #expect(ours.stdout == theirs.stdout, "\(arguments)")
            #expect(ours.stdout.hasSuffix("COMMIT;\n"))
        }
        let empty = try await Processes.sqlive(["-c", ".dump"], directory: directory)
        #expect(empty.stdout == "PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\nCOMMIT;\n")
    }

    @Test("sqlive loads its own dump back into the same database")
    func loadsItsOwnDump() async throws {
        let directory = try TemporaryDirectory()
        let (original, contents) = try await database(Self.schemaAndRows + Self.tinyReals, in: directory)
        let dump = try await Processes.sqlive([original, "-c", ".dump"], directory: directory)
        let script = try directory.write("dump.sql", dump.stdout)
        let copy = directory.file("copy.sqlite")
        let load = try await Processes.sqlive([copy, "-f", script], directory: directory)
        #expect(load.stderr == "")
        #expect(load.status == 0)
        #expect(try await DatabaseContents.read(copy, directory: directory) == contents)
    }

    @Test("A dump inside a transaction shows its rows; .trace does not show the dump's own queries")
    func insideATransaction() async throws {
        let directory = try TemporaryDirectory()
        let output = try await Processes.sqlive(
            [
                "-c", ".trace on", "-c", "CREATE TABLE t(a); BEGIN; INSERT INTO t VALUES (1);", "-c", ".dump",
                "-c", "ROLLBACK;",
            ], directory: directory)
        #expect(
            output.stdout == """
                -- trace: CREATE TABLE t(a)
                -- trace: BEGIN
                -- trace: INSERT INTO t VALUES (1)
                PRAGMA foreign_keys=OFF;
                BEGIN TRANSACTION;
                CREATE TABLE t(a);
                INSERT INTO t VALUES(1);
                COMMIT;
                -- trace: ROLLBACK

                """)
    }
}
