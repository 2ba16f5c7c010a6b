"""sqlive on a dqlite cluster (issue #45, point 3): `sqlive dqlite://…/demo`
against three `dqlite-demo` nodes from Debian's `go-dqlite`, started on
loopback by `Tests/ReplicaClients/dqlite-cluster.sh`.

What must hold: statements run on the leader (a scripted session, JSON-RPC
`query/execute`, EXPLAIN, the schema); live queries follow every write
made by other clients (the demo's HTTP API, on any node); the leader killed
mid-run, the live query carries on at the new leader and its final result is
the cluster's; a statement libdqlite 1.11 cannot take (`RETURNING`) is
refused with a clear error and the cluster lives; a bad URL is a clear error.

Run: SQLIVE_BIN=/path/to/sqlive PYTHONDONTWRITEBYTECODE=1 \
       python3 -m pytest -q -s Tests/ReplicaClients/python/test_dqlite.py
"""

import os
import pathlib
import random
import re
import shutil
import statistics
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

HERE = pathlib.Path(__file__).resolve().parent
from replica_support import SQLiveClient, SQLiveError, changed, free_ports

SQLIVE = os.environ.get("SQLIVE_BIN", "sqlive")
CLUSTER = HERE.parent / "dqlite-cluster.sh"
TIMEOUT = 60

pytestmark = pytest.mark.skipif(
    shutil.which("dqlite-demo") is None, reason="dqlite-demo is not installed (apt-get install go-dqlite)")


class Cluster:
    def __init__(self, root: pathlib.Path):
        self.root = root
        ports = free_ports(6)
        self.db_ports, self.api_ports = ports[:3], ports[3:]
        self.nodes = [f"127.0.0.1:{p}" for p in self.db_ports]
        self.url = "dqlite://" + ",".join(self.nodes) + "/demo"

    def script(self, *args, timeout=120):
        env = dict(os.environ, DQLITE_DB_PORTS=",".join(map(str, self.db_ports)),
                   DQLITE_API_PORTS=",".join(map(str, self.api_ports)))
        return subprocess.run(["bash", str(CLUSTER), *args, str(self.root)] if args[0] != "start-node"
                              else ["bash", str(CLUSTER), args[0], str(self.root), *args[1:]],
                              env=env, capture_output=True, text=True, timeout=timeout)

    def start(self):
        result = self.script("start")
        assert result.returncode == 0, result.stdout + result.stderr

    def stop(self):
        self.script("stop")

    def leader(self):
        return self.script("leader").stdout.strip()

    def kill_leader(self):
        result = self.script("kill-leader")
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout + result.stderr

    def put(self, key, value, nodes=None, deadline=TIMEOUT):
        """PUT through the demo's HTTP API, trying each node until one
        answers `done` (an election makes them fail for seconds)."""
        end = time.monotonic() + deadline
        while True:
            for port in nodes or self.api_ports:
                try:
                    request = urllib.request.Request(f"http://127.0.0.1:{port}/{key}", data=value.encode(), method="PUT")
                    with urllib.request.urlopen(request, timeout=5) as response:
                        if response.read().decode().strip() == "done":
                            return port
                except (urllib.error.URLError, OSError):
                    pass
            assert time.monotonic() < end, f"no node took PUT {key}"
            time.sleep(0.1)


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(tmp_path)
    c.start()
    try:
        yield c
    finally:
        c.stop()


def rows(client, sql):
    return client.request("query/execute", {"sql": sql})["results"][-1]["rows"]


