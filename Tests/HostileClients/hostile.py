#!/usr/bin/env python3
"""Hostile clients of the real servers, on loopback, bounded (issue #56, point 7).

    Tests/HostileClients/hostile.py [--sqlive PATH] [--bounds] [--groups G,G...]

Starts the real `sqlive --web`, `sqlive --mcp --http` (each with its token,
on 127.0.0.1) and a `sqlive --readonly` REPL's `.web` on temporary
databases, and runs what a hostile or careless client does to them. Around
each group it samples the server's threads (/proc/PID/task), descriptors
(/proc/PID/fd) and resident memory (VmRSS) before, during and after, prints
them as a table, and exits 1 naming each bound that broke.

Groups (all run by default):
  readonly   a read-only server refuses what writes or reads another file
             (page, MCP tools, a --readonly REPL's .web); the database's
             directory, /tmp and /var/tmp are listed before and after
  auth       the token, a lower-case `bearer`, Host and Origin, the CSP and
             frame-ancestors as HTTP headers
  isolation  --allow-writes: a tab's TEMP table is its own; a tab that leaves
             inside a transaction gives the lock back within a second (the
             sqlite3 shell, no busy timeout, writes); another tab's
             acknowledged write survives a rollback
  frames     17 KB and 1 MB of SQL in one frame, 1 MB in fragments; a frame
             over 64 MiB closed with 1009; the socket and the server go on
  slowtab    tabs that stop reading while a writer commits fast: memory
             bounded, stale updates replaced (level-triggered), and memory
             given back after the tabs leave
  many       TABS tabs at once (64 served, the rest closed with 1013) and
             INITIALIZES bare MCP initializes: threads and descriptors after
  cancel     MCP over HTTP: a cancel is its own session's; a cancelled POST
             is answered

`--bounds` adds the group `bounds` (reported on its own): threads that do not
grow per session, MCP's session limit with Retry-After, header and body
time-outs (slowloris), a server under `prlimit --nofile=256` that survives
many sessions and keeps serving, never a false "server is stopping". Its
thresholds are the constants below. main's CI runs without `--bounds` until
those bounds land (issue #56); `--groups bounds` runs them alone.

`--pending` adds the group `pending`: defects this suite found on main that
no branch fixes yet (a message over 64 MiB in fragments; a 4 MB live query
refreshed faster than a debug build can), reported apart, not in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopback as L  # noqa: E402

# ------------------------------------------------------------ thresholds

# The many clients' group: how many.
TABS = 200  # WebSockets opened at once (the server serves 64)
WEB_MAX_TABS = 64  # docs/web.md
INITIALIZES = 500  # bare MCP initializes (no DELETE)
# After clients leave, the server is back within these of where it started.
THREADS_SLACK_AFTER = 8
FDS_SLACK_AFTER = 8
SETTLE_SECONDS = 10  # how long "after" may take to come back
# The slow tab: the outbox holds at most 128 MiB (docs/web.md); beside it the
# engine's copies of a 4 MB result and the socket's buffers.
SLOW_TAB_COMMITS = 150
SLOW_TAB_SECONDS = 15  # over which they are spread (under the 30 s of Hummingbird's ping)
SLOW_TAB_ROWS = 500  # of 1 KB: the live query's result (a loaded debug build keeps up with 10 commits a second)
SLOW_TAB_BIG_ROWS = 4000  # --pending: a result the debug build cannot refresh at that pace
SLOW_TAB_MAX_GROWTH_MIB = 200
SLOW_TAB_MAX_RESIDUE_MIB = 64  # above the start, once the tabs have left
# Locks: a tab that leaves inside a transaction.
LOCK_RELEASE_SECONDS = 1.0
# --bounds: a few threads per server, not per session.
BOUNDS_MAX_EXTRA_THREADS = 16  # over the idle server's, with every client connected
BOUNDS_SESSION_PROBE = 1500  # initializes sent looking for MCP's session limit
BOUNDS_HEADER_TIMEOUT_S = 30  # a half-sent header is closed within this
BOUNDS_BODY_TIMEOUT_S = 30  # a half-sent body is closed within this
BOUNDS_SLOWLORIS_SOCKETS = 50  # held open while the server must go on serving
BOUNDS_NOFILE = 256  # prlimit --nofile
BOUNDS_NOFILE_SESSIONS = 400  # initializes under that limit
BOUNDS_NOFILE_CONNECTIONS = 300  # idle connections held open under it
BOUNDS_NOFILE_SECONDS = 30  # the most the initializes under it may take (main: a second each past the limit)
# SQLite keeps a closed connection's descriptors while another connection of
# the process holds a lock on the file (POSIX locks are per process), for
# reuse: after every MCP session ended, up to two per session that was open
# at once may stay; bounded by the session limit.
BOUNDS_MAX_FDS_AFTER_SESSIONS = 160

VERBOSE = False
STARTED = time.monotonic()

GROUPS = ["readonly", "auth", "isolation", "frames", "slowtab", "many", "cancel"]


# ---------------------------------------------------------------- record


class Record:
    """Every case's result and every sample, printed at the end."""

    def __init__(self):
        self.results: list[tuple[str, str, bool | None, str]] = []
        self.samples: list[tuple[str, str, dict]] = []

    def check(self, group: str, case: str, passed: bool, detail: str = "") -> bool:
        self.results.append((group, case, passed, detail))
        mark = "ok  " if passed else "FAIL"
        print(f"{time.monotonic() - STARTED:5.0f}s {mark} {group}: {case}" + (f" — {detail}" if detail and not passed else ""), flush=True)
        if passed and detail:
            print(f"             {detail}", flush=True)
        return passed

    def skip(self, group: str, case: str, why: str) -> None:
        self.results.append((group, case, None, why))
        print(f"{time.monotonic() - STARTED:5.0f}s skip {group}: {case} — {why}", flush=True)

    def sample(self, group: str, phase: str, server: L.Server) -> dict:
        taken = L.sample(server.pid)
        self.samples.append((group, f"{server.label} {phase}", taken))
        return taken


def settle(server: L.Server, base: dict, threads: int, fds: int, seconds: float = SETTLE_SECONDS) -> dict:
    """Samples until the server is within the slack of `base` (or time is up)."""
    deadline = time.monotonic() + seconds
    while True:
        now = L.sample(server.pid)
        if (now["threads"] <= base["threads"] + threads and now["fds"] <= base["fds"] + fds) or \
                time.monotonic() >= deadline:
            return now
        time.sleep(0.25)


# -------------------------------------------------------------- fixtures


class Fixture:
    """A temporary directory with a WAL database: t(x, name) of 3 rows."""

    def __init__(self, journal: str = "WAL"):
        self.directory = tempfile.mkdtemp(prefix="sqlive-hostile-")
        self.database = os.path.join(self.directory, "games.sqlite")
        self.marker = f"sqlive-hostile-{uuid.uuid4().hex[:8]}"
        connection = sqlite3.connect(self.database)
        connection.executescript(
            f"PRAGMA journal_mode = {journal};"
            "CREATE TABLE t(x INTEGER PRIMARY KEY, name TEXT);"
            "INSERT INTO t(name) VALUES ('a'), ('b'), ('c');"
        )
        connection.close()

    def names(self) -> str:
        out = subprocess.run(
            ["sqlite3", self.database, "SELECT group_concat(name) FROM (SELECT name FROM t ORDER BY x)"],
            capture_output=True, text=True, timeout=30,
        )
        return out.stdout.strip()

    def cleanup(self) -> None:
        for root, dirs, files in os.walk(self.directory, topdown=False):
            for name in files:
                os.unlink(os.path.join(root, name))
            for name in dirs:
                os.rmdir(os.path.join(root, name))
        os.rmdir(self.directory)


