"""sqlive --mcp, driven by the official MCP Python SDK (see conftest.py)."""

import json
import pathlib
import sqlite3
import subprocess
import time

import anyio
import mcp_types as types
import pytest

from bypass_attempts import ATTEMPTS, READS
from conftest import TIMEOUT, fingerprint, make_database, serve


def text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def test_handshake_negotiates_2025_11_25_and_lists_the_tools(database):
    async with serve(database) as server:
        init = server.initialize_result
        assert init.protocol_version == "2025-11-25"
        assert init.server_info.name == "sqlive"
        assert init.capabilities.resources.subscribe is True
        assert init.capabilities.resources.list_changed is True
        assert "read-only" in init.instructions
        tools = {tool.name: tool for tool in (await server.session.list_tools()).tools}
        assert set(tools) == {"query", "explain", "schema", "watch", "unwatch", "wait", "changes"}
        for tool in tools.values():
            assert tool.input_schema["type"] == "object"
            assert tool.output_schema["type"] == "object"
        assert tools["query"].annotations.read_only_hint is True
        assert tools["query"].input_schema["required"] == ["sql"]


async def test_query_returns_rows_checked_against_its_output_schema(database):
    async with serve(database) as server:
        result = await server.call("query", {"sql": "SELECT name, score, photo FROM players ORDER BY id"})
        assert result.is_error is False
        # The SDK validated structuredContent against the tool's outputSchema.
        content = result.structured_content
        assert content["columns"] == ["name", "score", "photo"]
        assert content["rows"] == [["Ann", 12, {"$blob": "AP8="}], ["Bob", 7, None]]
        assert content["truncated"] is False and content["rowCount"] == 2
        assert json.loads(text(result)) == content

        positional = await server.call("query", {"sql": "SELECT name FROM players WHERE score > ?", "params": [10]})
        assert positional.structured_content["rows"] == [["Ann"]]
        named = await server.call("query", {"sql": "SELECT name FROM players WHERE name = :n", "params": {"n": "Bob"}})
        assert named.structured_content["rows"] == [["Bob"]]


@pytest.mark.parametrize("what,sql", READS, ids=[what for what, _ in READS])
async def test_reads_that_prefix_checks_refuse_work(database, what, sql):
    async with serve(database) as server:
        result = await server.call("query", {"sql": sql})
        assert result.is_error is False, text(result)
        assert result.structured_content["rowCount"] > 0


@pytest.mark.parametrize("journal_mode", ["delete", "wal"])
async def test_every_bypass_attempt_is_refused_and_the_file_is_unchanged(tmp_path, journal_mode):
    database = tmp_path / "games.sqlite"
    make_database(database, journal_mode)
    before = fingerprint(tmp_path, database)
    async with serve(database) as server:
        after_start = fingerprint(tmp_path, database)
        # In WAL mode a reader creates the -wal and -shm files, as SQLite's own do.
        assert after_start[0] == before[0]
        for what, sql in ATTEMPTS:
            result = await server.call("query", {"sql": sql})
            assert result.is_error is True, f"{what}: {sql} ran: {text(result)}"
            assert fingerprint(tmp_path, database) == after_start, f"{what}: {sql} changed the files"
            # The watch tool runs SQL too: the same refusals.
            watched = await server.call("watch", {"name": "w", "sql": sql})
            assert watched.is_error is True, f"watch {what}: {sql} was accepted"
        # And it still serves.
        result = await server.call("query", {"sql": "SELECT count(*) FROM players"})
        assert result.structured_content["rows"] == [[2]]
    assert fingerprint(tmp_path, database)[0] == before[0]


