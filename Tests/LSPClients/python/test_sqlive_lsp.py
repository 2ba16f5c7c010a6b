"""sqlive's language server as Neovim, Emacs (eglot) and VS Code see it.

Each test runs once per client (see conftest.py), against a server and a
database of its own: `players(id INTEGER PRIMARY KEY, name TEXT NOT NULL,
score INT)` holding Ann (12) and Bob (7), `games(id, title, playerID)`, and
the view `leaders`. The assertions are what a user of the editor would check.
"""

import asyncio

import attrs
import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from conftest import TIMEOUT, Editor, another_process

COMMANDS = ["sqlive.run", "sqlive.watch", "sqlive.unwatch", "sqlive.explain"]
SQLIVE_CAPABILITIES = {
    "protocolVersion",
    "methods",
    "notifications",
    "clientNotifications",
    "defaultMaxRows",
    "maximumMessageLength",
    "liveQueryDiff",
}


def camel_case(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(part.title() for part in rest)


def spans(diagnostics):
    return [(d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character) for d in diagnostics]


def by_position(diagnostics):
    return sorted(diagnostics, key=lambda d: (d.range.start.line, d.range.start.character))


def sorted_items(items):
    return sorted(items, key=lambda item: (item.sort_text or item.label, item.label))


def markdown_table(markdown: str):
    """The header and rows of the first Markdown table in a text."""
    lines = [line.strip() for line in markdown.splitlines() if line.strip().startswith("|")]
    assert len(lines) >= 2, f"no table in {markdown!r}"
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]
    header, rows = cells[0], [row for row in cells[1:] if not all(set(c) <= set("-: ") for c in row)]
    return header, rows


async def until(predicate, description: str):
    async def wait():
        while not predicate():
            await asyncio.sleep(0.02)

    try:
        await asyncio.wait_for(wait(), TIMEOUT)
    except asyncio.TimeoutError:
        raise AssertionError(f"waited {TIMEOUT} s for {description}") from None


# initialize


async def test_initialize_answers_the_capabilities_of_the_spec(client, editor: Editor):
    capabilities = client.sqlive_init.capabilities
    assert client.sqlive_init.server_info.name == "sqlive"

    sync = capabilities.text_document_sync
    assert isinstance(sync, types.TextDocumentSyncOptions), sync
    assert sync.open_close is True
    assert sync.change == types.TextDocumentSyncKind.Incremental

    assert list(capabilities.completion_provider.trigger_characters) == ["."]
    assert not capabilities.completion_provider.resolve_provider
    assert capabilities.hover_provider is True
    assert isinstance(capabilities.code_lens_provider, types.CodeLensOptions)
    assert not capabilities.code_lens_provider.resolve_provider
    assert sorted(capabilities.execute_command_provider.commands) == sorted(COMMANDS)
    assert capabilities.execute_command_provider.work_done_progress is True

    # UTF-8 when the client offers it (Emacs 29 does), else UTF-16, the default.
    general = client.capabilities.general
    offered = list(general.position_encodings or []) if general else []
    expected = types.PositionEncodingKind.Utf8 if "utf-8" in offered else types.PositionEncodingKind.Utf16
    assert capabilities.position_encoding == expected

    # As sent: sqlive's own capabilities only under experimental.sqlive, so
    # that a strict client sees nothing but standard members.
    answer = next(m for m in client.raw_messages if "capabilities" in (m.get("result") or {}))
    sent = answer["result"]["capabilities"]
    standard = {camel_case(field.name) for field in attrs.fields(types.ServerCapabilities)}
    assert set(sent) <= standard, f"non-standard members: {sorted(set(sent) - standard)}"
    sqlive = sent["experimental"]["sqlive"]
    assert SQLIVE_CAPABILITIES <= set(sqlive), sqlive
    assert "query/execute" in sqlive["methods"]
    assert "liveQuery/register" in sqlive["methods"]
    assert "liveQuery/changed" in sqlive["notifications"]