def listing(path: str) -> set[str]:
    try:
        return set(os.listdir(path))
    except FileNotFoundError:
        return set()


def temporary_files_open(pid: int) -> list[str]:
    """SQLite's temporary files the process holds open (deleted as they are
    opened: only /proc shows them)."""
    found = []
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if "etilqs_" in target:
                found.append(target)
    except FileNotFoundError:
        pass
    return found


# ------------------------------------------------------------- read-only

LARGE_TEMP_TABLE = (
    "CREATE TEMP TABLE big AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 20000) "
    "SELECT x, randomblob(500) AS b FROM c"
)


def readonly_attempts(fixture: Fixture, other: str) -> list[tuple[str, str]]:
    """(label, SQL) of what would write or read another file."""
    tmp = f"/tmp/{fixture.marker}"
    return [
        ("VACUUM INTO the database's directory", f"VACUUM INTO '{fixture.directory}/copy.sqlite'"),
        ("VACUUM INTO /tmp", f"VACUUM INTO '{tmp}-copy.sqlite'"),
        ("ATTACH another SQLite file", f"ATTACH '{other}' AS other"),
        ("read through ATTACH", f"ATTACH '{other}' AS o2; SELECT * FROM o2.secret"),
        ("ATTACH a new file in /tmp", f"ATTACH '{tmp}-new.sqlite' AS new"),
        ("PRAGMA temp_store = FILE", "PRAGMA temp_store = FILE"),
        ("writefile()", f"SELECT writefile('{tmp}-written.txt', 'x')"),
        ("readfile()", f"SELECT readfile('{other}')"),
        ("edit() (runs a command)", f"SELECT edit('x', 'touch {tmp}-edited')"),
        ("fsdir()", "SELECT name FROM fsdir('/etc') LIMIT 3"),
        ("load_extension()", "SELECT load_extension('libc.so.6')"),
        ("INSERT into a read-only database", "INSERT INTO t(name) VALUES ('d')"),
    ]


def group_readonly(binary: str, record: Record) -> None:
    group = "readonly"
    fixture = Fixture()
    elsewhere = tempfile.mkdtemp(prefix="sqlive-hostile-other-")
    other = os.path.join(elsewhere, "secret.sqlite")
    connection = sqlite3.connect(other)
    connection.executescript("CREATE TABLE secret(s); INSERT INTO secret VALUES ('the other file');")
    connection.close()
    attempts = readonly_attempts(fixture, other)
    servers = []
    try:
        web = L.start_web(binary, fixture.database)
        servers.append(web)
        repl = L.start_repl_page(binary, fixture.database, "--readonly")
        repl.label = "repl .web"
        servers.append(repl)
        mcp = L.start_mcp(binary, fixture.database)
        servers.append(mcp)

        page = L.WebSocket.page(web.port, web.token)
        repl_page = L.WebSocket.page(repl.port, repl.token)
        agent = L.MCPSession(mcp.port, mcp.token)
        # Every server has opened its files before the listings.
        page.execute("SELECT count(*) FROM t")
        repl_page.execute("SELECT count(*) FROM t")
        agent.call("query", {"sql": "SELECT count(*) FROM t"})
        for server in servers:
            record.sample(group, "before", server)

        def snapshot() -> dict[str, set[str]]:
            return {
                "database's directory": listing(fixture.directory),
                "the other file's directory": listing(elsewhere),
                "/tmp": listing("/tmp"),
                "/var/tmp": listing("/var/tmp"),
            }

        before = snapshot()

        def via_page(socket_):
            def run(sql):
                answer = socket_.execute(sql)
                return L.error_text(answer), json.dumps(answer.get("result"))[:200]
            return run

        def via_agent(sql):
            answer = agent.call("query", {"sql": sql})
            return L.tool_error(answer), json.dumps(answer.get("result", {}).get("structuredContent"))[:200]

        clients = [
            ("--web page", web, via_page(page)),
            ("--readonly REPL's .web page", repl, via_page(repl_page)),
            ("--mcp --http query tool", mcp, via_agent),
        ]
        for client, server, run in clients:
            refused_all = []
            for label, sql in attempts:
                error, result = run(sql)
                if not error:
                    refused_all.append(f"{label} ran: {result}")
                elif VERBOSE:
                    print(f"             {label}: {L.redact(error)[:150]}")
            record.check(group, f"{client}: {len(attempts)} attempts refused", not refused_all, "; ".join(refused_all))
            # A large temporary table: in memory (MCP refuses it outright).
            error, _ = run(LARGE_TEMP_TABLE)
            spilled = temporary_files_open(server.pid)
            record.sample(group, "with a 10 MB temp table", server)
            if error:
                record.check(group, f"{client}: a 10 MB CREATE TEMP TABLE", "not authorized" in error or
                             "temp" in error.lower() or "read" in error.lower(), f"refused: {error[:160]}")
            else:
                record.check(group, f"{client}: a 10 MB CREATE TEMP TABLE spills no file", not spilled,
                             f"open temporary files: {spilled}" if spilled else "made in memory")
                run("DROP TABLE big")
            still = run("SELECT count(*) FROM t")
            record.check(group, f"{client}: still serves", not still[0], still[0])

        after = snapshot()
        for place, names in after.items():
            new = names - before[place]
            if place == "/tmp" or place == "/var/tmp":
                # Other programs on the machine use /tmp: ours are named by
                # the marker, SQLite's temporary files start with etilqs_.
                ours = {n for n in new if fixture.marker in n or n.startswith("etilqs_")}
                others = new - ours
                record.check(group, f"no new file in {place}", not ours,
                             f"new: {sorted(ours)}" if ours else
                             (f"(new entries of other programs, not judged: {len(others)})" if others else ""))
            else:
                record.check(group, f"no new file in {place}", not new, f"new: {sorted(new)}" if new else "")
        for server in servers:
            record.sample(group, "after", server)
        page.close()
        repl_page.close()
    finally:
        for server in servers:
            server.stop()
        fixture.cleanup()
        for name in os.listdir(elsewhere):
            os.unlink(os.path.join(elsewhere, name))
        os.rmdir(elsewhere)


# ------------------------------------------------------------------ auth


