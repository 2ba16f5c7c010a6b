import Foundation
import SQLiveTestSupport
import Testing

/// `.output` and `.once` through the real binary.
@Suite("Output to files", .serialized, .timeLimit(.minutes(5)))
struct OutputRedirectionTests {
    func contents(_ path: String) throws -> String {
        try String(contentsOfFile: path, encoding: .utf8)
    }

    @Test(".output sends results and dot-commands' output to a file until .output alone; errors stay on stderr")
    func output() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("out.txt")
        try directory.write("out.txt", "old content that must go\n")
        let output = try await Processes.sqlive(
            [
                "-c", "CREATE TABLE t(a); INSERT INTO t VALUES (1), (2);", "-c", ".output \(file)", "-c",
                "SELECT a FROM t;", "-c", ".print printed", "-c", ".mode csv", "-c", "SELECT a, 'x' FROM t;", "-c",
                "SELECT nope;", "-c", ".tables", "-c", ".output", "-c", "SELECT 'back on stdout';", "-c",
                ".output stdout", "-c", "SELECT 'still';",
            ], directory: directory)
        #expect(try contents(file) == "1\n2\nprinted\n1,x\r\n2,x\r\nt\n")
        #expect(output.stdout == "\"back on stdout\"\r\nstill\r\n")
        #expect(
            output.stderr == "Parse error near line 7: no such column: nope\n  SELECT nope;\n         ^--- error here\n"
        )
        #expect(output.status == 1)
    }

    @Test(".once sends the next command's output only, SQL or dot-command")
    func once() async throws {
        let directory = try TemporaryDirectory()
        let first = directory.file("first.txt")
        let second = directory.file("second.txt")
        let output = try await Processes.sqlive(
            [
                "-c", ".once \(first)", "-c", "SELECT 1; SELECT 2;", "-c", "SELECT 3;", "-c", ".once \(second)",
                "-c", ".print dot", "-c", ".print after",
            ], directory: directory)
        #expect(try contents(first) == "1\n2\n")
        #expect(try contents(second) == "dot\n")
        #expect(output.stdout == "3\nafter\n")
        #expect(output.status == 0)
    }

    @Test(".once before .read sends the file's first command's output only, as in sqlite3")
    func onceAndRead() async throws {
        let directory = try TemporaryDirectory()
        let script = try directory.write("script.sql", "SELECT 'first';\nSELECT 'second';\n")
        let ours = try await Processes.sqlive(
            ["-c", ".once \(directory.file("ours.txt"))", "-c", ".read \(script)", "-c", "SELECT 'third';"],
            directory: directory)
        let theirs = try await Processes.sqlite3Shell(
            [":memory:", ".once \(directory.file("theirs.txt"))", ".read \(script)", "SELECT 'third';"],
            directory: directory)
        #expect(ours.stdout == "second\nthird\n")
        #expect(ours.stdout == theirs.stdout)
        #expect(try contents(directory.file("ours.txt")) == "first\n")
        #expect(try contents(directory.file("ours.txt")) == (try contents(directory.file("theirs.txt"))))
    }

    @Test("Live queries keep printing on the terminal while results go to a file")
    func liveQueriesStayOnTheTerminal() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("out.txt")
        let database = directory.file("db.sqlite")
        try await Processes.sqlite3(database, "CREATE TABLE t(a);")
        let output = try await Processes.sqlive(
            [database],
            stdin: """
                .output \(file)
                .watch n SELECT count(*) AS n FROM t
                INSERT INTO t VALUES (1);
                .wait n
                SELECT 'a result';
                .dump

                """, directory: directory)
        #expect(output.stdout == "-- n v1 (watching, reads t)\nn\n0\n-- n v2 (local, coalesced 1)\nn\n1\n")
        #expect(
            try contents(file)
                == "a result\nPRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\nCREATE TABLE t(a);\nINSERT INTO t VALUES(1);\nCOMMIT;\n"
        )
        #expect(output.stderr == "")
    }

    @Test("A file that cannot be written is an error, and results stay on standard output")
    func cannotWrite() async throws {
        let directory = try TemporaryDirectory()
        let output = try await Processes.sqlive(
            ["-c", ".output \(directory.file("missing/out.txt"))", "-c", "SELECT 1;"], directory: directory)
        #expect(output.stdout == "1\n")
        #expect(
            output.stderr
                == "Error: cannot write to \"\(directory.file("missing/out.txt"))\": No such file or directory\n"
        )
        #expect(output.status == 1)
    }

    @Test(
        ".output and .dump onto a full disk: exit 1, and the old file stays whole (written beside, synced, renamed)",
        // Mounting a small tmpfs takes root, as CI runs.
        .enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/mount")))
    func fullDisk() async throws {
        let directory = try TemporaryDirectory()
        let small = directory.file("small")
        try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: true)
        _ = try await runCommand("/usr/bin/env", ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", small])
        defer { _ = try? Launcher.runBlocking("/usr/bin/env", ["umount", "-l", small]) }
        let backup = small + "/backup.sql"
        try "-- last night's good backup\n".write(toFile: backup, atomically: false, encoding: .utf8)
        let database = directory.file("big.db")
        try await Processes.sqlite3(
            database,
            "CREATE TABLE t(x); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000) "
                + "INSERT INTO t SELECT printf('%0100d', i) FROM n;")
        let output = try await Processes.sqlive(
            [database, "-c", ".output \(backup)", "-c", ".dump"], directory: directory)
        #expect(output.status == 1)
        #expect(output.stderr.contains("No space left on device"), "\(output.stderr)")
        // The good backup is still there, whole; nothing half-written beside it.
        #expect(try contents(backup) == "-- last night's good backup\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: small) == ["backup.sql"])
        // A copy that fits is renamed into place.
        try await Processes.sqlite3(database, "DELETE FROM t WHERE rowid > 10;")
        let fits = try await Processes.sqlive(
            [database, "-c", ".output \(backup)", "-c", ".dump"], directory: directory)
        #expect(fits.status == 0)
        #expect(try contents(backup).hasSuffix("COMMIT;\n"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: small) == ["backup.sql"])
    }
}