async def test_sqlive_methods_stay_available_beside_the_lsp(client, editor: Editor):
    result = await editor.sqlive("query/execute", {"sql": "SELECT name FROM players ORDER BY score DESC"})
    assert result["results"][0]["columns"] == ["name"]
    assert result["results"][0]["rows"] == [["Ann"], ["Bob"]]


async def test_unknown_dollar_requests_are_method_not_found(client, editor: Editor):
    # An unknown $/ notification is ignored; an unknown $/ request is -32601.
    client.protocol.notify("$/sqliveTestsUnknown", {})
    with pytest.raises(JsonRpcException) as error:
        await editor.sqlive("$/sqliveTestsUnknown", {})
    assert error.value.code == -32601
    # And the session goes on.
    result = await editor.sqlive("query/execute", {"sql": "SELECT 1 AS one"})
    assert result["results"][0]["rows"] == [[1]]


# Diagnostics


async def test_a_missing_table_is_one_error_on_its_name(client, editor: Editor):
    uri = editor.open("missing.sql", "SELECT * FROM missing;")
    diagnostics = await editor.diagnostics_until(uri, lambda d: len(d) > 0, "an error on `missing`")
    assert len(diagnostics) == 1, diagnostics
    [error] = diagnostics
    assert error.message == "no such table: missing"
    assert error.severity == types.DiagnosticSeverity.Error
    assert error.source == "sqlite"
    assert error.code == "SQLITE_ERROR"
    assert spans(diagnostics) == [(0, 14, 0, 21)]
    assert editor.covered(uri, error.range) == "missing"
    # As sent: for the version the client opened.
    assert editor.raw_publications(uri)[-1]["version"] == 1


async def test_columns_count_in_the_negotiated_encoding(client, editor: Editor):
    uri = editor.open("q.sql", "SELECT 'héllo😀' AS x FROM nope;\nSELECT nam FROM players;")
    diagnostics = by_position(await editor.diagnostics_until(uri, lambda d: len(d) >= 2, "two errors"))
    assert [d.message for d in diagnostics] == ["no such table: nope", "no such column: nam"]
    assert all(d.severity == types.DiagnosticSeverity.Error for d in diagnostics)
    # "nope" starts at UTF-16 unit 27 (é is one unit, the emoji two), or at
    # UTF-8 byte 30 (é is two bytes, the emoji four) for a client that chose UTF-8.
    start = 30 if editor.encoding == types.PositionEncodingKind.Utf8 else 27
    assert spans(diagnostics) == [(0, start, 0, start + 4), (1, 7, 1, 10)]


async def test_several_errors_each_on_its_own_line(client, editor: Editor):
    text = (
        "SELECT * FROM nope1;\n"  # 0
        "SELECT name FROM players;\n"  # 1: fine
        "SELECT nam FROM players;\n"  # 2
        "\n"  # 3
        "SELECT id,\n"  # 4: a statement over three lines,
        "       nme\n"  # 5: its error on the second
        "FROM players;\n"  # 6
        "SELECT count(*) FROM games JOIN nope2 ON 1;\n"  # 7
        "SELECT * FROM players WHERE scor > 1;\n"  # 8
    )
    uri = editor.open("several.sql", text)
    diagnostics = by_position(await editor.diagnostics_until(uri, lambda d: len(d) >= 5, "five errors"))
    assert [(d.range.start.line, d.range.end.line, editor.covered(uri, d.range), d.message) for d in diagnostics] == [
        (0, 0, "nope1", "no such table: nope1"),
        (2, 2, "nam", "no such column: nam"),
        (5, 5, "nme", "no such column: nme"),
        (7, 7, "nope2", "no such table: nope2"),
        (8, 8, "scor", "no such column: scor"),
    ]
    assert all(d.severity == types.DiagnosticSeverity.Error for d in diagnostics)


async def test_a_double_quoted_string_is_a_warning(client, editor: Editor):
    uri = editor.open("quoted.sql", 'SELECT "nope" FROM players;\nSELECT "name" FROM players;')
    diagnostics = await editor.diagnostics_until(uri, lambda d: len(d) > 0, "a warning on \"nope\"")
    assert [(d.range.start.line, editor.covered(uri, d.range), d.severity) for d in diagnostics] == [
        (0, '"nope"', types.DiagnosticSeverity.Warning)
    ]