def group_auth(binary: str, record: Record) -> None:
    group = "auth"
    fixture = Fixture()
    web = mcp = None
    try:
        web = L.start_web(binary, fixture.database)
        mcp = L.start_mcp(binary, fixture.database)
        record.sample(group, "before", web)
        record.sample(group, "before", mcp)
        port, token = web.port, web.token
        own = f"http://127.0.0.1:{port}"

        def get(path, headers=None):
            return L.http(port, "GET", path, headers or {})

        cases = [
            ("web: GET / without the token is 401", get("/").status, 401),
            ("web: GET / with a wrong token is 401", get("/?token=" + "0" * len(token)).status, 401),
            ("web: GET / with the token is 200", get(f"/?token={token}").status, 200),
            ("web: Authorization: Bearer is 200", get("/", {"Authorization": f"Bearer {token}"}).status, 200),
            ("web: a lower-case `bearer` is accepted", get("/", {"Authorization": f"bearer {token}"}).status, 200),
            ("web: `BEARER` is accepted", get("/", {"Authorization": f"BEARER {token}"}).status, 200),
            ("web: a wrong bearer token is 401", get("/", {"Authorization": f"Bearer x{token[1:]}"}).status, 401),
            ("web: Host evil.example is 421",
             get(f"/?token={token}", {"Host": f"evil.example:{port}"}).status, 421),
            ("web: Origin evil.example is 403",
             get(f"/?token={token}", {"Origin": "http://evil.example"}).status, 403),
        ]
        for case, status, expected in cases:
            record.check(group, case, status == expected, f"answered {status}")

        page = get(f"/?token={token}")
        csp = page.headers.get("content-security-policy", "")
        record.check(group, "web: Content-Security-Policy is an HTTP header", bool(csp), csp[:120])
        record.check(group, "web: the CSP has frame-ancestors 'none'", "frame-ancestors 'none'" in csp, csp[:200])
        record.check(group, "web: X-Frame-Options DENY", page.headers.get("x-frame-options", "").upper() == "DENY",
                     page.headers.get("x-frame-options", "(none)"))

        def upgrade(path, headers):
            try:
                L.WebSocket(port, path, headers, timeout=10).abandon()
                return 101
            except L.Closed as closed:
                return closed.reason

        for case, path, headers in [
            ("web: a WebSocket without Origin is not opened", f"/rpc?token={token}", {}),
            ("web: a WebSocket from another Origin is not opened", f"/rpc?token={token}",
             {"Origin": "http://evil.example"}),
            ("web: a WebSocket without the token is not opened", "/rpc", {"Origin": own}),
            ("web: a WebSocket with a wrong token is not opened", "/rpc?token=" + "0" * len(token), {"Origin": own}),
        ]:
            answered = upgrade(path, headers)
            record.check(group, case, answered != 101, f"{answered}")
        record.check(group, "web: the page's own WebSocket opens", upgrade(f"/rpc?token={token}", {"Origin": own}) == 101)

        # MCP over HTTP.
        body = L.initialize_message()
        base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

        def post(headers):
            return L.http(mcp.port, "POST", "/mcp", {**base, **headers}, body).status

        mcases = [
            ("mcp: no token is 401", post({}), 401),
            ("mcp: a wrong token is 401", post({"Authorization": f"Bearer {'0' * len(mcp.token)}"}), 401),
            ("mcp: the token is 200", post({"Authorization": f"Bearer {mcp.token}"}), 200),
            ("mcp: a lower-case `bearer` is accepted", post({"Authorization": f"bearer {mcp.token}"}), 200),
            ("mcp: the token in another scheme is 401", post({"Authorization": f"Basic {mcp.token}"}), 401),
            ("mcp: Host evil.example is 421",
             post({"Authorization": f"Bearer {mcp.token}", "Host": f"evil.example:{mcp.port}"}), 421),
            ("mcp: Origin evil.example is 403",
             post({"Authorization": f"Bearer {mcp.token}", "Origin": "http://evil.example"}), 403),
        ]
        for case, status, expected in mcases:
            record.check(group, case, status == expected, f"answered {status}")
        record.sample(group, "after", web)
        record.sample(group, "after", mcp)
    finally:
        for server in (web, mcp):
            if server:
                server.stop()
        fixture.cleanup()


# ------------------------------------------------------------- isolation


def group_isolation(binary: str, record: Record) -> None:
    group = "isolation"
    for journal in ("WAL", "DELETE"):
        fixture = Fixture(journal)
        web = None
        try:
            web = L.start_web(binary, fixture.database, "--allow-writes")
            base = record.sample(group, f"{journal} before", web)
            a = L.WebSocket.page(web.port, web.token)
            b = L.WebSocket.page(web.port, web.token)
            if journal == "WAL":
                a.execute("CREATE TEMP TABLE t(y)")
                seen_a = L.first_value(a.execute("SELECT count(*) FROM t"))
                seen_b = L.first_value(b.execute("SELECT count(*) FROM t"))
                record.check(group, "tab A's TEMP table t is invisible to tab B (B sees the real t)",
                             seen_a == 0 and seen_b == 3, f"A counted {seen_a}, B {seen_b}")
                a.execute("DROP TABLE temp.t")
            # B's write, acknowledged before A's transaction.
            acked = b.execute("INSERT INTO t(name) VALUES ('b-acked')")
            record.check(group, f"{journal}: B's INSERT is acknowledged", "error" not in acked, L.error_text(acked))
            a.execute("BEGIN")
            a.execute("INSERT INTO t(name) VALUES ('a-rolled-back')")
            # B's write during A's transaction waits, and is not A's.
            waiting = b.send_request("query/execute", {"sql": "INSERT INTO t(name) VALUES ('b-waited')"})
            shell = subprocess.run(["sqlite3", fixture.database, "INSERT INTO t(name) VALUES ('early')"],
                                   capture_output=True, text=True, timeout=30)
            record.check(group, f"{journal}: A's open transaction holds the write lock (the shell fails)",
                         shell.returncode != 0, shell.stderr.strip() or "the shell wrote")
            record.sample(group, f"{journal} during A's transaction", web)
            a.abandon()
            left = time.monotonic()
            wrote = False
            last = ""
            while time.monotonic() - left < LOCK_RELEASE_SECONDS:
                shell = subprocess.run(["sqlite3", fixture.database, "INSERT INTO t(name) VALUES ('shell')"],
                                       capture_output=True, text=True, timeout=30)
                if shell.returncode == 0:
                    wrote = True
                    break
                last = shell.stderr.strip()
                time.sleep(0.02)
            took = time.monotonic() - left
            record.check(group, f"{journal}: tab A closed mid-transaction: the sqlite3 shell (no busy timeout) "
                         f"writes within {LOCK_RELEASE_SECONDS:g} s", wrote,
                         f"wrote after {took:.2f} s" if wrote else f"still failing: {last}")
            answer = b.response(waiting, timeout=30)
            names = fixture.names().split(",")
            record.check(group, f"{journal}: B's acknowledged writes survive A's rollback",
                         "b-acked" in names and ("error" in answer or "b-waited" in names)
                         and "a-rolled-back" not in names,
                         f"t holds {names}; B's waiting INSERT: {L.error_text(answer) or 'acknowledged'}")
            b.close()
            after = settle(web, base, THREADS_SLACK_AFTER, FDS_SLACK_AFTER, seconds=3)
            record.samples.append((group, f"web {journal} after", after))
        finally:
            if web:
                web.stop()
            fixture.cleanup()


# ---------------------------------------------------------------- frames


