"""`sqlive --mcp --http`: MCP's streamable HTTP transport, driven by the
official SDK's client in both eras, several sessions at once, against
another process's commits; and the transport's refusals, frame by frame.
"""

import contextlib
import http.client
import json
import os
import pathlib
import signal
import socket
import sqlite3
import subprocess
import threading
import time
import urllib.parse

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ResourceUpdated
from mcp.shared._httpx_utils import create_mcp_http_client

from conftest import SQLIVE, TIMEOUT, make_database

MODERN = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


class Served:
    def __init__(self, process: subprocess.Popen, url: str, token: str):
        self.process = process
        self.url = url
        self.token = token
        parsed = urllib.parse.urlparse(url)
        self.host, self.port, self.path = parsed.hostname, parsed.port, parsed.path

    @contextlib.asynccontextmanager
    async def client(self, mode: str = "auto", token: str | None = None, message_handler=None):
        headers = {"Authorization": f"Bearer {token or self.token}"}
        async with create_mcp_http_client(headers=headers) as http:
            async with Client(
                streamable_http_client(self.url, http_client=http), mode=mode, read_timeout_seconds=TIMEOUT,
                cache=None, message_handler=message_handler,
            ) as client:
                yield client

    def raw(self, method: str, body=None, headers: dict | None = None, timeout: float = TIMEOUT):
        """One HTTP request: (status, headers, body text)."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        sent = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream"}
        sent.update(headers or {})
        sent = {k: v for k, v in sent.items() if v is not None}
        data = body if isinstance(body, (bytes, str)) or body is None else json.dumps(body)
        connection.request(method, self.path, body=data, headers=sent)
        response = connection.getresponse()
        text = response.read().decode()
        connection.close()
        return response.status, dict(response.getheaders()), text


@contextlib.contextmanager
def serve_http(database: pathlib.Path, *args: str):
    """`sqlive --mcp --http 0 DATABASE`: its first lines are the URL and the token."""
    process = subprocess.Popen(
        [SQLIVE, "--mcp", "--http", "0", str(database), *args], stdout=subprocess.PIPE, text=True,
        cwd=str(database.parent), env={**os.environ, "SQLIVE_QUIET": "1"})
    try:
        url = process.stdout.readline().strip()
        authorization = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), url
        token = authorization.removeprefix("Authorization: Bearer ")
        assert len(token) >= 32
        yield Served(process, url, token)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=TIMEOUT) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def sqlite3_shell(database: pathlib.Path, sql: str) -> None:
    """The sqlite3 shell at its defaults (no busy timeout): its commit must succeed."""
    subprocess.run(["sqlite3", str(database), sql], check=True, timeout=TIMEOUT)


async def updated(notifications: list, uri: str):
    with anyio.fail_after(TIMEOUT):
        while not any(isinstance(n, types.ResourceUpdatedNotification) and str(n.params.uri) == uri for n in notifications):
            await anyio.sleep(0.02)
    notifications.clear()


@pytest.mark.parametrize("journal_mode", ["delete", "wal"])
async def test_both_eras_over_http_see_another_process_commit(tmp_path, journal_mode):
    database = tmp_path / "games.sqlite"
    make_database(database, journal_mode=journal_mode)
    with serve_http(database) as served:
        # The 2026-07-28 era: discover, then a listen answered as a stream of events.
        async with served.client() as modern:
            assert modern.protocol_version == MODERN
            await modern.call_tool("watch", {"name": "leaders", "sql": "SELECT name, score FROM players ORDER BY score DESC"})
            async with modern.listen(resource_subscriptions=["sqlive://live/leaders"]) as subscription:
                sqlite3_shell(database, "INSERT INTO players(name, score) VALUES ('Cy', 30)")
                with anyio.fail_after(TIMEOUT):
                    async for event in subscription:
                        if isinstance(event, ResourceUpdated):
                            break
            live = json.loads((await modern.read_resource("sqlive://live/leaders")).contents[0].text)
            assert live["rows"][0] == ["Cy", 30]

        # The 2025-11-25 era: a session, its GET stream, resources/subscribe.
        notifications: list = []

        async def handler(message):
            if not isinstance(message, Exception):
                notifications.append(message)

        async with served.client(mode="legacy", message_handler=handler) as legacy:
            assert legacy.protocol_version == "2025-11-25"
            await legacy.call_tool("watch", {"name": "count", "sql": "SELECT count(*) FROM players"})
            await legacy.subscribe_resource("sqlive://live/count")
            db = sqlite3.connect(database, timeout=0)  # Python's sqlite3, no busy timeout
            with db:
                db.execute("INSERT INTO players(name, score) VALUES ('Di', 1)")
            db.close()
            await updated(notifications, "sqlite://live/count".replace("sqlite", "sqlive"))
            live = json.loads((await legacy.read_resource("sqlive://live/count")).contents[0].text)
            assert live["rows"] == [[4]]
            # wait, answered as events after keep-alive comments.
            async def write_later():
                await anyio.sleep(0.3)
                sqlite3_shell(database, "DELETE FROM players WHERE name = 'Di'")
            async with anyio.create_task_group() as group:
                group.start_soon(write_later)
                waited = await legacy.call_tool("wait", {"name": "count", "timeoutMs": 20000})
            assert waited.structured_content["timedOut"] is False
            assert waited.structured_content["rows"] == [[3]]


async def test_sessions_are_their_own_but_shared_names_are_everyones(tmp_path):
    database = tmp_path / "games.sqlite"
    make_database(database, journal_mode="wal")
    with serve_http(database) as served:
        async with served.client(mode="legacy") as a, served.client(mode="legacy") as b, served.client() as c:
            sql = "SELECT count(*) FROM players"
            assert (await a.call_tool("watch", {"name": "mine", "sql": sql})).is_error is False
            # Another session's name is free in this one, and its query is not visible.
            assert (await b.call_tool("watch", {"name": "mine", "sql": sql})).is_error is False
            assert (await a.call_tool("watch", {"name": "shared:board", "sql": sql})).is_error is False
            taken = await b.call_tool("watch", {"name": "shared:board", "sql": sql})
            assert taken.is_error is True
            b_uris = sorted(str(r.uri) for r in (await b.list_resources()).resources)
            assert b_uris == ["sqlive://live/mine", "sqlive://live/shared%3Aboard", "sqlive://schema"]
            c_uris = sorted(str(r.uri) for r in (await c.list_resources()).resources)
            assert c_uris == ["sqlive://live/shared%3Aboard", "sqlive://schema"]
            assert (await c.call_tool("wait", {"name": "mine", "timeoutMs": 10})).is_error is True

            # Agents waiting on every session while another process commits
            # at its defaults: every commit succeeds, every agent sees the last.
            failures = []

            def writer():
                db = sqlite3.connect(database, timeout=0)
                for i in range(200):
                    try:
                        with db:
                            db.execute("INSERT INTO players(name, score) VALUES (?, ?)", (f"w{i}", i))
                    except sqlite3.OperationalError as error:
                        failures.append(str(error))
                db.close()

            results = {}

            async def agent(key, client, name):
                version = (await client.call_tool("wait", {"name": name, "timeoutMs": 0})).structured_content["version"]
                while True:
                    waited = await client.call_tool("wait", {"name": name, "afterVersion": version, "timeoutMs": 20000})
                    assert waited.is_error is False
                    version = waited.structured_content["version"]
                    if waited.structured_content["rows"] == [[202]]:
                        results[key] = version
                        return

            thread = threading.Thread(target=writer)
            with anyio.fail_after(120):
                async with anyio.create_task_group() as group:
                    group.start_soon(agent, "a", a, "mine")
                    group.start_soon(agent, "b", b, "mine")
                    group.start_soon(agent, "c", c, "shared:board")
                    await anyio.sleep(0.2)
                    thread.start()
            thread.join()
            assert failures == []
            assert sorted(results) == ["a", "b", "c"]


def test_the_transport_refuses_what_it_must_and_goes_on(database):
    with serve_http(database) as served:
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw"}}}
        # No token, a wrong one: 401.
        assert served.raw("POST", initialize, {"Authorization": None})[0] == 401
        assert served.raw("POST", initialize, {"Authorization": "Bearer " + "0" * 64})[0] == 401
        # DNS rebinding: a forged Host (421), a foreign Origin (403).
        assert served.raw("POST", initialize, {"Host": f"evil.example:{served.port}"})[0] == 421
        assert served.raw("POST", initialize, {"Origin": "http://evil.example"})[0] == 403
        status, headers, body = served.raw("POST", initialize, {"Origin": f"http://127.0.0.1:{served.port}"})
        assert status == 200
        session = headers["Mcp-Session-Id"]
        assert json.loads(body)["result"]["protocolVersion"] == "2025-11-25"
        # Malformed bodies: clear errors, nothing lost.
        status, _, body = served.raw("POST", "{not json", {"Mcp-Session-Id": session})
        assert status == 400 and json.loads(body)["error"]["code"] == -32700
        status, _, body = served.raw("POST", [{"jsonrpc": "2.0", "id": 2, "method": "ping"}], {"Mcp-Session-Id": session})
        assert status == 400 and json.loads(body)["error"]["code"] == -32600
        assert served.raw("POST", "x", {"Content-Type": "text/plain", "Mcp-Session-Id": session})[0] == 400
        # A request without its session, with an unknown one.
        ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
        assert served.raw("POST", ping)[0] == 400
        assert served.raw("POST", ping, {"Mcp-Session-Id": "nope"})[0] == 404
        status, _, body = served.raw("POST", ping, {"Mcp-Session-Id": session})
        assert status == 200 and json.loads(body) == {"jsonrpc": "2.0", "id": 3, "result": {}}
        # A notification: 202, no body.
        assert served.raw("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"}, {"Mcp-Session-Id": session})[0] == 202
        # The 2026 era's headers must agree with the body (-32020).
        listed = {"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": ENVELOPE}}
        agreed = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"}
        status, _, body = served.raw("POST", listed, agreed)
        assert status == 200 and json.loads(body)["result"]["resultType"] == "complete"
        status, _, body = served.raw("POST", listed, {**agreed, "Mcp-Method": "tools/call"})
        assert status == 400 and json.loads(body)["error"]["code"] == -32020
        call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                "params": {"_meta": ENVELOPE, "name": "query", "arguments": {"sql": "SELECT 6"}}}
        status, _, body = served.raw("POST", call, {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "schema"})
        assert status == 400 and json.loads(body)["error"]["code"] == -32020
        status, _, body = served.raw("POST", call, {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "query"})
        assert status == 200 and json.loads(body)["result"]["structuredContent"]["rows"] == [[6]]
        # The stateless era has no GET stream; DELETE ends a handshake session.
        assert served.raw("GET", None, {"MCP-Protocol-Version": MODERN})[0] == 405
        assert served.raw("DELETE", None, {"Mcp-Session-Id": session})[0] == 200
        assert served.raw("POST", ping, {"Mcp-Session-Id": session})[0] == 404
        # Another path: 404.
        connection = http.client.HTTPConnection(served.host, served.port, timeout=TIMEOUT)
        connection.request("GET", "/elsewhere", headers={"Authorization": f"Bearer {served.token}"})
        assert connection.getresponse().status == 404
        connection.close()


def test_a_client_that_leaves_mid_wait_gives_its_place_back(database):
    with serve_http(database) as served:
        headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "watch"}
        watch = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                 "params": {"_meta": ENVELOPE, "name": "watch", "arguments": {"name": "n", "sql": "SELECT count(*) FROM players"}}}
        assert served.raw("POST", watch, headers)[0] == 200
        wait = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"_meta": ENVELOPE, "name": "wait", "arguments": {"name": "n", "afterVersion": 1, "timeoutMs": 600000}}}
        # Four waits at once are the most; each client goes away mid-wait.
        for _ in range(2):
            sockets = []
            for i in range(4):
                connection = http.client.HTTPConnection(served.host, served.port, timeout=TIMEOUT)
                connection.request("POST", served.path, body=json.dumps({**wait, "id": 10 + i}), headers={
                    "Authorization": f"Bearer {served.token}", "Content-Type": "application/json",
                    "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": MODERN,
                    "Mcp-Method": "tools/call", "Mcp-Name": "wait"})
                response = connection.getresponse()
                assert response.status == 200 and response.getheader("Content-Type") == "text/event-stream"
                sockets.append(connection)
            time.sleep(0.3)
            for connection in sockets:
                connection.sock.shutdown(socket.SHUT_RDWR)
                connection.close()
            # The server notices at its next keep-alive comment (5 s), and cancels them.
            deadline = time.monotonic() + TIMEOUT
            while True:
                quick = {**wait, "id": 99, "params": {**wait["params"], "arguments": {"name": "n", "timeoutMs": 10}}}
                status, _, body = served.raw("POST", quick, {**headers, "Mcp-Name": "wait"})
                assert status == 200
                result = json.loads(body.split("data: ")[-1])["result"]
                if result["isError"] is False:
                    break
                assert "under way already" in result["content"][0]["text"], result
                assert time.monotonic() < deadline, "the abandoned waits kept their places"
                time.sleep(0.5)
        # The server still answers, and a commit still reaches a waiter.
        sqlite3_shell(database, "INSERT INTO players(name, score) VALUES ('Cy', 30)")
        quick = {**wait, "id": 100, "params": {**wait["params"], "arguments": {"name": "n", "afterVersion": 1, "timeoutMs": 20000}}}
        status, _, body = served.raw("POST", quick, {**headers, "Mcp-Name": "wait"})
        assert json.loads(body.split("data: ")[-1])["result"]["structuredContent"]["rows"] == [[3]]


def test_nothing_listens_beyond_loopback(database):
    addresses = subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()
    with serve_http(database) as served:
        assert served.host == "127.0.0.1"
        for address in addresses:
            if ":" in address:
                continue
            with pytest.raises(OSError):
                socket.create_connection((address, served.port), timeout=2).close()
