"""sqlive --mcp in both eras of MCP, driven by the official SDK's newest
client (`mcp.Client`): the 2026-07-28 era (`server/discover`, the `_meta`
envelope, `subscriptions/listen`) and the 2025-11-25 handshake, negotiated
on one binary, against another process's commits.

The SDK is installed unpinned; pytest's header says which version ran.
"""

import json
import os
import pathlib
import sqlite3
import subprocess
import sys
import time

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated

from conftest import SQLIVE, TIMEOUT, make_database

MODERN = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def parameters(database: pathlib.Path, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=SQLIVE, args=["--mcp", str(database), *args], cwd=str(database.parent),
        env={"SQLIVE_QUIET": "1"})


def client(database: pathlib.Path, mode: str = "auto") -> Client:
    # No response cache: every read reaches the server.
    return Client(parameters(database), mode=mode, read_timeout_seconds=TIMEOUT, cache=None)


def sqlite3_shell(database: pathlib.Path, sql: str) -> None:
    """The sqlite3 shell at its defaults (no busy timeout): its commit must succeed."""
    subprocess.run(["sqlite3", str(database), sql], check=True, timeout=TIMEOUT)


async def next_event(subscription, kind, uri: str | None = None):
    """The next event of a kind (and URI), skipping others."""
    with anyio.fail_after(TIMEOUT):
        async for event in subscription:
            if isinstance(event, kind) and (uri is None or str(event.uri) == uri):
                return event
    raise AssertionError("the listen ended")


async def test_auto_negotiates_2026_and_legacy_still_gets_the_handshake(database):
    async with client(database) as modern:
        assert modern.protocol_version == MODERN
        assert modern.server_info.name == "sqlive"
        assert modern.server_capabilities.resources.subscribe is True
        assert "sqlive" in modern.instructions
        tools = [tool.name for tool in (await modern.list_tools()).tools]
        assert {"query", "explain", "schema", "watch", "wait", "unwatch"} <= set(tools)
        rows = await modern.call_tool("query", {"sql": "SELECT name FROM players ORDER BY id"})
        assert rows.structured_content["rows"] == [["Ann"], ["Bob"]]
    async with client(database, mode="legacy") as legacy:
        assert legacy.protocol_version == "2025-11-25"
        rows = await legacy.call_tool("query", {"sql": "SELECT count(*) FROM players"})
        assert rows.structured_content["rows"] == [[2]]
    # Pinned to 2026-07-28: no probe at all, the first frame a tool call.
    async with client(database, mode=MODERN) as pinned:
        rows = await pinned.call_tool("query", {"sql": "SELECT 1"})
        assert rows.structured_content["rows"] == [[1]]


@pytest.mark.parametrize("journal_mode", ["delete", "wal"])
async def test_listen_sees_another_process_commit(tmp_path, journal_mode):
    database = tmp_path / "games.sqlite"
    make_database(database, journal_mode=journal_mode)
    async with client(database) as agent:
        watched = await agent.call_tool(
            "watch", {"name": "leaders", "sql": "SELECT name, score FROM players ORDER BY score DESC"})
        assert watched.is_error is False
        async with agent.listen(
            resource_subscriptions=["sqlive://live/leaders", "sqlive://schema", "https://elsewhere/x"],
            resources_list_changed=True,
        ) as subscription:
            # What is honoured: sqlive's own resources, not another server's.
            assert sorted(subscription.honored.resource_subscriptions) == ["sqlive://live/leaders", "sqlive://schema"]
            assert subscription.honored.resources_list_changed is True

            sqlite3_shell(database, "INSERT INTO players(name, score) VALUES ('Cy', 30)")
            await next_event(subscription, ResourceUpdated, "sqlive://live/leaders")
            live = json.loads((await agent.read_resource("sqlive://live/leaders")).contents[0].text)
            assert live["rows"][0] == ["Cy", 30] and live["version"] >= 2

            # Python's sqlite3 at its defaults, too.
            db = sqlite3.connect(database)
            with db:
                db.execute("UPDATE players SET score = 1 WHERE name = 'Cy'")
            db.close()
            await next_event(subscription, ResourceUpdated, "sqlive://live/leaders")
            live = json.loads((await agent.read_resource("sqlive://live/leaders")).contents[0].text)
            assert live["rows"][-1] == ["Cy", 1]

            sqlite3_shell(database, "CREATE TABLE later(x)")
            await next_event(subscription, ResourceUpdated, "sqlive://schema")

            # A new live query changes the resource list.
            await agent.call_tool("watch", {"name": "count", "sql": "SELECT count(*) FROM players"})
            await next_event(subscription, ResourcesListChanged)


