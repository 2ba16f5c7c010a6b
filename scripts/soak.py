#!/usr/bin/env python3
"""A soak of the live page's server (issue #56): CPU per commit and memory growth.

    scripts/soak.py [--sqlive PATH] [--minutes 10] [--rate 200] [--queries 50] [--clients 3]

Starts the real `sqlive --web` (read-only, loopback) on a temporary WAL
database; connects CLIENTS page clients over its WebSocket (as the page
opens it: token, Origin, `initialize`), which register QUERIES distinct live
queries between them (`liveQuery/register`, split round-robin) and read
every notification; then a writer process (Python's sqlite3 at its
defaults: a 5 s busy timeout, implicit transactions, one `commit()` each)
commits RATE times a second for MINUTES: each commit inserts an event,
updates a counter and deletes the oldest event past a window of 10,000 (the
data stays the same size, so the server's memory has no reason to grow).

Every 10 s it samples sqlive's CPU (utime + stime, /proc/PID/stat) and the
writer's, sqlive's resident memory, threads and descriptors, and the
notifications the clients read; it prints a row per sample, then the CPU
per commit of both (and their ratio), sqlive's memory growth per minute
(the least-squares slope after the first minute, and last minus first),
the worst 10 s window, and the writer's failed commits. `--json PATH`
writes every sample. Exit status 1 if the server dies, the writer fails a
commit, or a client stops being served; the figures themselves are not
judged (docs/benchmarks.md, "Issue #56: soak", holds them).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "HostileClients"))
import loopback  # noqa: E402

WINDOW = 10_000  # events kept
KEYS = 50


def writer_main(database: str, rate: float, seconds: float) -> int:
    """The writer process: RATE commits a second, paced by the clock; its
    commit count on stdout each second, and failures on stderr."""
    connection = sqlite3.connect(database)  # defaults: timeout 5 s, implicit transactions
    cursor = connection.cursor()
    committed = failed = 0
    start = time.monotonic()
    next_report = start + 1
    random.seed(56)
    last_id = cursor.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()[0]
    total = int(rate * seconds)
    for n in range(total):
        due = start + n / rate
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
        key = random.randrange(KEYS)
        value = random.random()
        try:
            cursor.execute("INSERT INTO events(k, v, note) VALUES (?, ?, ?)", (key, value, f"event {n}"))
            last_id = cursor.lastrowid
            cursor.execute("UPDATE counters SET n = n + 1, total = total + ? WHERE k = ?", (value, key))
            cursor.execute("DELETE FROM events WHERE id <= ?", (last_id - WINDOW,))
            connection.commit()
            committed += 1
        except sqlite3.Error as error:
            failed += 1
            print(f"writer: commit {n} failed: {error}", file=sys.stderr, flush=True)
            try:
                connection.rollback()
            except sqlite3.Error:
                pass
        if time.monotonic() >= next_report:
            print(f"{committed} {failed}", flush=True)
            next_report += 1
    print(f"{committed} {failed}", flush=True)
    connection.close()
    return 0 if failed == 0 else 1


def queries(count: int) -> list[str]:
    """COUNT distinct live queries over the two tables, of five kinds."""
    made = []
    for i in range(count):
        kind = i % 5
        if kind == 0:
            made.append(f"SELECT count(*), sum(v) FROM events WHERE k = {i % KEYS}")
        elif kind == 1:
            made.append(f"SELECT k, n, total FROM counters WHERE k BETWEEN {i % KEYS} AND {i % KEYS + 4} ORDER BY k")
        elif kind == 2:
            made.append(f"SELECT id, k, v FROM events ORDER BY id DESC LIMIT {10 + i}")
        elif kind == 3:
            made.append(
                f"SELECT k, count(*) AS c FROM events WHERE k % 7 = {i % 7} GROUP BY k ORDER BY c DESC, k LIMIT 10"
            )
        else:
            made.append(f"SELECT max(id), min(id), count(*) FROM events WHERE v > {i / count:.3f}")
    return made


class Reader(threading.Thread):
    """A page client that reads every message and counts the updates."""

    def __init__(self, socket_: loopback.WebSocket):
        super().__init__(daemon=True)
        self.socket = socket_
        self.updates = 0
        self.errors = 0
        self.failure = ""
        self.stopping = False

    def run(self) -> None:
        try:
            while not self.stopping:
                try:
                    message = self.socket.receive(timeout=1)
                except TimeoutError:
                    continue
                except OSError as error:  # socket.timeout is an OSError too
                    if "timed out" in str(error):
                        continue
                    raise
                method = message.get("method")
                if method == "liveQuery/changed":
                    self.updates += 1
                elif method == "liveQuery/error":
                    self.errors += 1
        except Exception as error:  # noqa: BLE001 - reported, not raised
            if not self.stopping:
                self.failure = f"{type(error).__name__}: {error}"


def slope(points: list[tuple[float, float]]) -> float:
    """The least-squares slope of (x, y) points (0 for fewer than two)."""
    if len(points) < 2:
        return 0.0
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    num = sum((x - mean_x) * (y - mean_y) for x, y in points)
    den = sum((x - mean_x) ** 2 for x, _ in points)
    return num / den if den else 0.0


def default_binary() -> str:
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    for build in ("release", "debug"):
        path = os.path.join(here, ".build", build, "sqlive")
        if os.access(path, os.X_OK):
            return path
    return "sqlive"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sqlive", default=default_binary(), help="the binary (default: .build/release, else debug)")
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--rate", type=float, default=200, help="commits a second")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--clients", type=int, default=3)
    parser.add_argument("--interval", type=float, default=10, help="seconds between samples")
    parser.add_argument("--json", help="write every sample to this file")
    parser.add_argument("--writer", help=argparse.SUPPRESS)
    parser.add_argument("--seconds", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(124))
    if args.writer:
        return writer_main(args.writer, args.rate, args.seconds)

    directory = tempfile.mkdtemp(prefix="sqlive-soak-")
    database = os.path.join(directory, "soak.sqlite")
    setup = sqlite3.connect(database)
    setup.executescript(
        f"""
        PRAGMA journal_mode = WAL;
        CREATE TABLE events(id INTEGER PRIMARY KEY, k INTEGER NOT NULL, v REAL NOT NULL, note TEXT);
        CREATE INDEX events_k ON events(k);
        CREATE TABLE counters(k INTEGER PRIMARY KEY, n INTEGER NOT NULL, total REAL NOT NULL);
        WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < {KEYS - 1})
        INSERT INTO counters SELECT i, 0, 0 FROM c;
        WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < {WINDOW})
        INSERT INTO events(k, v, note) SELECT abs(random()) % {KEYS}, abs(random() % 1000) / 1000.0, 'seed' FROM c;
        """
    )
    setup.close()

    version = subprocess.run([args.sqlive, "--sqlive-version"], capture_output=True, text=True).stdout.strip()
    print(f"soak: {args.sqlive} ({version}), {args.minutes:g} min, {args.rate:g} commits/s, "
          f"{args.queries} live queries, {args.clients} page clients; {os.cpu_count()} cores")
    server = loopback.start_web(args.sqlive, database)
    readers: list[Reader] = []
    writer = None
    failures: list[str] = []
    samples: list[dict] = []
    try:
        clients = [loopback.WebSocket.page(server.port, server.token, timeout=60) for _ in range(args.clients)]
        for i, sql in enumerate(queries(args.queries)):
            answer = clients[i % args.clients].request("liveQuery/register", {"name": f"q{i}", "sql": sql})
            if "error" in answer:
                raise RuntimeError(f"q{i} ({sql}) was refused: {answer['error']}")
        for client in clients:
            readers.append(Reader(client))
            readers[-1].start()

        seconds = args.minutes * 60
        writer = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--writer", database, "--rate", str(args.rate),
             "--seconds", str(seconds)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        progress = {"committed": 0, "failed": 0}
        writer_errors: list[str] = []

        def follow_writer():
            for line in writer.stdout:
                committed, failed = line.split()
                progress["committed"], progress["failed"] = int(committed), int(failed)

        def follow_errors():
            for line in writer.stderr:
                writer_errors.append(line.rstrip())

        threading.Thread(target=follow_writer, daemon=True).start()
        threading.Thread(target=follow_errors, daemon=True).start()

        start = time.monotonic()
        base_server = loopback.sample(server.pid)
        base_writer_cpu = 0.0
        header = (f"{'t (s)':>6} {'commits':>8} {'sqlive cpu s':>12} {'writer cpu s':>12} {'ms/commit sqlive':>16} "
                  f"{'ms/commit writer':>16} {'RSS MiB':>8} {'threads':>7} {'fds':>5} {'updates':>8}")
        print(header)
        previous = {"t": 0.0, "commits": 0, "server_cpu": base_server["cpu_s"], "writer_cpu": 0.0}

        def take(t: float) -> dict:
            now = loopback.sample(server.pid)
            try:
                writer_cpu = loopback.cpu_seconds(writer.pid)
            except (FileNotFoundError, ProcessLookupError):
                writer_cpu = samples[-1]["writer_cpu"] if samples else 0.0
            row = {
                "t": t,
                "commits": progress["committed"],
                "server_cpu": now["cpu_s"],
                "writer_cpu": writer_cpu,
                "rss_mib": now["rss_mib"],
                "threads": now["threads"],
                "fds": now["fds"],
                "updates": sum(reader.updates for reader in readers),
            }
            commits = row["commits"] - previous["commits"]
            per = lambda key: 1000 * (row[key] - previous[key]) / commits if commits else float("nan")  # noqa: E731
            row["window_server_ms"] = per("server_cpu")
            row["window_writer_ms"] = per("writer_cpu")
            print(f"{t:6.0f} {row['commits']:8d} {row['server_cpu'] - base_server['cpu_s']:12.2f} "
                  f"{row['writer_cpu'] - base_writer_cpu:12.2f} {row['window_server_ms']:16.3f} "
                  f"{row['window_writer_ms']:16.3f} {row['rss_mib']:8.1f} {row['threads']:7d} {row['fds']:5d} "
                  f"{row['updates']:8d}", flush=True)
            previous.update({k: row[k] for k in ("t", "commits", "server_cpu", "writer_cpu")})
            return row

        next_sample = start + args.interval
        while writer.poll() is None:
            time.sleep(max(0.0, min(1.0, next_sample - time.monotonic())))
            if not server.alive():
                failures.append(f"sqlive exited with {server.process.returncode}: {server.stderr_text()[-2000:]}")
                break
            for reader in readers:
                if reader.failure:
                    failures.append(f"a page client stopped being served: {reader.failure}")
                    reader.failure = ""
            if time.monotonic() >= next_sample:
                samples.append(take(time.monotonic() - start))
                next_sample += args.interval
        writer.wait()
        time.sleep(0.5)
        if server.alive():
            samples.append(take(time.monotonic() - start))
        if progress["failed"] or writer.returncode:
            failures.append(f"the writer failed {progress['failed']} commits: {writer_errors[:3]}")

        # The figures.
        if samples:
            last = samples[-1]
            commits = last["commits"]
            server_cpu = last["server_cpu"] - base_server["cpu_s"]
            writer_cpu = last["writer_cpu"]
            elapsed = last["t"]
            steady = [(s["t"] / 60, s["rss_mib"]) for s in samples if s["t"] >= 60]
            growth = slope(steady)
            windows = [s for s in samples if s["window_server_ms"] == s["window_server_ms"]]
            worst = max(windows, key=lambda s: s["window_server_ms"]) if windows else None
            after_minute = next((s for s in samples if s["t"] >= 60), samples[0])
            summary = {
                "binary": args.sqlive,
                "version": version,
                "minutes": elapsed / 60,
                "commits": commits,
                "commits_per_s": commits / elapsed if elapsed else 0,
                "sqlive_cpu_s": server_cpu,
                "writer_cpu_s": writer_cpu,
                "sqlive_ms_per_commit": 1000 * server_cpu / commits if commits else None,
                "writer_ms_per_commit": 1000 * writer_cpu / commits if commits else None,
                "ratio": server_cpu / writer_cpu if writer_cpu else None,
                "sqlive_cpu_percent": 100 * server_cpu / elapsed if elapsed else None,
                "rss_start_mib": base_server["rss_mib"],
                "rss_after_first_minute_mib": after_minute["rss_mib"],
                "rss_end_mib": last["rss_mib"],
                "rss_max_mib": max(s["rss_mib"] for s in samples),
                "rss_growth_mib_per_min_slope": growth,
                "rss_growth_mib_per_min_end_to_end": (last["rss_mib"] - after_minute["rss_mib"])
                / max(1e-9, (last["t"] - after_minute["t"]) / 60),
                "worst_window": worst and {"t": worst["t"], "sqlive_ms_per_commit": worst["window_server_ms"],
                                           "writer_ms_per_commit": worst["window_writer_ms"]},
                "threads_max": max(s["threads"] for s in samples),
                "fds_max": max(s["fds"] for s in samples),
                "updates_read": last["updates"],
                "live_query_errors": sum(reader.errors for reader in readers),
                "writer_failed_commits": progress["failed"],
            }
            print()
            print(f"commits: {commits} in {elapsed:.0f} s ({summary['commits_per_s']:.1f}/s), "
                  f"writer failures: {progress['failed']}")
            print(f"CPU per commit: sqlive {summary['sqlive_ms_per_commit']:.3f} ms, writer "
                  f"{summary['writer_ms_per_commit']:.3f} ms (sqlive/writer {summary['ratio']:.1f}x; sqlive used "
                  f"{summary['sqlive_cpu_percent']:.0f}% of a core)")
            if worst:
                print(f"worst {args.interval:g} s window (t={worst['t']:.0f} s): sqlive {worst['window_server_ms']:.3f} ms/commit, "
                      f"writer {worst['window_writer_ms']:.3f} ms/commit")
            print(f"sqlive RSS: {summary['rss_start_mib']:.1f} MiB before the writer, "
                  f"{summary['rss_after_first_minute_mib']:.1f} after a minute, {summary['rss_end_mib']:.1f} at the "
                  f"end (max {summary['rss_max_mib']:.1f}); growth after the first minute "
                  f"{growth:+.3f} MiB/min (slope), {summary['rss_growth_mib_per_min_end_to_end']:+.3f} MiB/min "
                  f"(last minus first)")
            print(f"threads at most {summary['threads_max']}, descriptors at most {summary['fds_max']}; "
                  f"{summary['updates_read']} updates read by {args.clients} clients, "
                  f"{summary['live_query_errors']} live-query errors")
            if args.json:
                with open(args.json, "w") as out:
                    json.dump({"summary": summary, "samples": samples}, out, indent=1)
    finally:
        for reader in readers:
            reader.stopping = True
        if writer and writer.poll() is None:
            writer.kill()
            writer.wait()
        server.stop()
        for name in os.listdir(directory):
            os.unlink(os.path.join(directory, name))
        os.rmdir(directory)
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