async def test_a_trigger_is_one_statement(client, editor: Editor):
    text = (
        "CREATE TRIGGER scored AFTER INSERT ON players BEGIN\n"  # 0
        "  UPDATE games SET title = 'new' WHERE playerID = new.id;\n"  # 1
        "  DELETE FROM games WHERE playerID IS NULL;\n"  # 2
        "END;\n"  # 3
        "SELECT * FROM players;\n"  # 4
    )
    uri = editor.open("trigger.sql", text)
    assert await editor.diagnostics_until(uri, lambda d: True, "a publication") == []
    runs = [lens.range.start.line for lens in await editor.code_lenses(uri) if lens.command.command == "sqlive.run"]
    assert sorted(runs) == [0, 4]


async def test_a_migration_is_not_flagged(client, editor: Editor):
    uri = editor.open("migration.sql", "CREATE TABLE t(a);\nINSERT INTO t VALUES (1);\nSELECT a FROM t;\n")
    assert await editor.diagnostics_until(uri, lambda d: True, "a publication") == []
    # Prepared, never run: the database has no table t.
    result = await editor.sqlive("query/execute", {"sql": "SELECT count(*) FROM sqlite_schema WHERE name = 't'"})
    assert result["results"][0]["rows"] == [[0]]


async def test_another_process_creating_the_table_clears_the_error(client, editor: Editor):
    uri = editor.open("later.sql", "SELECT * FROM later;")
    await editor.diagnostics_until(uri, lambda d: len(d) == 1, "an error on `later`")
    another_process(editor.database, "CREATE TABLE later(x);")
    # No edit by the client: the server sees the schema change by itself.
    cleared = await editor.diagnostics_until(uri, lambda d: len(d) == 0, "the error cleared by the new table")
    assert cleared == []
    assert editor.raw_publications(uri)[-1]["version"] == 1


async def test_incremental_changes_fix_and_make_errors(client, editor: Editor):
    uri = editor.open("edit.sql", "SELECT 'é😀' AS x FROM playrs;")
    [error] = await editor.diagnostics_until(uri, lambda d: len(d) == 1, "an error on `playrs`")
    assert error.message == "no such table: playrs"

    # Insert "e" into "playrs", at a position counted in the negotiated
    # encoding: a server counting otherwise edits the wrong place.
    at = editor.position_of(uri, "rs;")
    editor.replace(uri, at, at, "e", text_after="SELECT 'é😀' AS x FROM players;")
    assert await editor.diagnostics_until(uri, lambda d: len(d) == 0, "the fix to clear the error") == []
    assert editor.raw_publications(uri)[-1]["version"] == 2

    # Replace a range: "players" becomes "gone".
    start = editor.position_of(uri, "players")
    end = editor.position_of(uri, "players", offset=len("players"))
    editor.replace(uri, start, end, "gone", text_after="SELECT 'é😀' AS x FROM gone;")
    [error] = await editor.diagnostics_until(uri, lambda d: len(d) == 1, "an error on `gone`")
    assert error.message == "no such table: gone"
    assert spans([error]) == [editor.range_of(uri, "gone")]
    assert editor.raw_publications(uri)[-1]["version"] == 3


async def test_closing_a_document_clears_its_diagnostics(client, editor: Editor):
    uri = editor.open("close.sql", "SELECT * FROM missing;")
    await editor.diagnostics_until(uri, lambda d: len(d) == 1, "an error on `missing`")
    editor.close(uri)
    assert await editor.diagnostics_until(uri, lambda d: len(d) == 0, "an empty list on close") == []


async def test_a_document_names_its_own_database(client, editor: Editor):
    another_process(editor.directory / "other.sqlite", "CREATE TABLE elsewhere(x);")
    text = "-- sqlive: database=other.sqlite\nSELECT x FROM elsewhere;\nSELECT * FROM players;\n"
    uri = editor.open("other.sql", text)
    diagnostics = await editor.diagnostics_until(uri, lambda d: len(d) > 0, "an error on `players`")
    assert [(d.range.start.line, editor.covered(uri, d.range), d.message) for d in diagnostics] == [
        (2, "players", "no such table: players")
    ]
    # Run acts on the session's database: not this document's, until opened.
    with pytest.raises(JsonRpcException) as error:
        await editor.execute("sqlive.run", [{"uri": uri, "position": {"line": 1, "character": 0}}])
    assert error.value.code == -32010


