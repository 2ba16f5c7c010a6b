import Foundation
import SQLiveTestSupport
import Testing

/// An application's WAL database in a directory the user may only read:
/// sqlive opens it read-only, as the sqlite3 shell does, says so, and
/// watches it. The user is `nobody`, through `setpriv` (root can write
/// anywhere, so the test needs root to drop to another user).
@Suite("A database in a read-only directory", .timeLimit(.minutes(2)))
struct ReadOnlyDirectoryTests {
    @Test(
        "Opened read-only with a line saying so; a live query follows the application's commits",
        .enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")))
    func readOnlyDirectory() async throws {
        let directory = try TemporaryDirectory()
        let folder = directory.file("app")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let path = folder + "/app.sqlite"
        // The application: WAL mode, its connection open, its -wal emptied
        // by a checkpoint (sqlive met an empty -wal and tried to write one).
        let app = try PipedChild(
            "/usr/bin/env",
            [
                "python3", "-u", "-c",
                """
                import sqlite3, sys
                connection = sqlite3.connect(sys.argv[1], isolation_level=None)
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute("CREATE TABLE t(x)")
                connection.execute("INSERT INTO t VALUES (1)")
                connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                print("ready", flush=True)
                for line in sys.stdin:
                    connection.execute("INSERT INTO t VALUES (2)")
                    print("inserted", flush=True)
                """, path,
            ])
        _ = app.read()
        // Readable by everyone, writable by root only; the test's own
        // directory must be searchable by `nobody` too.
        for (item, mode) in [(directory.path, 0o755), (folder, 0o755), (path, 0o644)] {
            chmod(item, mode_t(mode))
        }
        for suffix in ["-wal", "-shm"] { chmod(path + suffix, 0o644) }
        let binary = directory.file("sqlive")
        try FileManager.default.copyItem(atPath: SQLiveBinary.path, toPath: binary)
        chmod(binary, 0o755)

        let output = directory.file("out")
        let errors = directory.file("err")
        let sqlive = try Launcher.start(
            "/usr/bin/setpriv",
            [
                "--reuid=65534", "--regid=65534", "--clear-groups", binary, path,
                "-c", ".watch rows SELECT count(*) AS n FROM t", "-c", ".wait rows --timeout 20",
            ],
            stdout: .file(output), stderr: .file(errors))
        // Once sqlive printed its first result, the application commits.
        let deadline = ContinuousClock.now + .seconds(20)
        while ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        app.write("insert\n")
        _ = app.read()
        let status = await sqlive.exit()
        app.closeInput()
        _ = await app.child.exit()
        let printed = try String(contentsOfFile: output, encoding: .utf8)
        let said = try String(contentsOfFile: errors, encoding: .utf8)
        #expect(status == 0, "stdout: \(printed) stderr: \(said)")
        #expect(said.contains("is opened read-only:"), "\(said)")
        #expect(printed.contains("rows v2"), "\(printed)")
        #expect(printed.contains("2"))
    }
}