def group_frames(binary: str, record: Record) -> None:
    group = "frames"
    fixture = Fixture()
    web = None
    try:
        web = L.start_web(binary, fixture.database)
        base = record.sample(group, "before", web)
        page = L.WebSocket.page(web.port, web.token)
        for length in (17_000, 1_000_000):
            started = time.monotonic()
            answer = page.execute(f"SELECT length('{'x' * length}')")
            record.check(group, f"{length:,} bytes of SQL in one frame are answered",
                         L.first_value(answer) == length,
                         f"{time.monotonic() - started:.2f} s" if L.first_value(answer) == length
                         else str(answer)[:200])
        # 1 MB in four fragments.
        text = json.dumps({"jsonrpc": "2.0", "id": 900, "method": "query/execute",
                           "params": {"sql": f"SELECT length('{'y' * 1_000_000}')"}}).encode()
        quarter = len(text) // 4 + 1
        parts = [text[i:i + quarter] for i in range(0, len(text), quarter)]
        for i, part in enumerate(parts):
            page.sock.sendall(page._frame(0x1 if i == 0 else 0x0, part, fin=i == len(parts) - 1))
        answer = page.response(900)
        record.check(group, "1 MB of SQL in four fragments is answered", L.first_value(answer) == 1_000_000,
                     str(answer)[:200] if L.first_value(answer) != 1_000_000 else "")
        record.sample(group, "after 1 MB messages", web)
        # The same socket stays open: no close, no reconnect needed.
        try:
            page.receive_frame(timeout=1.5)
            stayed = "a message came unasked"
        except TimeoutError:
            stayed = ""
        except L.Closed as closed:
            stayed = f"closed {closed.code} {closed.reason}"
        record.check(group, "the socket stays open after long messages (no reconnect)", not stayed, stayed)

        big = L.WebSocket.page(web.port, web.token)
        big.send_frame_head((64 << 20) + 1)
        code = big.close_code_within(10)
        big.abandon()
        record.check(group, "a frame over 64 MiB is closed with 1009", code == 1009, f"{big.ended}: code {code}")
        again = L.first_value(page.execute("SELECT count(*) FROM t"))
        record.check(group, "the first tab goes on after another's 1009", again == 3, f"{again}")
        fresh = L.WebSocket.page(web.port, web.token)
        record.check(group, "a new tab is served after a 1009", L.first_value(fresh.execute("SELECT 1")) == 1)
        fresh.close()
        page.close()
        after = settle(web, base, THREADS_SLACK_AFTER, FDS_SLACK_AFTER)
        record.samples.append((group, "web after", after))
        record.check(group, "threads and descriptors back after the frames' tabs left",
                     after["threads"] <= base["threads"] + THREADS_SLACK_AFTER
                     and after["fds"] <= base["fds"] + FDS_SLACK_AFTER,
                     f"threads {base['threads']} -> {after['threads']}, fds {base['fds']} -> {after['fds']}, "
                     f"RSS {base['rss_mib']:.0f} -> {after['rss_mib']:.0f} MiB")
    finally:
        if web:
            web.stop()
        fixture.cleanup()


# -------------------------------------------------------------- slow tab


def slow_tabs(binary: str, record: Record, group: str, rows: int) -> None:
    """Two tabs watch a live query of ROWS rows of 1 KB and stop reading
    while Python's sqlite3 commits SLOW_TAB_COMMITS times over
    SLOW_TAB_SECONDS (each commit changes every row); a third tab reads a
    count throughout. Then one stuck tab reads again (few updates, the last
    the final state: level-triggered) and the other leaves without reading."""
    fixture = Fixture()
    connection = sqlite3.connect(fixture.database)
    connection.executescript(
        f"CREATE TABLE big AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT {rows}) "
        "SELECT x, printf('%.1000c', 'x') AS pad FROM c;"
    )
    connection.close()
    size = f"{rows / 1000:g} MB"
    web = None
    try:
        web = L.start_web(binary, fixture.database)
        idle = record.sample(group, "idle", web)
        reader = L.WebSocket.page(web.port, web.token)
        # Each stuck tab reads its registration's answer, then nothing for
        # less than the 30 s of Hummingbird's automatic ping (which closes
        # a tab that answers none).
        stuck = [L.WebSocket.page(web.port, web.token) for _ in range(2)]
        wide = "SELECT b.x, b.pad, (SELECT count(*) FROM t) AS n FROM big AS b"
        for tab in stuck:
            registered = tab.request("liveQuery/register", {"name": "wide", "sql": wide, "maxRows": rows + 1000})
            if "error" in registered:
                raise RuntimeError(f"the {size} live query was refused: {L.error_text(registered)}")
        reader.request("liveQuery/register", {"name": "n", "sql": "SELECT count(*) FROM t"})
        base = record.sample(group, f"two tabs watching {size}, before", web)
        writer = sqlite3.connect(fixture.database)  # defaults
        peak = base["rss_mib"]
        # Paced, so that most commits make an update of their own (a burst
        # is coalesced by the engine before any tab sees it).
        begun = time.monotonic()
        for i in range(SLOW_TAB_COMMITS):
            due = begun + i * SLOW_TAB_SECONDS / SLOW_TAB_COMMITS
            time.sleep(max(0.0, due - time.monotonic()))
            writer.execute("INSERT INTO t(name) VALUES ('w')")
            writer.commit()
            if i % 10 == 0:
                peak = max(peak, L.sample(web.pid)["rss_mib"])
        writer.close()
        # The server goes on: the reading tab sees the final count.
        final = 3 + SLOW_TAB_COMMITS
        deadline = time.monotonic() + 30
        seen = None
        updates = len([m for m in reader.pending if m.get("method") == "liveQuery/changed"])
        while seen != final and time.monotonic() < deadline:
            try:
                message = reader.receive(timeout=max(0.1, deadline - time.monotonic()))
            except TimeoutError:
                break
            if message.get("method") == "liveQuery/changed":
                seen = message["params"]["rows"][0][0]
                updates += 1
            peak = max(peak, L.sample(web.pid)["rss_mib"])
        record.check(group, f"a reading tab gets the final state beside two stuck on {size}", seen == final,
                     f"last count {seen}, expected {final}; {updates} updates read of {SLOW_TAB_COMMITS} commits "
                     f"in {time.monotonic() - begun:.1f} s")
        time.sleep(1)
        during = record.sample(group, "stuck tabs, writer done", web)
        peak = max(peak, during["rss_mib"])
        grown = peak - base["rss_mib"]
        record.check(group, f"memory bounded while two tabs are stuck (≤ +{SLOW_TAB_MAX_GROWTH_MIB} MiB)",
                     grown <= SLOW_TAB_MAX_GROWTH_MIB,
                     f"RSS {base['rss_mib']:.0f} -> peak {peak:.0f} MiB (+{grown:.0f})")
        # One stuck tab reads again: a few updates (the stale ones were
        # replaced), the last one the final state.
        last, got, volume = None, 0, 0
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                _, payload = stuck[0].receive_frame(timeout=2)
            except TimeoutError:
                break
            message = json.loads(payload)
            if message.get("method") == "liveQuery/changed":
                got += 1
                volume += len(payload)
                last = message["params"]["rows"][0][2]
                if last == final:
                    break
        record.check(group, "a stuck tab that reads again gets the final state, not every stale one",
                     last == final and got < SLOW_TAB_COMMITS,
                     f"{got} updates ({volume / 2**20:.0f} MiB) for {SLOW_TAB_COMMITS} commits, the last at "
                     f"count {last}")
        stuck[1].abandon()
        stuck[0].close()
        reader.close()
        # Every tab gone: their threads and descriptors, then the memory.
        # (SQLite may keep a closed connection's descriptors for reuse while
        # another connection holds a lock on the file: two per tab.)
        kept = FDS_SLACK_AFTER + 2 * 3
        after = settle(web, idle, THREADS_SLACK_AFTER, kept)
        deadline = time.monotonic() + SETTLE_SECONDS
        while after["rss_mib"] > base["rss_mib"] + SLOW_TAB_MAX_RESIDUE_MIB and time.monotonic() < deadline:
            time.sleep(0.5)
            after = L.sample(web.pid)
        record.samples.append((group, "web after the tabs left", after))
        record.check(group, f"memory given back after the tabs left (≤ +{SLOW_TAB_MAX_RESIDUE_MIB} MiB)",
                     after["rss_mib"] <= base["rss_mib"] + SLOW_TAB_MAX_RESIDUE_MIB,
                     f"RSS {base['rss_mib']:.0f} -> {peak:.0f} -> {after['rss_mib']:.0f} MiB")
        record.check(group, "threads and descriptors back after the tabs left",
                     after["threads"] <= idle["threads"] + THREADS_SLACK_AFTER
                     and after["fds"] <= idle["fds"] + kept,
                     f"threads {idle['threads']} -> {after['threads']}, fds {idle['fds']} -> {after['fds']}")
    finally:
        if web:
            web.stop()
        fixture.cleanup()