async def test_a_listen_ended_and_opened_again_sees_the_next_commit(database):
    async with client(database) as agent:
        await agent.call_tool("watch", {"name": "count", "sql": "SELECT count(*) AS n FROM players"})
        async with agent.listen(resource_subscriptions=["sqlive://live/count"]) as first:
            sqlite3_shell(database, "INSERT INTO players(name, score) VALUES ('Cy', 30)")
            await next_event(first, ResourceUpdated, "sqlive://live/count")
        # The first listen was cancelled by the client: commits meanwhile
        # are not lost to a new listen's read.
        sqlite3_shell(database, "INSERT INTO players(name, score) VALUES ('Di', 31)")
        async with agent.listen(resource_subscriptions=["sqlive://live/count"]) as second:
            assert second.subscription_id != first.subscription_id
            # Level-triggered: read where it stands, then wait for the next.
            deadline = time.monotonic() + TIMEOUT
            while json.loads((await agent.read_resource("sqlive://live/count")).contents[0].text)["rows"] != [[4]]:
                assert time.monotonic() < deadline
                await anyio.sleep(0.05)
            sqlite3_shell(database, "DELETE FROM players WHERE name = 'Di'")
            # Level-triggered: an update for the insert may still come first;
            # each one means "read again", until the delete shows.
            with anyio.fail_after(TIMEOUT):
                while True:
                    await next_event(second, ResourceUpdated, "sqlive://live/count")
                    live = json.loads((await agent.read_resource("sqlive://live/count")).contents[0].text)
                    if live["rows"] == [[3]]:
                        break
            assert live["rows"] == [[3]]
        # Two listens at once, each told.
        async with agent.listen(resource_subscriptions=["sqlive://live/count"]) as a:
            async with agent.listen(resource_subscriptions=["sqlive://live/count"]) as b:
                sqlite3_shell(database, "INSERT INTO players(name, score) VALUES ('Ed', 2)")
                await next_event(a, ResourceUpdated, "sqlive://live/count")
                await next_event(b, ResourceUpdated, "sqlive://live/count")


async def test_wait_in_the_2026_era(database):
    async with client(database) as agent:
        watched = await agent.call_tool("watch", {"name": "leaders", "sql": "SELECT name, score FROM players ORDER BY score DESC"})
        assert watched.structured_content["version"] == 1

        async def write_later():
            await anyio.sleep(0.3)
            sqlite3_shell(database, "INSERT INTO players(name, score) VALUES ('Cy', 30)")

        async with anyio.create_task_group() as group:
            group.start_soon(write_later)
            changed = await agent.call_tool("wait", {"name": "leaders", "afterVersion": 1, "timeoutMs": 20000})
        assert changed.is_error is False
        assert changed.structured_content["timedOut"] is False
        assert changed.structured_content["changes"]["added"] == [{"at": 0, "row": ["Cy", 30]}]
        # A wait the agent abandons is cancelled; the server goes on.
        with anyio.move_on_after(0.3):
            await agent.call_tool("wait", {"name": "leaders", "afterVersion": 2, "timeoutMs": 600000})
        assert (await agent.call_tool("query", {"sql": "SELECT 7"})).structured_content["rows"] == [[7]]


