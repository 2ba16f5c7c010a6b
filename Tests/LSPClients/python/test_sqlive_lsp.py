"""sqlive's language server, driven by pytest-lsp posing as real editors.

pytest-lsp replays the client capabilities that Neovim, Emacs (eglot) and
VS Code send, and checks every reply against the LSP specification and those
capabilities; a violation is an error (see pytest.ini). The server is the real
binary, from SQLIVE_BIN; databases are real files, and "another process" is
the sqlite3 shell.
"""

import asyncio
import os
import pathlib
import sqlite3
import subprocess
import tempfile

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

SQLIVE = os.environ.get("SQLIVE_BIN", "sqlive")
WORK = pathlib.Path(tempfile.mkdtemp(prefix="sqlive-pytest-lsp-"))
CLIENTS = ["neovim@v0.7.0", "emacs", "visual-studio-code"]
TIMEOUT = 30


def make_database(path: pathlib.Path) -> None:
    with sqlite3.connect(path) as db:
        db.executescript(
            """
            CREATE TABLE players(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INT);
            CREATE TABLE games(id INTEGER PRIMARY KEY, title TEXT, playerID INT);
            INSERT INTO players(name, score) VALUES ('Ann', 12), ('Bob', 7);
            """
        )
    db.close()


@pytest_lsp.fixture(
    params=CLIENTS,
    config=ClientServerConfig(server_command=[SQLIVE, "--lsp"]),
)
async def client(request, lsp_client: LanguageClient):
    directory = WORK / f"{request.node.name}".replace("[", "-").replace("]", "").replace("@", "-")
    directory.mkdir(parents=True, exist_ok=True)
    database = directory / "games.sqlite"
    if not database.exists():
        make_database(database)
    lsp_client.sqlive_directory = directory
    lsp_client.sqlive_database = database
    lsp_client.live_changes = []

    @lsp_client.feature("liveQuery/changed")
    def changed(params):
        lsp_client.live_changes.append(params)

    lsp_client.sqlive_init = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(request.param),
            root_uri=directory.as_uri(),
            initialization_options={"database": str(database)},
        )
    )
    yield
    await lsp_client.shutdown_session()


def open_document(client: LanguageClient, name: str, text: str) -> str:
    uri = (client.sqlive_directory / name).as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="sql", version=1, text=text)
        )
    )
    return uri


async def diagnostics_until(client: LanguageClient, uri: str, predicate):
    """Waits until the diagnostics published for `uri` satisfy `predicate`."""

    async def wait():
        while True:
            if uri in client.diagnostics and predicate(client.diagnostics[uri]):
                return list(client.diagnostics[uri])
            await asyncio.sleep(0.02)

    return await asyncio.wait_for(wait(), TIMEOUT)


def expected_encoding(client: LanguageClient):
    general = client.capabilities.general
    offered = list(general.position_encodings or []) if general else []
    if types.PositionEncodingKind.Utf8 in offered:
        return types.PositionEncodingKind.Utf8
    return types.PositionEncodingKind.Utf16


def spans(diagnostics):
    return [
        (d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character)
        for d in diagnostics
    ]


async def test_capabilities(client: LanguageClient):
    capabilities = client.sqlive_init.capabilities
    assert capabilities.text_document_sync.change == types.TextDocumentSyncKind.Incremental
    assert capabilities.text_document_sync.open_close is True
    assert list(capabilities.completion_provider.trigger_characters) == ["."]
    assert capabilities.hover_provider is True
    assert capabilities.code_lens_provider is not None
    assert "sqlive.run" in capabilities.execute_command_provider.commands
    # UTF-8 when the client offers it (Emacs does), else UTF-16.
    assert capabilities.position_encoding == expected_encoding(client)
    assert "query/execute" in capabilities.experimental["sqlive"]["methods"]


