import Foundation

/// Python's `sqlite3` module as a writer process, with its defaults: the
/// legacy transaction control (an implicit `BEGIN` before the insert,
/// `commit()` to end it) and a 5 s busy timeout.
///
/// After each `commit()` the script prints `id started returned`, times
/// from `time.monotonic_ns()`, which is `clock_gettime(CLOCK_MONOTONIC)` on
/// Linux (`time.get_clock_info("monotonic")` says so): the clock of
/// `Monotonic.now()`. After the last commit it keeps its connection open
/// until its standard input ends.
enum PythonWriter {
    static let script = """
        import sqlite3, sys, time
        path, count, interval = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
        connection = sqlite3.connect(path)
        for pragma in sys.argv[4:]:
            connection.execute("PRAGMA " + pragma).fetchall()
        for index in range(count):
            if index > 0:
                time.sleep(interval)
            started = time.monotonic_ns()
            cursor = connection.execute("INSERT INTO events DEFAULT VALUES")
            connection.commit()
            returned = time.monotonic_ns()
            print(cursor.lastrowid, started, returned, flush=True)
        sys.stdin.read()
        connection.close()
        """

    /// Runs the script to its end, calling `holdOpen` after the last commit; blocks.
    static func run(
        path: String, count: Int, interval: Duration, pragmas: [String],
        holdOpen: @Sendable ([WriterCommit]) -> Void
    ) throws -> [WriterCommit] {
        guard let python = ChildProcess.executable(named: "python3") else {
            throw BenchmarkCheckFailed(description: "python3 is not on PATH")
        }
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", script, path, "\(count)", "\(interval / .seconds(1))"] + pragmas
        return try ChildProcess.runWriter(process, count: count, holdOpen: holdOpen)
    }
}