async def test_errors_are_tool_results_with_sqlites_message(database):
    async with serve(database) as server:
        result = await server.call("query", {"sql": "SELECT nope FROM players"})
        assert result.is_error is True
        assert "no such column: nope" in text(result)
        assert result.structured_content["error"]["sqliteCode"] == 1

        syntax = await server.call("query", {"sql": "SELECT * FORM players"})
        assert syntax.is_error is True
        assert 'near "FORM": syntax error' in text(syntax)
        assert syntax.structured_content["error"]["offset"] == 9

        attach = await server.call("query", {"sql": "ATTACH 'x.sqlite' AS x"})
        assert "not authorized" in text(attach)

        write = await server.call("query", {"sql": "DELETE FROM players"})
        assert "read-only" in text(write) and "--allow-writes" in text(write)

        two = await server.call("query", {"sql": "SELECT 1; SELECT 2"})
        assert "one per call" in text(two)

        missing = await server.call("query", {})
        assert missing.is_error is True and "sql" in text(missing)

        with pytest.raises(Exception, match="Unknown tool"):
            await server.call("drop_everything", {})
        # Still serving.
        assert (await server.call("query", {"sql": "SELECT 1"})).structured_content["rows"] == [[1]]


async def test_explain_gives_the_plan_hints_and_index_advice(database):
    async with serve(database) as server:
        result = await server.call("explain", {"sql": "SELECT * FROM players WHERE score > 10", "advise": True})
        assert result.is_error is False, text(result)
        content = result.structured_content
        assert any("SCAN players" in node["detail"] for node in content["plan"])
        assert any("players" in hint for hint in content["hints"])
        assert any("ON players(score)" in advice["sql"] for advice in content["advice"])
        # EXPLAIN never runs the statement: explaining a write is fine.
        write = await server.call("explain", {"sql": "DELETE FROM players WHERE score < 5"})
        assert write.is_error is False


async def test_schema_tool_and_resource(database):
    async with serve(database) as server:
        result = await server.call("schema")
        content = result.structured_content
        assert [t["name"] for t in content["tables"]] == ["games", "players"]
        assert [v["name"] for v in content["views"]] == ["leaders"]
        assert [i["name"] for i in content["indexes"]] == ["games_player"]
        players = next(t for t in content["tables"] if t["name"] == "players")
        assert [c["name"] for c in players["columns"]] == ["id", "name", "score", "photo"]
        resource = await server.session.read_resource("sqlive://schema")
        assert json.loads(resource.contents[0].text) == content


async def test_a_subscription_sees_another_process_commit(database):
    async with serve(database) as server:
        watched = await server.call("watch", {"name": "leaders", "sql": "SELECT name, score FROM players ORDER BY score DESC"})
        assert watched.is_error is False, text(watched)
        assert watched.structured_content["uri"] == "sqlive://live/leaders"
        assert watched.structured_content["rows"] == [["Ann", 12], ["Bob", 7]]
        await server.wait_for(server.list_changed)
        uris = [str(r.uri) for r in (await server.session.list_resources()).resources]
        assert uris == ["sqlive://schema", "sqlive://live/leaders"]

        await server.session.subscribe_resource("sqlive://live/leaders")
        # The sqlite3 shell, at its defaults (no busy timeout): its commit
        # must succeed, and reach the subscriber.
        subprocess.run(
            ["sqlite3", str(database), "INSERT INTO players(name, score) VALUES ('Cy', 30)"], check=True, timeout=TIMEOUT)
        await server.wait_for(server.updated("sqlive://live/leaders"))
        read = await server.session.read_resource("sqlive://live/leaders")
        live = json.loads(read.contents[0].text)
        assert live["rows"][0] == ["Cy", 30]
        assert live["version"] >= 2

        # Python's sqlite3 at its defaults, too.
        db = sqlite3.connect(database)
        with db:
            db.execute("UPDATE players SET score = 1 WHERE name = 'Cy'")
        db.close()
        await server.wait_for(server.updated("sqlive://live/leaders"))
        read = await server.session.read_resource("sqlive://live/leaders")
        assert json.loads(read.contents[0].text)["rows"][-1] == ["Cy", 1]

        # A schema change reaches a subscriber of the schema.
        await server.session.subscribe_resource("sqlive://schema")
        subprocess.run(["sqlite3", str(database), "CREATE TABLE later(x)"], check=True, timeout=TIMEOUT)
        await server.wait_for(server.updated("sqlive://schema"))

        # Unwatched: the resource is gone.
        assert (await server.call("unwatch", {"name": "leaders"})).is_error is False
        await server.wait_for(server.list_changed)
        with pytest.raises(Exception, match="Resource not found"):
            await server.session.read_resource("sqlive://live/leaders")
        assert (await server.call("unwatch", {"name": "leaders"})).is_error is True


