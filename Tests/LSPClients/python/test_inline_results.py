"""Every statement's live result inline, through standard LSP, as Neovim 0.11
(inlay hints), VS Code 1.65 (code lens titles) and Emacs 29 (inlay hints)
see it: refreshed when another process writes, and nothing ever written by
the server itself. See conftest.py for the clients and the database."""

import sqlite3

import subprocess

from conftest import TIMEOUT, Editor

DOCUMENT = """SELECT count(*) FROM players;
SELECT name, score FROM players ORDER BY score DESC;
INSERT INTO players(name, score) VALUES ('Eve', 1);
SELECT nope FROM players;
"""


def another_process(database, sql: str) -> None:
    """The sqlite3 shell at its defaults (no busy timeout), as an application's writer."""
    subprocess.run(["sqlite3", str(database), sql], check=True, timeout=TIMEOUT)


def capability(editor: Editor, *path):
    value = editor.client.sqlive_capabilities
    for key in path:
        value = getattr(value, key, None) if value is not None else None
    return value


def run_titles(lenses) -> dict:
    return {lens.range.start.line: lens.command.title for lens in lenses if lens.command.command == "sqlive.run"}


def player_count(editor: Editor) -> int:
    db = sqlite3.connect(editor.database)
    try:
        return db.execute("SELECT count(*) FROM players").fetchone()[0]
    finally:
        db.close()


async def test_each_read_only_statement_shows_its_live_result(inline_client, inline_editor: Editor):
    editor = inline_editor
    uri = editor.open("inline.sql", DOCUMENT)
    shows_hints = capability(editor, "text_document", "inlay_hint") is not None
    refreshes_hints = capability(editor, "workspace", "inlay_hint", "refresh_support") is True
    refreshes_lenses = capability(editor, "workspace", "code_lens", "refresh_support") is True

    expected = {0: "→ 2", 1: "→ 2 rows: (Ann, 12), (Bob, 7)", 3: "⚠ no such column: nope"}
    if shows_hints:
        assert await editor.inlay_hints(uri) == expected
    titles = run_titles(await editor.code_lenses(uri))
    assert titles == {line: f"▶ Run  {brief}" for line, brief in expected.items()} | {2: "▶ Run"}
    # The INSERT was never run by itself.
    assert player_count(editor) == 2

    another_process(editor.database, "INSERT INTO players(name, score) VALUES ('Cy', 30);")
    if refreshes_hints:
        await editor_until(editor, lambda: editor.requests_from_server("workspace/inlayHint/refresh"))
    if refreshes_lenses:
        await editor_until(editor, lambda: editor.requests_from_server("workspace/codeLens/refresh"))
    # Whether or not the client was asked, its next request shows the new result.
    async def current():
        return await editor.inlay_hints(uri) if shows_hints else {
            line: title.removeprefix("▶ Run  ") for line, title in run_titles(await editor.code_lenses(uri)).items()
        }
    await editor_until_async(editor, current, lambda shown: shown.get(0) == "→ 3")
    shown = await current()
    assert shown[1] == "→ 3 rows: (Cy, 30), (Ann, 12), (Bob, 7)"
    assert player_count(editor) == 3
    # A client that cannot be asked to refresh is never asked.
    if not refreshes_hints:
        assert not editor.requests_from_server("workspace/inlayHint/refresh")
    if not refreshes_lenses:
        assert not editor.requests_from_server("workspace/codeLens/refresh")


async def test_a_closed_documents_results_are_no_longer_live(inline_client, inline_editor: Editor):
    editor = inline_editor
    uri = editor.open("closing.sql", "SELECT count(*) FROM players;\n")
    titles = run_titles(await editor.code_lenses(uri))
    assert titles == {0: "▶ Run  → 2"}
    editor.close(uri)
    await editor.diagnostics_until(uri, lambda diagnostics: not diagnostics, "the cleared diagnostics")
    another_process(editor.database, "INSERT INTO players(name, score) VALUES ('Cy', 30);")
    import asyncio

    await asyncio.sleep(1)
    assert not editor.requests_from_server("workspace/inlayHint/refresh")
    assert not editor.requests_from_server("workspace/codeLens/refresh")


async def editor_until(editor: Editor, predicate):
    import asyncio

    from conftest import TIMEOUT

    async def wait():
        while not predicate():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(wait(), TIMEOUT)


async def editor_until_async(editor: Editor, produce, predicate):
    import asyncio

    from conftest import TIMEOUT

    async def wait():
        while not predicate(await produce()):
            await asyncio.sleep(0.05)

    await asyncio.wait_for(wait(), TIMEOUT)
