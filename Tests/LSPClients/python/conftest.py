"""pytest-lsp posing as real editors, in front of the real `sqlive --lsp`.

Every test gets its own directory and database (pytest's `tmp_path`) and its
own server, once per client: Neovim 0.7, Emacs 29 (eglot) and VS Code, each
with the capabilities that editor really sends. pytest-lsp checks each reply
against the LSP specification and those capabilities; a violation is an error
(pytest.ini turns `LspSpecificationWarning` into errors).

The server is `$SQLIVE_BIN --lsp`; "another process" is the sqlite3 shell.

Run: SQLIVE_BIN=/path/to/sqlive PYTHONDONTWRITEBYTECODE=1 \
       python3 -m pytest -q Tests/LSPClients/python
(`swift test` runs it too: EditorClientTests.swift.)
"""

import asyncio
import copy
import os
import pathlib
import sqlite3
import subprocess

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

SQLIVE = os.environ.get("SQLIVE_BIN", "sqlive")

# The editors pytest-lsp can pose as (see pytest_lsp/clients/*.json): Neovim
# 0.7 as Debian 12 ships it, Emacs 29's eglot, VS Code's generic client.
CLIENTS = ["neovim@v0.7.0", "emacs@v29.1", "visual-studio-code@v1.65.2"]

# Only a hang reaches it.
TIMEOUT = 30


def make_database(path: pathlib.Path) -> None:
    """A database at SQLite's default settings (rollback journal)."""
    db = sqlite3.connect(path)
    with db:
        db.executescript(
            """
            CREATE TABLE players(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INT);
            CREATE TABLE games(id INTEGER PRIMARY KEY, title TEXT, playerID INT);
            CREATE VIEW leaders AS SELECT name, score FROM players ORDER BY score DESC;
            INSERT INTO players(name, score) VALUES ('Ann', 12), ('Bob', 7);
            """
        )
    db.close()


def another_process(database: pathlib.Path, sql: str) -> None:
    """Writes to the database as another program would: the sqlite3 shell,
    at its defaults (no busy timeout: watching must never make it wait)."""
    subprocess.run(
        ["sqlite3", str(database), sql],
        check=True,
        timeout=TIMEOUT,
    )


def record_raw_messages(client: LanguageClient) -> list:
    """Keeps every message from the server as the JSON it was, before pygls
    turns it into lsprotocol types (which drop members they do not know)."""
    raw: list = []
    structure = client.protocol.structure_message

    def recording(data):
        # json.loads calls its object_hook inside out: the message itself,
        # the only object with "jsonrpc", comes last, holding plain dicts.
        if isinstance(data, dict) and "jsonrpc" in data:
            raw.append(copy.deepcopy(data))
        return structure(data)

    client.protocol.structure_message = recording
    return raw


async def start_session(request, lsp_client: LanguageClient, directory: pathlib.Path, options):
    database = directory / "games.sqlite"
    make_database(database)
    lsp_client.sqlive_directory = directory
    lsp_client.sqlive_database = database
    lsp_client.raw_messages = record_raw_messages(lsp_client)
    lsp_client.live_changes = []

    @lsp_client.feature("liveQuery/changed")
    def live_query_changed(params):
        lsp_client.live_changes.append(params)

    # An editor that supports them answers the server's refresh requests
    # (and asks again); the raw messages keep them for the tests.
    @lsp_client.feature("workspace/inlayHint/refresh")
    def inlay_hint_refresh(params):
        return None

    @lsp_client.feature("workspace/codeLens/refresh")
    def code_lens_refresh(params):
        return None

    lsp_client.sqlive_init = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(request.param),
            root_uri=directory.as_uri(),
            initialization_options=options(database),
        )
    )


async def end_session(lsp_client: LanguageClient):
    try:
        await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)
    except asyncio.TimeoutError:
        # A server that does not answer shutdown must not hang the suite.
        if lsp_client._server is not None:
            lsp_client._server.kill()
        raise