def group_slowtab(binary: str, record: Record) -> None:
    slow_tabs(binary, record, "slowtab", SLOW_TAB_ROWS)


# ------------------------------------------------------------------ many


def open_tabs(server: L.Server, count: int) -> tuple[list[L.WebSocket], dict]:
    """COUNT tabs opened at once: those served, and how the others ended."""
    served: list[L.WebSocket] = []
    outcomes: dict[str, int] = {}
    for _ in range(count):
        try:
            tab = L.WebSocket.page(server.port, server.token, timeout=15)
            served.append(tab)
            outcomes["served"] = outcomes.get("served", 0) + 1
        except L.Closed as closed:
            key = f"closed {closed.code}"
            outcomes[key] = outcomes.get(key, 0) + 1
        except (OSError, TimeoutError, RuntimeError) as error:
            key = f"failed: {type(error).__name__}"
            outcomes[key] = outcomes.get(key, 0) + 1
    return served, outcomes


def bare_initializes(server: L.Server, count: int, delete: bool = False, timeout: float = 15,
                     seconds: float = 120) -> dict:
    """COUNT MCP initializes, each on a connection of its own; their answers
    (it stops after 3 failures in a row, or after SECONDS: a server that
    hangs, or answers each in a second, costs no more)."""
    ends = time.monotonic() + seconds
    outcomes: dict = {}
    keys: list[str] = []
    first_refusal = None
    in_a_row = 0
    for _ in range(count):
        if in_a_row >= 3:
            outcomes["given up after 3 failures in a row"] = 1
            break
        if time.monotonic() > ends:
            outcomes[f"given up after {seconds:g} s"] = 1
            break
        try:
            response = L.http(server.port, "POST", "/mcp", L.mcp_headers(server.token), L.initialize_message(),
                              timeout=timeout)
            key = str(response.status)
            in_a_row = 0
            if response.status != 200 and first_refusal is None:
                first_refusal = (response.status, response.headers.get("retry-after"), response.text[:200])
            if response.status == 200 and "mcp-session-id" in response.headers:
                if delete:
                    L.http(server.port, "DELETE", "/mcp",
                           L.mcp_headers(server.token, response.headers["mcp-session-id"]))
                else:
                    keys.append(response.headers["mcp-session-id"])
        except (OSError, TimeoutError, ConnectionError) as error:
            key = f"failed: {type(error).__name__}"
            in_a_row += 1
        outcomes[key] = outcomes.get(key, 0) + 1
    if first_refusal:
        outcomes["first refusal"] = first_refusal
    outcomes["keys"] = keys
    return outcomes


def summary(outcomes: dict) -> dict:
    """The outcomes without the session keys."""
    return {key: value for key, value in outcomes.items() if key != "keys"}


def still_serves(server: L.Server) -> str:
    """'' when a new client is served a query; what went wrong otherwise."""
    try:
        if server.kind == "web":
            tab = L.WebSocket.page(server.port, server.token, timeout=15)
            value = L.first_value(tab.execute("SELECT count(*) FROM t", timeout=15))
            tab.close()
        else:
            session = L.MCPSession(server.port, server.token, timeout=15)
            rows = L.tool_rows(session.call("query", {"sql": "SELECT count(*) FROM t"}))
            value = rows and rows[0][0]
            session.delete()
        return "" if value == 3 else f"answered {value}"
    except Exception as error:  # noqa: BLE001
        return f"{type(error).__name__}: {error}"