async def test_a_document_without_a_database_is_told_how_to_give_it_one(bare_client, bare_editor: Editor):
    uri = bare_editor.open("alone.sql", "SELECT 1;\nSELECT * FROM nope;\n")
    diagnostics = await bare_editor.diagnostics_until(uri, lambda d: len(d) > 0, "a diagnostic")
    assert len(diagnostics) == 1, diagnostics
    [told] = diagnostics
    assert told.severity == types.DiagnosticSeverity.Information, f"checked against some database: {diagnostics}"
    assert told.range.start.line == 0
    assert "database" in told.message.lower()
    # The failed open is answered as a failed command-line open would be.
    with pytest.raises(JsonRpcException) as error:
        await bare_editor.sqlive("query/execute", {"sql": "SELECT 1"})
    assert error.value.code == -32010

    # Its first line gives it one, relative to the document's directory.
    uri = bare_editor.open("named.sql", "-- sqlive: database=games.sqlite\nSELECT * FROM nope;\n")
    diagnostics = await bare_editor.diagnostics_until(uri, lambda d: len(d) > 0, "an error on `nope`")
    assert [(d.range.start.line, bare_editor.covered(uri, d.range), d.message, d.severity) for d in diagnostics] == [
        (1, "nope", "no such table: nope", types.DiagnosticSeverity.Error)
    ]


# Completion


async def test_completion_after_an_alias_and_a_dot_gives_its_columns(client, editor: Editor):
    uri = editor.open("complete.sql", "SELECT p. FROM players AS p;")
    items = await editor.completion(uri, types.Position(line=0, character=9))
    assert [item.label for item in sorted_items(items)] == ["id", "name", "score"]
    assert all(item.kind == types.CompletionItemKind.Field for item in items)
    details = {item.label: item.detail for item in items}
    assert "INTEGER" in details["id"]
    assert "TEXT" in details["name"]
    assert "INT" in details["score"]


async def test_completion_after_from_gives_the_tables_and_views(client, editor: Editor):
    uri = editor.open("from.sql", "SELECT * FROM \nSELECT * FROM Pl")
    items = await editor.completion(uri, types.Position(line=0, character=14))
    assert {item.label: (item.kind, item.detail) for item in items} == {
        "games": (types.CompletionItemKind.Class, "table"),
        "players": (types.CompletionItemKind.Class, "table"),
        "leaders": (types.CompletionItemKind.Class, "view"),
    }
    # Filtered by the word before the cursor, whatever its case.
    items = await editor.completion(uri, types.Position(line=1, character=16))
    assert [item.label for item in items] == ["players"]


async def test_completion_knows_the_statements_ctes(client, editor: Editor):
    uri = editor.open("cte.sql", "WITH top(who) AS (SELECT name FROM players) SELECT t. FROM top AS t JOIN ")
    at_join = editor.position_of(uri, "JOIN ", offset=len("JOIN "))
    assert "top" in {item.label for item in await editor.completion(uri, at_join)}
    items = await editor.completion(uri, editor.position_of(uri, "t. ", offset=2))
    assert [item.label for item in items] == ["who"]


async def test_completion_in_a_statement_gives_columns_first(client, editor: Editor):
    uri = editor.open("anywhere.sql", "SELECT  FROM players;\nSELECT sc FROM players;")
    items = sorted_items(await editor.completion(uri, types.Position(line=0, character=7)))
    assert [item.label for item in items[:3]] == ["id", "name", "score"]
    assert all(item.kind == types.CompletionItemKind.Field for item in items[:3])
    kinds = {item.label.lower(): item.kind for item in items}
    assert kinds.get("count") == types.CompletionItemKind.Function
    assert kinds.get("where") == types.CompletionItemKind.Keyword

    items = sorted_items(await editor.completion(uri, types.Position(line=1, character=9)))
    assert items and items[0].label == "score"
    assert all("sc" in item.label.lower() for item in items), [item.label for item in items]