def test_a_scripted_session_runs_on_the_leader(cluster):
    cluster.put("seed", "1")
    result = subprocess.run(
        [SQLIVE, cluster.url, "-c", "SELECT value FROM model WHERE key = 'seed'",
         "-c", "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)",
         "-c", "INSERT INTO t(v) VALUES ('a'), ('b')",
         "-c", "SELECT count(*) FROM t", "-c", ".tables",
         "-c", "EXPLAIN QUERY PLAN SELECT * FROM t WHERE id = 1"],
        capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "1"
    assert lines[1] == "2"
    assert "model" in lines[2] and "t" in lines[2].split()
    assert "SEARCH t USING INTEGER PRIMARY KEY" in result.stdout
    # Written on the cluster: the shell of go-dqlite, another client, reads it.
    shell = subprocess.run(["timeout", "30", "dqlite", "-s", ",".join(cluster.nodes), "demo",
                            "SELECT group_concat(v) FROM t"], capture_output=True, text=True)
    assert shell.stdout.strip() == "a,b", shell.stdout + shell.stderr


def test_live_queries_follow_other_clients_and_the_leader_killed(cluster):
    with SQLiveClient(command=(SQLIVE, "--rpc"), database=cluster.url) as client:
        info = client.request("database/schema")
        assert any(t["name"] == "model" for t in info["tables"]), info
        first = client.request("liveQuery/register", {"name": "n", "sql": "SELECT count(*) FROM model"})
        base = first["rows"][0][0]
        listed = {q["name"]: q for q in client.request("liveQuery/list")["liveQueries"]}
        print(f"dqlite: live query precision {listed['n']['precision']}")

        # Every write by another client reaches the live query, one at a time.
        latencies = []
        spacing = random.Random(45)
        for i in range(1, 41):
            # At random moments of the follower's 50 ms cycle.
            time.sleep(spacing.uniform(0.06, 0.16))
            cluster.put(f"k{i}", str(i), nodes=[cluster.api_ports[i % 3]])
            answered = time.monotonic()
            params = changed(client, "n", TIMEOUT)
            latencies.append((time.monotonic() - answered) * 1000)
            assert params["rows"] == [[base + i]], (i, params["rows"])

        # The session's own write, on the leader: seen by the live query and
        # by another client.
        client.request("query/execute", {"sql": "INSERT INTO model VALUES ('own', 'x')"})
        assert changed(client, "n", TIMEOUT)["rows"] == [[base + 41]]
        with urllib.request.urlopen(f"http://127.0.0.1:{cluster.api_ports[2]}/own", timeout=10) as response:
            assert response.read().decode().strip() == "x"

        # The leader killed while a writer keeps writing through the others.
        stop = threading.Event()
        written = []

        def writer():
            n = 0
            while not stop.is_set():
                n += 1
                cluster.put(f"w{n}", str(n), deadline=TIMEOUT)
                written.append(n)
                time.sleep(0.02)

        thread = threading.Thread(target=writer, daemon=True)
        thread.start()
        time.sleep(1)
        old = cluster.leader()
        report = cluster.kill_leader()
        new = cluster.leader()
        assert new and new != old, report
        time.sleep(2)
        stop.set()
        thread.join(TIMEOUT)
        total = base + 41 + len(written)
        # The cluster's count, read by sqlive's statement on the new leader.
        assert rows(client, "SELECT count(*) FROM model") == [[total]]
        last = None
        deadline = time.monotonic() + TIMEOUT
        while last != [[total]]:
            last = changed(client, "n", deadline - time.monotonic())["rows"]
        latencies.sort()
        print(f"dqlite: 40 of 40 writes through the demo's HTTP API delivered; answer -> notification "
              f"p50 {statistics.median(latencies):.1f} ms, p99 {latencies[int(len(latencies) * 0.99) - 1]:.1f} ms; "
              f"leader {old} killed, {len(written)} writes across it, final count exact at the new leader {new}")


def diagnostics(client, uri, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while True:
        message = client.next_notification(timeout=max(0.01, deadline - time.monotonic()))
        assert message is not None, "sqlive ended"
        if message["method"] == "textDocument/publishDiagnostics" and message["params"]["uri"] == uri:
            return message["params"]["diagnostics"]


def test_the_language_server_checks_against_the_clusters_schema(cluster):
    with SQLiveClient(command=(SQLIVE, "--rpc"), database=cluster.url) as client:
        client.notify("initialized", {})
        uri = "file:///tmp/q.sql"
        client.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "sql", "version": 1,
            "text": "SELECT key, value FROM model;\nSELECT * FROM later;\n"}})
        found = diagnostics(client, uri)
        assert [d["message"] for d in found] == ["no such table: later"], found
        # Created by another client: the document is checked again by itself.
        subprocess.run(["timeout", "30", "dqlite", "-s", ",".join(cluster.nodes), "demo",
                        "CREATE TABLE later(x)"], check=True, capture_output=True)
        deadline = time.monotonic() + TIMEOUT
        while found:
            found = diagnostics(client, uri, deadline - time.monotonic())