async def test_changes_tells_what_another_process_wrote(tmp_path):
    # A WAL database (rows are read from the commits' pages in the log).
    database = tmp_path / "wal.sqlite"
    make_database(database, journal_mode="wal")
    async with serve(database) as server:
        first = await server.call("changes")
        assert first.is_error is False, text(first)
        assert first.structured_content["commits"] == []
        assert "note" in first.structured_content
        last = first.structured_content["last"]
        # The app writes, at its defaults: the sqlite3 shell, then Python's sqlite3.
        subprocess.run(
            ["sqlite3", str(database), "INSERT INTO players(name, score) VALUES ('Cy', 30); UPDATE players SET score = 13 WHERE name = 'Ann'"],
            check=True, timeout=TIMEOUT)
        db = sqlite3.connect(database)
        with db:
            db.execute("DELETE FROM games WHERE title = 'Chess'")
        db.close()
        rows = []
        deadline = time.monotonic() + TIMEOUT
        while len(rows) < 3 and time.monotonic() < deadline:
            result = await server.call("changes", {"after": last})
            assert result.is_error is False, text(result)
            for commit in result.structured_content["commits"]:
                rows += commit["rows"]
            last = result.structured_content["last"]
            await anyio.sleep(0.05)
        assert [(r["table"], r["op"]) for r in rows] == [("players", "insert"), ("players", "update"), ("games", "delete")]
        assert rows[0]["key"] == {"rowid": 3} and rows[0]["new"]["name"] == "Cy"
        assert rows[1]["old"]["score"] == 12 and rows[1]["new"]["score"] == 13
        assert rows[2]["old"]["title"] == "Chess" and rows[2]["new"] is None
        # Only the tables asked for, and nothing new since `last`.
        again = await server.call("changes", {"after": last, "tables": ["players"]})
        assert again.structured_content["commits"] == []


async def test_wait_returns_at_the_next_change_with_what_changed(database):
    async with serve(database) as server:
        watched = await server.call("watch", {"name": "leaders", "sql": "SELECT name, score FROM players ORDER BY score DESC"})
        assert watched.structured_content["version"] == 1
        # Nothing changes: a clear time-out, the rows as they are.
        quiet = await server.call("wait", {"name": "leaders", "timeoutMs": 300})
        assert quiet.is_error is False, text(quiet)
        assert quiet.structured_content["timedOut"] is True
        assert quiet.structured_content["version"] == 1

        # Another process writes while the agent waits (the sqlite3 shell at its defaults).
        async def write_later():
            await anyio.sleep(0.3)
            subprocess.run(
                ["sqlite3", str(database), "INSERT INTO players(name, score) VALUES ('Cy', 30)"], check=True, timeout=TIMEOUT)

        async with anyio.create_task_group() as group:
            group.start_soon(write_later)
            started = time.monotonic()
            changed = await server.call("wait", {"name": "leaders", "timeoutMs": 20000})
        assert changed.is_error is False, text(changed)
        result = changed.structured_content
        assert result["timedOut"] is False and result["version"] == 2
        assert result["rows"][0] == ["Cy", 30]
        assert result["changes"]["added"] == [{"at": 0, "row": ["Cy", 30]}]
        assert result["changes"]["removed"] == [] and result["changes"]["changed"] == []
        assert time.monotonic() - started < 15

        # A version the agent has not seen yet is returned at once.
        subprocess.run(["sqlite3", str(database), "UPDATE players SET score = 1 WHERE name = 'Cy'"], check=True, timeout=TIMEOUT)
        await anyio.sleep(0.5)
        again = await server.call("wait", {"name": "leaders", "afterVersion": 2, "timeoutMs": 20000})
        assert again.structured_content["version"] >= 3
        assert again.structured_content["rows"][-1] == ["Cy", 1]

        # A wait cancelled by the client ends; the server goes on.
        with anyio.move_on_after(0.3):
            await server.session.call_tool("wait", {"name": "leaders", "timeoutMs": 600000})
        assert (await server.call("query", {"sql": "SELECT 7"})).structured_content["rows"] == [[7]]
        # It gave its place back: four waits at once (the most) are all taken.
        await anyio.sleep(0.3)
        outcomes = []
        async with anyio.create_task_group() as group:
            for _ in range(4):
                async def short():
                    outcomes.append(await server.call("wait", {"name": "leaders", "timeoutMs": 300}))
                group.start_soon(short)
        assert [o.is_error for o in outcomes] == [False] * 4, [text(o) for o in outcomes]
        unknown = await server.call("wait", {"name": "nobody"})
        assert unknown.is_error is True and "watch" in text(unknown)