# Hover


async def test_hover_on_a_table_an_alias_and_a_column(client, editor: Editor):
    uri = editor.open("hover.sql", "SELECT name FROM players AS p WHERE p.score > 3;")
    table = await editor.hover(uri, editor.position_of(uri, "players", offset=3))
    assert table.contents.kind == types.MarkupKind.Markdown
    # A Markdown table: a row per column, with its type, key and NOT NULL.
    header, rows = markdown_table(table.contents.value)
    assert [row[:2] for row in rows] == [["id", "INTEGER"], ["name", "TEXT"], ["score", "INT"]], table.contents.value
    key = next(i for i, title in enumerate(header) if "key" in title.lower())
    not_null = next(i for i, title in enumerate(header) if "not null" in title.lower())
    assert [bool(row[key]) for row in rows] == [True, False, False], table.contents.value
    assert [bool(row[not_null]) for row in rows] == [False, True, False], table.contents.value
    assert table.range is not None and spans([table]) == [editor.range_of(uri, "players")]

    alias = await editor.hover(uri, editor.position_of(uri, "p.score"))
    assert alias.contents.kind == types.MarkupKind.Markdown
    assert "score" in alias.contents.value and "INTEGER" in alias.contents.value

    column = await editor.hover(uri, editor.position_of(uri, "score", offset=2))
    assert "players" in column.contents.value
    assert "INT" in column.contents.value


async def test_hover_on_a_keyword_shows_the_plan(client, editor: Editor):
    uri = editor.open("plan.sql", "SELECT name FROM players WHERE score > 3;")
    plan = await editor.hover(uri, types.Position(line=0, character=2))
    assert plan.contents.kind == types.MarkupKind.Markdown
    assert "SCAN players" in plan.contents.value
    assert "full scan" in plan.contents.value.lower()


async def test_hover_outside_any_statement_is_null(client, editor: Editor):
    uri = editor.open("outside.sql", "SELECT 1;\n\n")
    assert await editor.hover(uri, types.Position(line=1, character=0)) is None


# Code lenses and commands


LENSES = (
    "SELECT name FROM players ORDER BY name;\n"  # 0
    "INSERT INTO players(name, score)\n"  # 1
    "  VALUES ('Dee', 3);\n"  # 2
    "\n"  # 3
    "SELECT count(*) AS n FROM players;\n"  # 4
)


async def test_code_lenses_run_each_statement(client, editor: Editor):
    uri = editor.open("lens.sql", LENSES)
    lenses = await editor.code_lenses(uri)
    runs = sorted((lens for lens in lenses if lens.command.command == "sqlive.run"), key=lambda l: l.range.start.line)
    assert [lens.range.start.line for lens in runs] == [0, 1, 4]
    watches = [lens.range.start.line for lens in lenses if lens.command.command == "sqlive.watch"]
    assert sorted(watches) == [0, 4]  # only statements that read
    explains = [lens.range.start.line for lens in lenses if lens.command.command == "sqlive.explain"]
    assert sorted(explains) == [0, 1, 4]
    for lens, line, words in zip(runs, [0, 1, 4], ["ORDER BY name", "VALUES ('Dee', 3)", "count(*) AS n"]):
        [argument] = lens.command.arguments
        assert argument["uri"] == uri and argument["line"] == line and words in argument["sql"], argument

    first = await editor.execute("sqlive.run", runs[0].command.arguments)
    assert len(first["results"]) == 1, first  # the statement, not the document
    assert first["results"][0]["columns"] == ["name"]
    assert first["results"][0]["rows"] == [["Ann"], ["Bob"]]

    count = await editor.execute("sqlive.run", runs[2].command.arguments)
    assert (count["results"][0]["columns"], count["results"][0]["rows"]) == (["n"], [[2]])

    insert = await editor.execute("sqlive.run", runs[1].command.arguments)
    assert insert["results"][0]["changes"] == 1

    # The statement under the cursor, as a client may send it.
    under_cursor = await editor.execute("sqlive.run", [{"uri": uri, "position": {"line": 4, "character": 10}}])
    assert under_cursor["results"][0]["rows"] == [[3]]