def group_many(binary: str, record: Record) -> None:
    group = "many"
    fixture = Fixture()
    web = mcp = None
    try:
        web = L.start_web(binary, fixture.database)
        base = record.sample(group, "before", web)
        started = time.monotonic()
        tabs, outcomes = open_tabs(web, TABS)
        during = record.sample(group, f"with {TABS} tabs opened", web)
        record.check(group, f"{TABS} tabs at once: {WEB_MAX_TABS} served, the rest closed with 1013",
                     outcomes.get("served", 0) == WEB_MAX_TABS
                     and outcomes.get("closed 1013", 0) == TABS - WEB_MAX_TABS,
                     f"{outcomes} in {time.monotonic() - started:.1f} s; threads {base['threads']} -> "
                     f"{during['threads']}, fds {base['fds']} -> {during['fds']}")
        for tab in tabs:
            tab.close()
        # SQLite keeps a closed connection's descriptor while another
        # connection of the process holds a lock on the file (POSIX locks
        # are per process), and reuses it for the next one opened: up to
        # one per tab served stays, and a second wave must not add to it.
        residue = WEB_MAX_TABS + FDS_SLACK_AFTER
        after = settle(web, base, THREADS_SLACK_AFTER, residue)
        record.samples.append((group, "web after the tabs left", after))
        tabs, again = open_tabs(web, TABS)
        for tab in tabs:
            tab.close()
        second = settle(web, after, THREADS_SLACK_AFTER, FDS_SLACK_AFTER)
        record.samples.append((group, "web after a second wave left", second))
        record.check(group, f"threads back after the tabs left; descriptors within {WEB_MAX_TABS} + "
                     f"{FDS_SLACK_AFTER}, not growing with a second wave",
                     after["threads"] <= base["threads"] + THREADS_SLACK_AFTER
                     and second["threads"] <= base["threads"] + THREADS_SLACK_AFTER
                     and after["fds"] <= base["fds"] + residue
                     and second["fds"] <= after["fds"] + FDS_SLACK_AFTER,
                     f"threads {base['threads']} -> {during['threads']} -> {after['threads']} -> {second['threads']}, "
                     f"fds {base['fds']} -> {during['fds']} -> {after['fds']} -> {second['fds']}, "
                     f"RSS {base['rss_mib']:.0f} -> {during['rss_mib']:.0f} -> {after['rss_mib']:.0f} -> "
                     f"{second['rss_mib']:.0f} MiB")
        problem = still_serves(web)
        record.check(group, "the page server serves a new tab after", not problem, problem)

        mcp = L.start_mcp(binary, fixture.database)
        base = record.sample(group, "before", mcp)
        started = time.monotonic()
        outcomes = bare_initializes(mcp, INITIALIZES // 5, delete=True)
        deleted = settle(mcp, base, THREADS_SLACK_AFTER, FDS_SLACK_AFTER)
        record.samples.append((group, f"mcp after {INITIALIZES // 5} sessions ended by DELETE", deleted))
        record.check(group, f"{INITIALIZES // 5} MCP sessions ended by DELETE give their threads back",
                     deleted["threads"] <= base["threads"] + THREADS_SLACK_AFTER
                     and deleted["fds"] <= base["fds"] + FDS_SLACK_AFTER,
                     f"{summary(outcomes)}; threads {base['threads']} -> {deleted['threads']}, fds {base['fds']} -> "
                     f"{deleted['fds']}")
        started = time.monotonic()
        outcomes = bare_initializes(mcp, INITIALIZES)
        during = record.sample(group, f"after {INITIALIZES} bare initializes", mcp)
        took = time.monotonic() - started
        stopping = "stopping" in str(outcomes.get("first refusal", ""))
        record.check(group, f"{INITIALIZES} bare MCP initializes: answered, none 'the server is stopping'",
                     mcp.alive() and not stopping and all(k in ("200", "429", "503", "first refusal", "keys")
                                                          for k in outcomes),
                     f"{summary(outcomes)} in {took:.1f} s; threads {base['threads']} -> {during['threads']}, "
                     f"fds {base['fds']} -> {during['fds']}, RSS {base['rss_mib']:.0f} -> {during['rss_mib']:.0f} MiB")
        # Past the session limit (docs/mcp.md) the rest were told to retry:
        # the sessions made are ended, then a new one is served.
        end_sessions(mcp, outcomes.get("keys", []))
        problem = still_serves(mcp)
        record.check(group, "the MCP server serves a new session after", not problem, problem)
        # Threads per bare session are judged with --bounds.
        record.samples.append((group, "mcp after (sessions kept: idle expiry is 30 min)", L.sample(mcp.pid)))
    finally:
        for server in (web, mcp):
            if server:
                server.stop()
        fixture.cleanup()


# ---------------------------------------------------------------- cancel


def group_cancel(binary: str, record: Record) -> None:
    group = "cancel"
    fixture = Fixture()
    mcp = None
    try:
        mcp = L.start_mcp(binary, fixture.database)
        base = record.sample(group, "before", mcp)
        a = L.MCPSession(mcp.port, mcp.token)
        b = L.MCPSession(mcp.port, mcp.token)
        for session in (a, b):
            watched = session.call("watch", {"name": "n", "sql": "SELECT count(*) FROM t"})
            if L.tool_error(watched):
                raise RuntimeError(f"watch: {watched}")

        def start_wait(session: L.MCPSession, id_: int) -> L.HTTPConnection:
            connection = L.HTTPConnection(mcp.port, timeout=60)
            connection.send("POST", "/mcp", L.mcp_headers(mcp.token, session.key), json.dumps({
                "jsonrpc": "2.0", "id": id_, "method": "tools/call",
                "params": {"name": "wait", "arguments": {"name": "n", "afterVersion": 1, "timeoutMs": 60000}},
            }).encode())
            return connection

        # Handshake era: A and B each wait with id 7; B cancels its 7.
        wait_a = start_wait(a, 7)
        status_a, headers_a = wait_a.read_head()
        wait_b = start_wait(b, 7)
        status_b, headers_b = wait_b.read_head()
        cancel = b.post({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}})
        record.sample(group, "during two waits", mcp)
        wait_b.sock.settimeout(10)
        try:
            answered_b = L.Response(status_b, headers_b, wait_b.read_body(headers_b, 7)).message()
        except (OSError, ValueError) as error:
            answered_b = {"failure": str(error)}
        record.check(group, "a cancelled request's POST is answered (-32800)",
                     answered_b.get("error", {}).get("code") == -32800 and cancel.status == 202,
                     f"cancel {cancel.status}, answer {json.dumps(answered_b)[:160]}")
        # A's wait is still pending: answered when the sqlite3 shell commits
        # (had B's cancel reached it, it would have been answered -32800).
        subprocess.run(["sqlite3", fixture.database, "INSERT INTO t(name) VALUES ('d')"], check=True, timeout=30)
        wait_a.sock.settimeout(30)
        try:
            body = wait_a.read_body(headers_a, 7)
            answered_a = L.Response(status_a, headers_a, body).message()
        except (OSError, ValueError) as error:
            answered_a = {"failure": str(error)}
        rows = L.tool_rows(answered_a)
        record.check(group, "B's cancel of id 7 did not cancel A's request 7 (answered after a commit)",
                     rows == [[4]], f"A got {json.dumps(answered_a)[:200]}")
        wait_a.close()
        wait_b.close()

        # Stateless era: A waits with id 1; B cancels id 1 and asks its own id 1.
        headers, body = L.stateless(mcp.token, 1, "tools/call", "watch",
                                    {"name": "s", "sql": "SELECT count(*) FROM t"})
        L.http(mcp.port, "POST", "/mcp", headers, body)
        headers, body = L.stateless(mcp.token, 1, "tools/call", "wait",
                                    {"name": "s", "afterVersion": 1, "timeoutMs": 60000})
        stateless_a = L.HTTPConnection(mcp.port, timeout=60)
        stateless_a.send("POST", "/mcp", headers, body)
        status, head = stateless_a.read_head()
        headers, body = L.stateless(mcp.token, None, "notifications/cancelled", arguments={"requestId": 1})
        cancelled = L.http(mcp.port, "POST", "/mcp", headers, body).status
        headers, body = L.stateless(mcp.token, 1, "tools/call", "query", {"sql": "SELECT 41 + 1"})
        own = L.http(mcp.port, "POST", "/mcp", headers, body).message()
        record.check(group, "stateless: B's own id 1 is answered as B's", L.tool_rows(own) == [[42]],
                     json.dumps(own)[:200])
        subprocess.run(["sqlite3", fixture.database, "INSERT INTO t(name) VALUES ('e')"], check=True, timeout=30)
        try:
            answered = L.Response(status, head, stateless_a.read_body(head, 1)).message()
        except (OSError, ValueError) as error:
            answered = {"failure": str(error)}
        record.check(group, "stateless: B's cancel of id 1 did not cancel A's wait 1",
                     cancelled == 202 and L.tool_rows(answered) == [[5]],
                     f"cancel {cancelled}; A got {json.dumps(answered)[:200]}")
        stateless_a.close()
        a.delete()
        b.delete()
        after = settle(mcp, base, THREADS_SLACK_AFTER, FDS_SLACK_AFTER, seconds=3)
        record.samples.append((group, "mcp after", after))
    finally:
        if mcp:
            mcp.stop()
        fixture.cleanup()