async def test_subscribing_to_an_unknown_resource_is_an_error(database):
    async with serve(database) as server:
        with pytest.raises(Exception, match="Resource not found"):
            await server.session.subscribe_resource("sqlive://live/nothing")


async def test_row_cap_and_size_cap(database):
    async with serve(database, "--max-rows", "100", "--max-bytes", "20000") as server:
        many = await server.call(
            "query", {"sql": "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 5000) SELECT i FROM n"})
        assert many.structured_content["rowCount"] == 100
        assert many.structured_content["truncated"] is True
        assert many.structured_content["truncatedBy"] == "rows"
        fewer = await server.call("query", {"sql": "SELECT * FROM players", "maxRows": 1})
        assert fewer.structured_content["rowCount"] == 1 and fewer.structured_content["truncated"] is True
        # maxRows cannot raise the cap.
        more = await server.call(
            "query",
            {"sql": "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 5000) SELECT i FROM n",
             "maxRows": 100})
        assert more.structured_content["rowCount"] == 100
        heavy = await server.call(
            "query", {"sql": "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 90) "
                             "SELECT printf('%.1000c', 'x') FROM n"})
        assert heavy.structured_content["truncatedBy"] == "bytes"
        assert heavy.structured_content["rowCount"] == 20
        huge = await server.call("query", {"sql": "SELECT zeroblob(1000000)"})
        assert huge.is_error is True and "size cap" in text(huge)
        # A live query's resource is cut the same way.
        await server.call(
            "watch", {"name": "many", "sql": "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
                                               "LIMIT 5000) SELECT i FROM n"})
        many_live = json.loads((await server.session.read_resource("sqlive://live/many")).contents[0].text)
        assert (many_live["rowCount"], many_live["truncatedBy"]) == (100, "rows")
        assert many_live["total"] == 5000  # honest: how many rows there really are
        await server.call(
            "watch", {"name": "heavy", "sql": "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
                                                "LIMIT 90) SELECT printf('%.1000c', 'x') FROM n"})
        heavy_live = json.loads((await server.session.read_resource("sqlive://live/heavy")).contents[0].text)
        assert (heavy_live["rowCount"], heavy_live["truncatedBy"]) == (20, "bytes")


async def test_a_runaway_statement_ends_at_the_time_limit_and_the_server_goes_on(database):
    async with serve(database, "--time-limit", "1") as server:
        runaway = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"
        result = await server.call("query", {"sql": runaway})
        assert result.is_error is True
        assert "time limit" in text(result)
        watched = await server.call("watch", {"name": "forever", "sql": runaway})
        assert watched.is_error is True and "time limit" in text(watched)
        assert (await server.call("query", {"sql": "SELECT 1"})).structured_content["rows"] == [[1]]


async def test_cancelling_a_call_interrupts_its_statement(database):
    # With a time limit of 10 minutes, only the cancellation can end the
    # statement before the next call's hang time-out.
    async with serve(database, "--time-limit", "600") as server:
        runaway = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"
        with anyio.move_on_after(0.5):
            await server.session.call_tool("query", {"sql": runaway})
        result = await server.call("query", {"sql": "SELECT 42"})
        assert result.structured_content["rows"] == [[42]]