async def test_explain_gives_the_plan(client, editor: Editor):
    uri = editor.open("explain.sql", "SELECT name FROM players WHERE score > 3;")
    [lens] = [lens for lens in await editor.code_lenses(uri) if lens.command.command == "sqlive.explain"]
    explained = await editor.execute("sqlive.explain", lens.command.arguments)
    assert any("SCAN players" in step["detail"] for step in explained["plan"]), explained
    assert all({"id", "parent", "detail"} <= set(step) for step in explained["plan"])
    assert "SCAN players" in explained["text"]


async def test_watch_delivers_changes_made_by_another_process(client, editor: Editor):
    uri = editor.open("watch.sql", "-- leaders\nSELECT name FROM players ORDER BY name;\n")
    [lens] = [lens for lens in await editor.code_lenses(uri) if lens.command.command == "sqlive.watch"]
    watch = await editor.execute("sqlive.watch", lens.command.arguments)
    # Named FILE:LINE, the line 1-based.
    assert watch["name"] == "watch.sql:2"
    assert watch["rows"] == [["Ann"], ["Bob"]]

    another_process(editor.database, "INSERT INTO players(name, score) VALUES ('Cy', 1);")
    change = await editor.live_change("watch.sql:2")
    assert change["columns"] == ["name"]
    assert [list(row) for row in change["rows"]] == [["Ann"], ["Bob"], ["Cy"]]
    assert change["cause"] == "external"

    assert "watch.sql:2" in str(await editor.sqlive("liveQuery/list", {}))
    assert await editor.execute("sqlive.unwatch", lens.command.arguments) == {}
    listed = await editor.sqlive("liveQuery/list", {})
    assert "watch.sql:2" not in str(listed), listed


async def test_run_reports_progress_for_the_clients_token(client, editor: Editor):
    uri = editor.open("progress.sql", "SELECT count(*) FROM players;")
    token = "run-with-progress"
    # A token the client made itself is valid without window/workDoneProgress/create;
    # pytest-lsp only knows the ones it was asked to create.
    client.progress_reports[token] = []
    result = await editor.execute("sqlive.run", [{"uri": uri, "position": {"line": 0, "character": 0}}], token=token)
    assert result["results"][0]["rows"] == [[2]]
    reports = client.progress_reports[token]
    await until(lambda: any(isinstance(r, types.WorkDoneProgressEnd) for r in reports), "the progress's end")
    assert isinstance(reports[0], types.WorkDoneProgressBegin), reports
    assert reports[0].title and reports[0].cancellable is True
    assert isinstance(reports[-1], types.WorkDoneProgressEnd), reports


ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c;"


@pytest.mark.parametrize("how", ["window/workDoneProgress/cancel", "$/cancelRequest"])
async def test_cancelling_stops_a_running_statement(client, editor: Editor, how):
    uri = editor.open("endless.sql", ENDLESS + "\nSELECT count(*) FROM players;")
    token = f"endless-{how}"
    client.progress_reports[token] = []
    request_id = f"endless-request-{how}"
    running = asyncio.ensure_future(
        client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(
                command="sqlive.run",
                arguments=[{"uri": uri, "position": {"line": 0, "character": 0}}],
                work_done_token=token,
            ),
            msg_id=request_id,
        )
    )
    reports = client.progress_reports[token]
    await until(lambda: any(isinstance(r, types.WorkDoneProgressBegin) for r in reports), "the statement to start")
    assert not running.done()
    if how == "$/cancelRequest":
        client.cancel_request(types.CancelParams(id=request_id))
    else:
        client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    with pytest.raises(JsonRpcException) as error:
        await asyncio.wait_for(running, TIMEOUT)
    assert error.value.code == -32800

    # The session goes on.
    after = await editor.execute("sqlive.run", [{"uri": uri, "position": {"line": 1, "character": 0}}])
    assert after["results"][0]["rows"] == [[2]]