class Raw:
    """The real binary over real pipes, frame by frame."""

    def __init__(self, database: pathlib.Path):
        self.process = subprocess.Popen(
            [SQLIVE, "--mcp", str(database)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
            env={**os.environ, "SQLIVE_QUIET": "1"})

    def send(self, message: dict) -> None:
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def receive(self) -> dict:
        line = self.process.stdout.readline()
        assert line, "the server closed its output"
        return json.loads(line)

    def call(self, id, method: str, params: dict | None = None) -> dict:
        self.send({"jsonrpc": "2.0", "id": id, "method": method, **({"params": params} if params is not None else {})})
        while True:
            message = self.receive()
            if message.get("id") == id:
                return message

    def close(self) -> int:
        self.process.stdin.close()
        return self.process.wait(timeout=TIMEOUT)


def test_the_2026_envelope_is_checked_frame_by_frame(database):
    raw = Raw(database)
    try:
        discover = raw.call(1, "server/discover", {"_meta": ENVELOPE})["result"]
        assert discover["supportedVersions"] == [MODERN]
        assert discover["resultType"] == "complete" and discover["ttlMs"] == 0
        assert discover["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "sqlive"
        assert discover["capabilities"]["resources"]["subscribe"] is True

        listed = raw.call(2, "tools/list", {"_meta": ENVELOPE})["result"]
        assert listed["resultType"] == "complete" and listed["ttlMs"] == 0 and listed["cacheScope"] == "private"

        # The ladder: no envelope, a part missing, a version not spoken.
        assert raw.call(3, "tools/list", {})["error"]["code"] == -32602
        partial = {k: v for k, v in ENVELOPE.items() if "Capabilities" not in k}
        missing = raw.call(4, "tools/list", {"_meta": partial})["error"]
        assert missing["code"] == -32602 and "clientCapabilities" in missing["message"]
        future = raw.call(5, "tools/list", {"_meta": {**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}})
        assert future["error"]["code"] == -32022
        assert future["error"]["data"] == {"supported": [MODERN], "requested": "2099-01-01"}
        # The handshake era's methods are gone in this session.
        for id, method in [(6, "ping"), (7, "resources/subscribe"), (8, "logging/setLevel")]:
            assert raw.call(id, method, {"_meta": ENVELOPE, "uri": "sqlive://schema"})["error"]["code"] == -32601
        initialize = raw.call(9, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})["error"]
        assert initialize["code"] == -32022 and initialize["data"]["requested"] == "2025-11-25"
        # An unknown resource: -32602 in this era (-32002 is retired).
        unknown = raw.call(10, "resources/read", {"_meta": ENVELOPE, "uri": "sqlive://live/nobody"})
        assert unknown["error"]["code"] == -32602

        # A listen: its acknowledgement first, stamped with its id; its
        # events stamped too; a client's cancel gets no answer.
        raw.call(11, "tools/call", {"_meta": ENVELOPE, "name": "watch", "arguments": {"name": "n", "sql": "SELECT count(*) FROM players"}})
        raw.send({"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen",
                  "params": {"_meta": ENVELOPE, "notifications": {"resourceSubscriptions": ["sqlive://live/n"], "toolsListChanged": True}}})
        ack = raw.receive()
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": "listen-1"}
        assert ack["params"]["notifications"] == {"resourceSubscriptions": ["sqlive://live/n"]}
        sqlite3_shell(database, "INSERT INTO players(name, score) VALUES ('Cy', 30)")
        while True:
            event = raw.receive()
            if event.get("method") == "notifications/resources/updated":
                break
        assert event["params"] == {"uri": "sqlive://live/n", "_meta": {"io.modelcontextprotocol/subscriptionId": "listen-1"}}
        raw.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "listen-1"}})
        assert raw.call(12, "tools/call", {"_meta": ENVELOPE, "name": "query", "arguments": {"sql": "SELECT 5"}})["result"]["structuredContent"]["rows"] == [[5]]

        # The input ends with a listen open: it ends with its result, and the server exits at once.
        raw.send({"jsonrpc": "2.0", "id": "listen-2", "method": "subscriptions/listen",
                  "params": {"_meta": ENVELOPE, "notifications": {"resourcesListChanged": True}}})
        assert raw.receive()["method"] == "notifications/subscriptions/acknowledged"
        started = time.monotonic()
        raw.process.stdin.close()
        rest = [json.loads(line) for line in raw.process.stdout.read().splitlines()]
        assert raw.process.wait(timeout=TIMEOUT) == 0
        assert time.monotonic() - started < 10
        assert not [m for m in rest if m.get("id") == "listen-1"], "a cancelled listen was answered"
        ended = [m for m in rest if m.get("id") == "listen-2"]
        assert ended and ended[0]["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen-2"
        assert ended[0]["result"]["resultType"] == "complete"
    finally:
        raw.process.kill()


def test_a_handshake_session_refuses_2026_frames(database):
    raw = Raw(database)
    try:
        init = raw.call(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw"}})
        assert init["result"]["protocolVersion"] == "2025-11-25"
        raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert raw.call(2, "server/discover", {})["error"]["code"] == -32601
        assert raw.call(3, "tools/list", {"_meta": ENVELOPE})["error"]["code"] == -32600
        assert raw.call(4, "ping")["result"] == {}
        assert "resultType" not in raw.call(5, "tools/list", {})["result"]
        assert raw.close() == 0
    finally:
        raw.process.kill()