async def test_a_runaway_statement_holds_back_none_of_the_agents_other_calls(database):
    # The runaway may run for 10 minutes: every other call must be answered
    # while it runs (the hang time-out is 30 s), then cancelling it ends it.
    async with serve(database, "--time-limit", "600") as server:
        runaway = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"
        started = anyio.Event()
        outcome = {}
        async with anyio.create_task_group() as group:
            async def run_away():
                started.set()
                with anyio.move_on_after(TIMEOUT) as scope:
                    await server.session.call_tool("query", {"sql": runaway})
                outcome["cancelled"] = scope.cancelled_caught

            group.start_soon(run_away)
            await started.wait()
            await anyio.sleep(0.3)
            assert (await server.call("query", {"sql": "SELECT 1"})).structured_content["rows"] == [[1]]
            plan = await server.call("explain", {"sql": "SELECT * FROM players WHERE score > 10"})
            assert plan.is_error is False
            assert (await server.call("schema")).is_error is False
            assert (await server.call("query", {"sql": "SELECT count(*) FROM players"})).is_error is False
            # Still running: only now is it cancelled.
            assert "cancelled" not in outcome
            group.cancel_scope.cancel()
        result = await server.call("query", {"sql": "SELECT 42"})
        assert result.structured_content["rows"] == [[42]]


async def test_allow_writes_lets_the_agent_write_and_its_live_queries_follow(database):
    async with serve(database, "--allow-writes") as server:
        assert "writable" in server.initialize_result.instructions
        tools = {tool.name: tool for tool in (await server.session.list_tools()).tools}
        assert tools["query"].annotations.read_only_hint is False
        await server.call("watch", {"name": "count", "sql": "SELECT count(*) FROM players"})
        await server.session.subscribe_resource("sqlive://live/count")
        insert = await server.call("query", {"sql": "INSERT INTO players(name, score) VALUES ('Dee', 3)"})
        assert insert.is_error is False, text(insert)
        assert insert.structured_content["changes"] == 1
        await server.wait_for(server.updated("sqlive://live/count"))
        read = await server.session.read_resource("sqlive://live/count")
        assert json.loads(read.contents[0].text)["rows"] == [[3]]
        # Still refused with writes allowed: other files, settings, extensions.
        for sql in ["ATTACH 'x.sqlite' AS x", "VACUUM INTO 'copy.sqlite'", "PRAGMA journal_mode = WAL",
                    "SELECT load_extension('libc.so.6')", "SELECT 1; DELETE FROM players"]:
            result = await server.call("query", {"sql": sql})
            assert result.is_error is True, sql
    assert not (database.parent / "x.sqlite").exists()
    assert not (database.parent / "copy.sqlite").exists()


async def test_a_missing_database_is_told_to_every_call(tmp_path):
    async with serve(tmp_path / "missing.sqlite") as server:
        result = await server.call("query", {"sql": "SELECT 1"})
        assert result.is_error is True
        assert "missing.sqlite" in text(result)
    assert not (tmp_path / "missing.sqlite").exists()


def test_malformed_lines_get_errors_and_the_server_goes_on(database):
    """Raw lines on the pipe, as a broken client would write them."""
    import os
    from conftest import SQLIVE

    lines = [
        "this is not json",
        json.dumps([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]),  # batches left MCP in 2025-06-18
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "no/such/method"}),
        json.dumps({"jsonrpc": "1.0", "id": 3, "method": "ping"}),
        json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "query", "arguments": "x"}}),
        json.dumps({"jsonrpc": "2.0", "id": 5, "method": "resources/read", "params": {}}),
        "",
        json.dumps({"jsonrpc": "2.0", "id": 6, "method": "ping"}),
    ]
    result = subprocess.run(
        [SQLIVE, "--mcp", str(database)], input="\n".join(lines) + "\n", capture_output=True, text=True,
        timeout=TIMEOUT, env={**os.environ, "SQLIVE_QUIET": "1"})
    assert result.returncode == 0
    replies = [json.loads(line) for line in result.stdout.splitlines()]
    by_id = {reply.get("id"): reply for reply in replies}
    errors = [reply["error"]["code"] for reply in replies if reply.get("id") is None]
    assert -32700 in errors  # not JSON
    assert -32600 in errors  # a batch
    assert by_id[2]["error"]["code"] == -32601
    assert by_id[3]["error"]["code"] == -32600
    assert by_id[4]["result"]["isError"] is True
    assert by_id[5]["error"]["code"] == -32602
    assert by_id[6]["result"] == {}