def group_pending(binary: str, record: Record) -> None:
    """Defects this suite found on main that no branch fixes yet: run by
    --pending, reported apart, not in CI until fixed."""
    group = "pending"
    fixture = Fixture()
    web = None
    try:
        web = L.start_web(binary, fixture.database)
        base = record.sample(group, "before", web)
        # A message over 64 MiB in fragments (each frame under the limit):
        # docs/web.md promises 1009 for a frame or a message over it.
        frag = L.WebSocket.page(web.port, web.token)
        chunk = b"z" * (8 << 20)
        closed_code = None
        try:
            frag.sock.sendall(frag._frame(0x1, b'{"jsonrpc":"2.0","id":1,"method":"query/execute","params":'
                                                 b'{"sql":"SELECT \'', fin=False))
            for _ in range(9):  # 72 MiB in all
                frag.sock.sendall(frag._frame(0x0, chunk, fin=False))
        except OSError:
            pass
        sent = time.monotonic()
        closed_code = frag.close_code_within(30)
        frag.abandon()
        record.check(group, "fragments adding up to over 64 MiB are closed with 1009", closed_code == 1009,
                     f"{frag.ended}: code {closed_code} ({frag.close_reason or 'no reason'}), "
                     f"{time.monotonic() - sent:.1f} s after the last fragment")
        problem = still_serves(web)
        record.check(group, "the page server serves a new tab after", not problem, problem)
        after = settle(web, base, THREADS_SLACK_AFTER, FDS_SLACK_AFTER)
        record.samples.append((group, "web after", after))
    finally:
        if web:
            web.stop()
        fixture.cleanup()
    # A server slower than the commits (a 4 MB result refreshed 12 times a
    # second: a debug build cannot): what piles up before the outbox.
    slow_tabs(binary, record, group, SLOW_TAB_BIG_ROWS)


# ---------------------------------------------------------------- bounds