@pytest_lsp.fixture(params=CLIENTS, config=ClientServerConfig(server_command=[SQLIVE, "--lsp"]))
async def client(request, lsp_client: LanguageClient, tmp_path: pathlib.Path):
    """A session whose database is `games.sqlite`, given by initializationOptions."""
    await start_session(request, lsp_client, tmp_path, lambda database: {"database": str(database)})
    yield
    await end_session(lsp_client)


@pytest_lsp.fixture(params=CLIENTS, config=ClientServerConfig(server_command=[SQLIVE, "--lsp"]))
async def bare_client(request, lsp_client: LanguageClient, tmp_path: pathlib.Path):
    """A session with no database: the one initializationOptions gives cannot
    be opened (its directory does not exist). Without any, sqlive would open
    an in-memory database, a database all the same."""
    await start_session(
        request, lsp_client, tmp_path, lambda database: {"database": str(database.parent / "absent" / "x.sqlite")}
    )
    yield
    await end_session(lsp_client)


# The clients of the inline-result tests: Neovim 0.11 shows them as inlay
# hints (and can be asked to refresh them), VS Code 1.65 in code lens titles
# (and can be asked to refresh those), Emacs 29's eglot as inlay hints
# (without refresh).
INLINE_CLIENTS = ["neovim@v0.11.0", "visual-studio-code@v1.65.2", "emacs@v29.1"]


@pytest_lsp.fixture(params=INLINE_CLIENTS, config=ClientServerConfig(server_command=[SQLIVE, "--lsp"]))
async def inline_client(request, lsp_client: LanguageClient, tmp_path: pathlib.Path):
    """As `client`, for the clients of the inline-result tests."""
    lsp_client.sqlive_capabilities = client_capabilities(request.param)
    await start_session(request, lsp_client, tmp_path, lambda database: {"database": str(database)})
    yield
    await end_session(lsp_client)