async def test_diagnostics_for_a_missing_table_in_utf16_columns(client: LanguageClient):
    uri = open_document(client, "q.sql", "SELECT 'héllo😀' AS x FROM nope;\nSELECT nam FROM players;")
    diagnostics = await diagnostics_until(client, uri, lambda d: len(d) > 0)
    assert [d.message for d in diagnostics] == ["no such table: nope", "no such column: nam"]
    assert all(d.severity == types.DiagnosticSeverity.Error for d in diagnostics)
    # "nope" starts at UTF-16 unit 27 (é is one unit, the emoji two), or at
    # UTF-8 byte 30 (é is two bytes, the emoji four).
    start = 30 if expected_encoding(client) == types.PositionEncodingKind.Utf8 else 27
    assert spans(diagnostics) == [(0, start, 0, start + 4), (1, 7, 1, 10)]


async def test_a_migration_is_not_flagged(client: LanguageClient):
    text = "CREATE TABLE t(a);\nINSERT INTO t VALUES (1);\nSELECT a FROM t;\n"
    uri = open_document(client, "migration.sql", text)
    assert await diagnostics_until(client, uri, lambda d: True) == []


async def test_another_process_creating_the_table_clears_the_error(client: LanguageClient):
    uri = open_document(client, "later.sql", "SELECT x FROM later;")
    await diagnostics_until(client, uri, lambda d: len(d) == 1)
    subprocess.run(["sqlite3", str(client.sqlive_database), "CREATE TABLE later(x);"], check=True)
    assert await diagnostics_until(client, uri, lambda d: len(d) == 0) == []


async def test_an_incremental_change_fixes_an_error(client: LanguageClient):
    uri = open_document(client, "edit.sql", "SELECT * FROM playrs;")
    await diagnostics_until(client, uri, lambda d: len(d) == 1)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(start=types.Position(line=0, character=18), end=types.Position(line=0, character=18)),
                    text="e",
                )
            ],
        )
    )
    assert await diagnostics_until(client, uri, lambda d: len(d) == 0) == []


async def test_completion_through_an_alias(client: LanguageClient):
    uri = open_document(client, "complete.sql", "SELECT p. FROM players AS p;")
    result = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=9)
        )
    )
    items = result.items if isinstance(result, types.CompletionList) else result
    assert [item.label for item in items] == ["id", "name", "score"]
    assert items[0].kind == types.CompletionItemKind.Field
    assert "INTEGER" in items[0].detail


async def test_hover_on_a_table_and_on_a_statement(client: LanguageClient):
    uri = open_document(client, "hover.sql", "SELECT name FROM players WHERE score > 3;")
    table = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=19))
    )
    assert table.contents.kind == types.MarkupKind.Markdown
    assert "| name | TEXT |" in table.contents.value
    plan = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=2))
    )
    assert "SCAN players" in plan.contents.value
    assert "full scan of players" in plan.contents.value


async def test_code_lens_run_and_watch(client: LanguageClient):
    uri = open_document(client, "lens.sql", "SELECT name FROM players ORDER BY name;")
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    commands = {lens.command.command: lens.command for lens in lenses}
    assert set(commands) == {"sqlive.run", "sqlive.watch", "sqlive.explain"}
    run = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="sqlive.run", arguments=commands["sqlive.run"].arguments)
    )
    assert run["results"][0]["rows"] == [["Ann"], ["Bob"]]

    watch = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="sqlive.watch", arguments=commands["sqlive.watch"].arguments)
    )
    assert watch["name"] == "lens.sql:1"
    subprocess.run(
        ["sqlite3", str(client.sqlive_database), "INSERT INTO players(name, score) VALUES ('Cy', 1);"], check=True
    )

    async def changed():
        while not client.live_changes:
            await asyncio.sleep(0.02)
        return client.live_changes[-1]

    change = await asyncio.wait_for(changed(), TIMEOUT)
    rows = change["rows"] if isinstance(change, dict) else change.rows
    assert [list(row) for row in rows] == [["Ann"], ["Bob"], ["Cy"]]