def half_open(port: int, body: bool, token: str = "") -> socket.socket:
    """A connection that sends part of a request and stops: headers cut
    short, or whole headers (with the token) and part of the body."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    if body:
        sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
                     f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                     f"Content-Length: 1000\r\n\r\n{{\"jsonrpc\"".encode())
    else:
        sock.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: ".encode())
    return sock


def closed_within_all(socks: dict[str, socket.socket], seconds: float) -> dict[str, float]:
    """When the server closed (or answered) each connection, in seconds
    from now; those it still held after `seconds` are left out."""
    started = time.monotonic()
    closed: dict[str, float] = {}
    for sock in socks.values():
        sock.setblocking(False)
    while len(closed) < len(socks) and time.monotonic() - started < seconds:
        for name, sock in socks.items():
            if name in closed:
                continue
            try:
                data = sock.recv(4096)
                if not data or data.startswith(b"HTTP/1.1 4"):
                    closed[name] = time.monotonic() - started
            except BlockingIOError:
                continue
            except OSError:
                closed[name] = time.monotonic() - started
        time.sleep(0.2)
    return closed


def end_sessions(server: L.Server, keys: list[str], seconds: float = 30) -> None:
    """DELETEs each session (for at most SECONDS in all)."""
    ends = time.monotonic() + seconds
    for key in keys:
        if time.monotonic() > ends:
            return
        try:
            L.http(server.port, "DELETE", "/mcp", L.mcp_headers(server.token, key), timeout=5)
        except (OSError, TimeoutError, ConnectionError):
            pass


def group_bounds(binary: str, record: Record) -> None:
    group = "bounds"
    fixture = Fixture()
    servers: list[L.Server] = []
    try:
        web = L.start_web(binary, fixture.database)
        mcp = L.start_mcp(binary, fixture.database)
        servers += [web, mcp]
        web_base = record.sample(group, "before", web)
        mcp_base = record.sample(group, "before", mcp)

        # Header and body time-outs (slowloris): many half-sent headers held
        # while the server must go on serving; then each closed in time.
        held = {server.kind: [half_open(server.port, body=False) for _ in range(BOUNDS_SLOWLORIS_SOCKETS)]
                for server in (web, mcp)}
        for server in (web, mcp):
            problem = still_serves(server)
            record.check(group, f"{server.kind}: serves beside {BOUNDS_SLOWLORIS_SOCKETS} half-sent headers",
                         not problem, problem)
            record.samples.append((group, f"{server.label} with {BOUNDS_SLOWLORIS_SOCKETS} slowloris sockets",
                                   L.sample(server.pid)))
        watched = {"web: a half-sent header": (held["web"][0], BOUNDS_HEADER_TIMEOUT_S),
                   "mcp: a half-sent header": (held["mcp"][0], BOUNDS_HEADER_TIMEOUT_S),
                   "mcp: a half-sent body": (half_open(mcp.port, body=True, token=mcp.token),
                                             BOUNDS_BODY_TIMEOUT_S)}
        closed = closed_within_all({name: sock for name, (sock, _) in watched.items()},
                                   max(limit for _, limit in watched.values()))
        for name, (sock, limit) in watched.items():
            took = closed.get(name)
            record.check(group, f"{name} is closed within {limit} s", took is not None and took <= limit,
                         f"after {took:.1f} s" if took is not None else f"still open after {limit} s")
            sock.close()
        for socks in held.values():
            for sock in socks:
                sock.close()

        # Threads do not grow with clients: idle tabs and sessions cost none
        # once the burst that opened them has settled (docs/web.md, mcp.md).
        tabs, _ = open_tabs(web, TABS)
        during = settle(web, web_base, BOUNDS_MAX_EXTRA_THREADS, 10_000)
        record.samples.append((group, f"web with {TABS} tabs, idle", during))
        record.check(group, f"{TABS} idle tabs cost at most {BOUNDS_MAX_EXTRA_THREADS} threads",
                     during["threads"] <= web_base["threads"] + BOUNDS_MAX_EXTRA_THREADS,
                     f"threads {web_base['threads']} -> {during['threads']}")
        for tab in tabs:
            tab.close()
        outcomes = bare_initializes(mcp, INITIALIZES)
        during = settle(mcp, mcp_base, BOUNDS_MAX_EXTRA_THREADS, BOUNDS_MAX_EXTRA_THREADS)
        record.samples.append((group, f"mcp after {INITIALIZES} bare initializes, idle", during))
        record.check(group, f"{INITIALIZES} idle MCP sessions cost at most {BOUNDS_MAX_EXTRA_THREADS} threads",
                     during["threads"] <= mcp_base["threads"] + BOUNDS_MAX_EXTRA_THREADS,
                     f"threads {mcp_base['threads']} -> {during['threads']}, fds {mcp_base['fds']} -> "
                     f"{during['fds']}, RSS {mcp_base['rss_mib']:.0f} -> {during['rss_mib']:.0f} MiB; "
                     f"{summary(outcomes)}")
        record.check(group, f"{INITIALIZES} bare MCP initializes hold no descriptor each",
                     during["fds"] <= mcp_base["fds"] + BOUNDS_MAX_EXTRA_THREADS,
                     f"fds {mcp_base['fds']} -> {during['fds']}")

        # MCP's session limit: an over-limit initialize is told when to retry;
        # the sessions already open go on; ending some makes room.
        more = bare_initializes(mcp, BOUNDS_SESSION_PROBE - INITIALIZES)
        refusal = outcomes.get("first refusal") or more.get("first refusal")
        record.sample(group, f"after {BOUNDS_SESSION_PROBE} initializes", mcp)
        if refusal:
            status, retry_after, text = refusal
            record.check(group, "over the session limit: 429 or 503 with Retry-After, not 'stopping'",
                         status in (429, 503) and retry_after is not None and "stopping" not in text,
                         f"{status}, Retry-After {retry_after}: {text[:120]}")
        else:
            record.check(group, "over the session limit: 429 or 503 with Retry-After, not 'stopping'", False,
                         f"no limit met in {BOUNDS_SESSION_PROBE} sessions: {summary(more)}")
        keys = outcomes["keys"] + more["keys"]
        end_sessions(mcp, keys[:20])
        problem = still_serves(mcp)
        record.check(group, "a new MCP session is served once 20 have ended", not problem, problem)
        end_sessions(mcp, keys[20:])
        after = settle(mcp, mcp_base, BOUNDS_MAX_EXTRA_THREADS, BOUNDS_MAX_FDS_AFTER_SESSIONS)
        record.samples.append((group, "mcp after every session ended", after))
        record.check(group, f"every session ended: threads back, descriptors within "
                     f"{BOUNDS_MAX_FDS_AFTER_SESSIONS}",
                     after["threads"] <= mcp_base["threads"] + BOUNDS_MAX_EXTRA_THREADS
                     and after["fds"] <= mcp_base["fds"] + BOUNDS_MAX_FDS_AFTER_SESSIONS,
                     f"threads {mcp_base['threads']} -> {after['threads']}, fds {mcp_base['fds']} -> {after['fds']}")

        # Under a small descriptor limit: sessions and idle connections past
        # it are answered or refused, never "the server is stopping"; it
        # does not crash, and serves again once they leave.
        limited = L.start_mcp(binary, fixture.database,
                              wrapper=["prlimit", f"--nofile={BOUNDS_NOFILE}:{BOUNDS_NOFILE}"])
        limited.label = f"mcp nofile={BOUNDS_NOFILE}"
        servers.append(limited)
        record.sample(group, "before", limited)
        first = L.MCPSession(limited.port, limited.token, timeout=10)
        outcomes = bare_initializes(limited, BOUNDS_NOFILE_SESSIONS, timeout=5, seconds=BOUNDS_NOFILE_SECONDS)
        record.sample(group, f"after {BOUNDS_NOFILE_SESSIONS} initializes", limited)
        try:
            rows = L.tool_rows(first.call("query", {"sql": "SELECT count(*) FROM t"}))
            early = "" if rows == [[3]] else f"answered {rows}"
        except (OSError, TimeoutError, ConnectionError, ValueError) as error:
            early = f"{type(error).__name__}: {error}"
        record.check(group, f"under --nofile={BOUNDS_NOFILE}: a session opened before "
                     f"{BOUNDS_NOFILE_SESSIONS} others is still served", not early, early)
        held = []
        for _ in range(BOUNDS_NOFILE_CONNECTIONS):
            try:
                held.append(socket.create_connection(("127.0.0.1", limited.port), timeout=3))
            except OSError:
                break
        record.sample(group, f"with {len(held)} idle connections held", limited)
        # While they are held, a request is answered or refused, never
        # "stopping", and not left hanging.
        try:
            answer = L.http(limited.port, "POST", "/mcp", L.mcp_headers(limited.token), L.initialize_message(),
                            timeout=10)
            held_answer = f"{answer.status} Retry-After {answer.headers.get('retry-after')} {answer.text[:100]}"
            hung = False
        except (ConnectionRefusedError, ConnectionResetError) as error:
            # Refused at once (within 16 descriptors of the limit the
            # server closes a new connection: docs/mcp.md): told, not hung.
            held_answer = f"refused: {type(error).__name__}: {error}"
            hung = False
        except (OSError, TimeoutError, ConnectionError) as error:
            held_answer = f"{type(error).__name__}: {error}"
            hung = True
        for sock in held:
            sock.close()
        stopping = "stopping" in str(outcomes.get("first refusal", "")) or "stopping" in held_answer
        record.check(group, f"under --nofile={BOUNDS_NOFILE}: never 'the server is stopping'", not stopping,
                     f"initializes {summary(outcomes)}; with {len(held)} connections held: {held_answer}")
        record.check(group, f"under --nofile={BOUNDS_NOFILE}: a request beside {len(held)} held connections "
                     "is answered, not left hanging", not hung, held_answer)
        end_sessions(limited, outcomes["keys"])
        time.sleep(1)
        problem = still_serves(limited)
        record.check(group, f"under --nofile={BOUNDS_NOFILE}: alive and serving once they left",
                     limited.alive() and not problem,
                     problem or (f"exited with {limited.process.returncode}" if not limited.alive() else ""))
        record.sample(group, "at the end", limited)
        for server in (web, mcp):
            record.samples.append((group, f"{server.label} at the end", L.sample(server.pid)))
    finally:
        for server in servers:
            server.stop()
        fixture.cleanup()


# ------------------------------------------------------------------ main

RUNNERS = {
    "readonly": group_readonly,
    "auth": group_auth,
    "isolation": group_isolation,
    "frames": group_frames,
    "slowtab": group_slowtab,
    "many": group_many,
    "cancel": group_cancel,
    "bounds": group_bounds,
    "pending": group_pending,
}


def default_binary() -> str:
    if os.environ.get("SQLIVE_BIN"):
        return os.environ["SQLIVE_BIN"]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    return os.path.normpath(os.path.join(root, ".build", "debug", "sqlive"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--sqlive", default=default_binary(), help="the binary (default: $SQLIVE_BIN or .build/debug)")
    parser.add_argument("--bounds", action="store_true", help="run the bounds group too (reported apart)")
    parser.add_argument("--pending", action="store_true",
                        help="run the group of defects found and not fixed yet too (reported apart)")
    parser.add_argument("--groups", help="comma-separated groups to run (default: all but bounds and pending)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each refusal's reason")
    args = parser.parse_args()
    global VERBOSE
    VERBOSE = args.verbose
    groups = args.groups.split(",") if args.groups else (
        GROUPS + (["bounds"] if args.bounds else []) + (["pending"] if args.pending else []))
    unknown = [g for g in groups if g not in RUNNERS]
    if unknown:
        parser.error(f"unknown group {unknown}; groups: {', '.join(RUNNERS)}")
    if not os.access(args.sqlive, os.X_OK):
        parser.error(f"no sqlive at {args.sqlive}")

    # A time-out's SIGTERM (CI's `timeout 300`) ends the run as an
    # interrupt does: each group's servers are stopped on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(124))
    record = Record()
    started = time.monotonic()
    timings = {}
    for group in groups:
        print(f"== {group}", flush=True)
        begun = time.monotonic()
        try:
            RUNNERS[group](args.sqlive, record)
        except Exception as error:  # noqa: BLE001 - a group that cannot go on is a failure
            record.check(group, "the group ran to its end", False, f"{type(error).__name__}: {L.redact(str(error))}")
        timings[group] = time.monotonic() - begun

    print()
    print(f"{'group':<10} {'server and phase':<52} {'threads':>7} {'fds':>5} {'RSS MiB':>8}")
    for group, phase, taken in record.samples:
        print(f"{group:<10} {phase:<52} {taken['threads']:>7} {taken['fds']:>5} {taken['rss_mib']:>8.1f}")
    print()
    failed = False
    sections = (("cases", [g for g in groups if g not in ("bounds", "pending")]),
                ("bounds (--bounds)", ["bounds"]), ("pending (--pending)", ["pending"]))
    for section, members in sections:
        rows = [r for r in record.results if r[0] in members]
        if not rows:
            continue
        passed = sum(1 for r in rows if r[2] is True)
        failures = [r for r in rows if r[2] is False]
        print(f"{section}: {passed} passed, {len(failures)} failed "
              f"({', '.join(f'{g} {timings[g]:.0f} s' for g in members if g in timings)})")
        for group, case, _, detail in failures:
            print(f"  FAIL {group}: {case}: {detail}")
            failed = True
    print(f"in {time.monotonic() - started:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