def test_refusals_are_clear_and_the_cluster_lives(cluster, tmp_path):
    with SQLiveClient(command=(SQLIVE, "--rpc"), database=cluster.url) as client:
        with pytest.raises(SQLiveError) as refused:
            client.request("query/execute", {"sql": "INSERT INTO model VALUES ('r', 'r') RETURNING key"})
        assert "RETURNING" in str(refused.value)
        with pytest.raises(SQLiveError) as failed:
            client.request("query/execute", {"sql": "SELECT * FROM no_such_table"})
        assert "no such table" in str(failed.value)
        # Still serving, and the leader still alive.
        client.request("query/execute", {"sql": "INSERT INTO model VALUES ('after', 'ok')"})
        assert rows(client, "SELECT value FROM model WHERE key = 'after'") == [["ok"]]
    cluster.put("alive", "yes")
    bad = subprocess.run([SQLIVE, "dqlite://127.0.0.1/demo", "-c", "SELECT 1"], capture_output=True, text=True,
                         timeout=TIMEOUT)
    assert bad.returncode != 0
    assert "dqlite://HOST:PORT" in bad.stderr, bad.stderr
    port = free_ports(1)[0]
    started = time.monotonic()
    unreachable = subprocess.run([SQLIVE, f"dqlite://127.0.0.1:{port}/demo", "-c", "SELECT 1"],
                                 capture_output=True, text=True, timeout=TIMEOUT)
    assert unreachable.returncode != 0
    assert "no leader found" in unreachable.stderr, unreachable.stderr
    print(f"dqlite: an unreachable cluster is reported after {time.monotonic() - started:.1f} s")


async def test_an_agent_queries_and_waits_read_only(cluster):
    """The MCP server on a dqlite database: `query` answers, a write is
    refused (read-only by SQLite's rules), `wait` sees another client's write."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    parameters = StdioServerParameters(command=SQLIVE, args=["--mcp", cluster.url], env={"SQLIVE_QUIET": "1"})
    async with Client(parameters, mode="auto", read_timeout_seconds=TIMEOUT, cache=None) as agent:
        answered = await agent.call_tool("query", {"sql": "SELECT count(*) FROM model"})
        assert answered.is_error is False, answered
        base = answered.structured_content["rows"][0][0]
        refused = await agent.call_tool("query", {"sql": "INSERT INTO model VALUES ('agent', 'no')"})
        assert refused.is_error is True, refused
        watched = await agent.call_tool("watch", {"name": "n", "sql": "SELECT count(*) FROM model"})
        version = watched.structured_content["version"]
        cluster.put("by-http", "1")
        waited = await agent.call_tool("wait", {"name": "n", "afterVersion": version, "timeoutMs": 10000})
        assert waited.is_error is False, waited
        assert waited.structured_content["rows"] == [[base + 1]], waited.structured_content
    # The refused write never reached the cluster.
    shell = subprocess.run(["timeout", "30", "dqlite", "-s", ",".join(cluster.nodes), "demo",
                            "SELECT count(*) FROM model WHERE key = 'agent'"], capture_output=True, text=True)
    assert shell.stdout.strip() == "0", shell.stdout + shell.stderr


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_the_repl_watches_a_cluster(cluster):
    """The interactive REPL in a terminal (tmux): `.watch` on the cluster
    re-prints when another client writes."""
    session = f"sqlive-dqlite-{os.getpid()}"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "120", "-y", "40",
                    f"{SQLIVE} {cluster.url}"], check=True)
    try:
        def screen():
            return subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True,
                                  text=True).stdout

        def until(what, condition):
            deadline = time.monotonic() + TIMEOUT
            while not condition(screen()):
                assert time.monotonic() < deadline, f"timed out: {what}\n{screen()}"
                time.sleep(0.1)

        until("the prompt", lambda text: "sqlive>" in text and "dqlite://" in text)
        subprocess.run(["tmux", "send-keys", "-t", session, ".watch n SELECT 'count=' || count(*) FROM model",
                        "Enter"], check=True)
        until("the first result", lambda text: re.search(r"count=(\d+)", text) is not None)
        base = int(re.search(r"count=(\d+)", screen()).group(1))
        cluster.put("from-http", "1")
        until("the write re-printed", lambda text: f"count={base + 1}" in text)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
