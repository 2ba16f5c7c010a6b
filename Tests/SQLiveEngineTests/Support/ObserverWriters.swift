import Foundation
import SQLiveTestSupport
import Testing

/// Writer processes for the observer-effect tests: each writes on its own
/// schedule with its program's default settings and prints, when its
/// input ends or its commits are done, one JSON line with what happened.
enum ObserverWriter {
    /// The sqlite3 CLI at its defaults (no busy timeout), fed one `INSERT`
    /// every `interval` ms by a Python driver that counts the CLI's
    /// "database is locked" errors (they go to its standard error).
    static let cli = #"""
        import json, subprocess, sys, time
        path, commits, interval = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) / 1000
        cli = subprocess.Popen(["sqlite3", path], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
        for pragma in sys.argv[4:]:
            cli.stdin.write(pragma + ";\n")
        for i in range(commits):
            cli.stdin.write(f"INSERT INTO items(grp, value, note) VALUES ({i % 50}, {i}, 'cli');\n")
            cli.stdin.flush()
            time.sleep(interval)
        cli.stdin.close()
        errors = cli.stderr.read()
        cli.wait()
        print(json.dumps({"commits": commits, "failed": errors.count("database is locked"), "errors": errors[:400]}))
        """#

    /// Python's `sqlite3` at its defaults (a 5 s busy timeout), one
    /// `INSERT` and `commit()` every `interval` ms.
    static let python = #"""
        import json, sqlite3, sys, time
        path, commits, interval = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) / 1000
        connection = sqlite3.connect(path)
        for pragma in sys.argv[4:]:
            connection.execute(pragma).fetchall()
        failed, errors = 0, ""
        for i in range(commits):
            try:
                connection.execute("INSERT INTO items(grp, value, note) VALUES (?, ?, 'python')", (i % 50, i))
                connection.commit()
            except sqlite3.OperationalError as error:
                failed += 1
                errors = str(error)
                connection.rollback()
            time.sleep(interval)
        print(json.dumps({"commits": commits, "failed": failed, "errors": errors}))
        """#

    /// Python's `sqlite3` moving amounts between rows of two tables, many
    /// pages each, in multi-page transactions that keep the total; every
    /// seventh transaction first breaks the total by a million, then rolls
    /// back. Those and a fifth of the others run with a tiny page cache
    /// (`cache_size=4`), so that they spill pages into the database file
    /// before they end (SQLite takes EXCLUSIVE then) — the hardest case for
    /// a reader without a lock, above all when the transaction then rolls
    /// back and the file's change counter is left as it was.
    static let transfers = #"""
        import json, random, sqlite3, sys, time
        path, commits, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
        random.seed(seed)
        connection = sqlite3.connect(path, isolation_level=None)
        for pragma in sys.argv[4:]:
            connection.execute(pragma).fetchall()
        rows = connection.execute("SELECT count(*) FROM a").fetchone()[0]
        done = rolled = 0
        while done < commits:
            breaks = (done + rolled) % 7 == 6
            # A fifth of the transactions, and every one that rolls back,
            # spill pages before they end; the others write at COMMIT only.
            spills = breaks or random.random() < 0.2
            connection.execute("PRAGMA cache_size=%d" % (4 if spills else -2000))
            connection.execute("BEGIN")
            for _ in range(random.randint(5, 40)):
                amount = random.randint(1, 100)
                source, target = random.choice("ab"), random.choice("ab")
                connection.execute(f"UPDATE {source} SET balance = balance - ?, note = hex(randomblob(20)) WHERE id = ?",
                                   (amount, random.randint(1, rows)))
                connection.execute(f"UPDATE {target} SET balance = balance + ? WHERE id = ?",
                                   (amount, random.randint(1, rows)))
            if random.random() < 0.05:
                # Many pages at once: a spill for sure.
                connection.execute("UPDATE a SET note = hex(randomblob(30)) WHERE id % 3 = ?", (random.randint(0, 2),))
            if breaks:
                connection.execute("UPDATE b SET balance = balance + 1000000 WHERE id = 1")
                connection.execute("ROLLBACK")
                rolled += 1
            else:
                connection.execute("COMMIT")
                done += 1
            # An application's pace, a few commits every few milliseconds
            # (a loop with no pause would starve any reader: SQLite's too).
            time.sleep(random.choice((0, 0, 0.001, 0.003)))
        print(json.dumps({"commits": done, "rolledBack": rolled}))
        """#

    /// Runs a writer script with `python3 -c` and returns its JSON summary.
    static func run(_ script: String, _ arguments: [String]) async throws -> [String: Any] {
        let outcome = try await Launcher.run("/usr/bin/env", ["python3", "-c", script] + arguments)
        guard outcome.status == 0,
            let line = outcome.stdout.split(separator: "\n").last,
            let summary = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        else {
            throw WriterFailed(description: "writer failed (\(outcome.status)): \(outcome.stdout) \(outcome.stderr)")
        }
        return summary
    }
}

/// Runs a blocking loop on a thread of its own, off Swift concurrency's
/// pool (which has only as many threads as cores), until it returns.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.start()
    }
}

struct WriterFailed: Error, CustomStringConvertible {
    var description: String
}

extension WriterJournal {
    /// The four journal modes the observer tests run in, each writer at
    /// its defaults (WAL with its default `synchronous`).
    static let observed: [WriterJournal] = [.delete, .truncate, .persist, .walFull]

    /// The statement the test's own setup runs first, creating the file in this mode.
    var creatingPragma: String { "PRAGMA journal_mode=\(fileMode.rawValue)" }
}