class Editor:
    """What an editor does with a server, in the words of the tests."""

    def __init__(self, client: LanguageClient):
        self.client = client
        self.directory: pathlib.Path = client.sqlive_directory
        self.database: pathlib.Path = client.sqlive_database
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.requests = 0

    # Positions, in the encoding the server announced (UTF-16 when it said
    # nothing), as a client counts them.

    @property
    def encoding(self) -> str:
        announced = self.client.sqlive_init.capabilities.position_encoding
        return announced or types.PositionEncodingKind.Utf16

    def units(self, text: str) -> int:
        if self.encoding == types.PositionEncodingKind.Utf8:
            return len(text.encode("utf-8"))
        if self.encoding == types.PositionEncodingKind.Utf32:
            return len(text)
        return len(text.encode("utf-16-le")) // 2

    def position_of(self, uri: str, word: str, occurrence: int = 0, offset: int = 0) -> types.Position:
        """The position of a word of the document (its `occurrence`-th), plus
        `offset` characters."""
        text = self.texts[uri]
        index = -1
        for _ in range(occurrence + 1):
            index = text.index(word, index + 1)
        index += offset
        line = text.count("\n", 0, index)
        line_start = text.rfind("\n", 0, index) + 1
        return types.Position(line=line, character=self.units(text[line_start:index]))

    def range_of(self, uri: str, word: str, occurrence: int = 0) -> tuple:
        start = self.position_of(uri, word, occurrence)
        end = self.position_of(uri, word, occurrence, offset=len(word))
        return (start.line, start.character, end.line, end.character)

    def covered(self, uri: str, r: types.Range) -> str:
        """The text of the document that a range covers."""
        lines = self.texts[uri].split("\n")

        def index(position: types.Position) -> int:
            line = lines[position.line]
            units = 0
            for i, ch in enumerate(line):
                if units >= position.character:
                    return sum(len(l) + 1 for l in lines[: position.line]) + i
                units += self.units(ch)
            return sum(len(l) + 1 for l in lines[: position.line]) + len(line)

        return self.texts[uri][index(r.start) : index(r.end)]

    # Documents

    def uri(self, name: str) -> str:
        return (self.directory / name).as_uri()

    def open(self, name: str, text: str) -> str:
        uri = self.uri(name)
        self.texts[uri] = text
        self.versions[uri] = 1
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="sql", version=1, text=text)
            )
        )
        return uri

    def replace(self, uri: str, start: types.Position, end: types.Position, new_text: str, text_after: str) -> None:
        """An incremental change, as editors send them; `text_after` is the
        text of the document after the change, for the test's own copy."""
        self.versions[uri] += 1
        self.texts[uri] = text_after
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                content_changes=[
                    types.TextDocumentContentChangePartial(range=types.Range(start=start, end=end), text=new_text)
                ],
            )
        )

    def close(self, uri: str) -> None:
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )

    # Diagnostics

    async def diagnostics_until(self, uri: str, predicate, description: str = "diagnostics"):
        """Waits until the diagnostics last published for `uri` satisfy
        `predicate`, and returns them."""

        async def wait():
            while True:
                if uri in self.client.diagnostics and predicate(self.client.diagnostics[uri]):
                    return list(self.client.diagnostics[uri])
                await asyncio.sleep(0.02)

        try:
            return await asyncio.wait_for(wait(), TIMEOUT)
        except asyncio.TimeoutError:
            last = self.client.diagnostics.get(uri, "(none published)")
            raise AssertionError(
                f"waited {TIMEOUT} s for {description}; last published for {uri}: {last}"
            ) from None

    def raw_publications(self, uri: str) -> list:
        """The params of every publishDiagnostics for `uri`, as sent."""
        return [
            m["params"]
            for m in self.client.raw_messages
            if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
        ]

    # Requests

    async def completion(self, uri: str, position: types.Position):
        result = await self.client.text_document_completion_async(
            types.CompletionParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position)
        )
        assert isinstance(result, types.CompletionList), f"not a CompletionList: {result!r}"
        return result.items

    async def hover(self, uri: str, position: types.Position):
        return await self.client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position)
        )

    async def inlay_hints(self, uri: str, first_line: int = 0, last_line: int = 1000):
        """The inlay hints of a range of lines, by line: their labels."""
        hints = await self.client.text_document_inlay_hint_async(
            types.InlayHintParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=types.Range(
                    start=types.Position(line=first_line, character=0),
                    end=types.Position(line=last_line, character=0),
                ),
            )
        )
        return {hint.position.line: hint.label for hint in hints or []}

    def requests_from_server(self, method: str) -> list:
        return [m for m in self.client.raw_messages if m.get("method") == method and "id" in m]

    async def code_lenses(self, uri: str):
        return await self.client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )

    async def execute(self, command: str, arguments, token=None):
        return await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command, arguments=arguments, work_done_token=token)
        )

    async def sqlive(self, method: str, params: dict):
        """One of sqlive's own methods, through the client's "custom request"
        API; its result as sent (pygls makes unknown results namedtuples)."""
        self.requests += 1
        msg_id = f"sqlive-{self.requests}"
        await self.client.protocol.send_request_async(method, params, msg_id=msg_id)
        return next(m["result"] for m in self.client.raw_messages if m.get("id") == msg_id)

    async def live_change(self, name: str):
        """Waits for a `liveQuery/changed` of the live query `name`."""

        def field(change, key):
            return change[key] if isinstance(change, dict) else getattr(change, key)

        async def wait():
            while True:
                for change in self.client.live_changes:
                    if field(change, "name") == name:
                        return change
                await asyncio.sleep(0.02)

        try:
            change = await asyncio.wait_for(wait(), TIMEOUT)
        except asyncio.TimeoutError:
            raise AssertionError(
                f"no liveQuery/changed for {name!r} in {TIMEOUT} s; received: {self.client.live_changes}"
            ) from None
        return {key: field(change, key) for key in ("name", "version", "columns", "rows", "cause")}


@pytest.fixture
def editor(client: LanguageClient) -> Editor:
    return Editor(client)


@pytest.fixture
def bare_editor(bare_client: LanguageClient) -> Editor:
    return Editor(bare_client)


@pytest.fixture
def inline_editor(inline_client: LanguageClient) -> Editor:
    return Editor(inline_client)
