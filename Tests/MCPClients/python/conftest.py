"""The official MCP Python SDK (PyPI `mcp`) as the client of the real
`sqlive --mcp`, over real pipes.

Every test gets its own directory and database (pytest's `tmp_path`) and its
own server. "Another process" is the sqlite3 shell, at its defaults (no busy
timeout), or Python's sqlite3 module.

Run: SQLIVE_BIN=/path/to/sqlive PYTHONDONTWRITEBYTECODE=1 \
       python3 -m pytest -q Tests/MCPClients/python
(`swift test` runs it too: MCPClientTests.swift.)
"""

import contextlib
import os
import pathlib
import sqlite3
import sys

import anyio
import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

SQLIVE = os.environ.get("SQLIVE_BIN", "sqlive")

# Only a hang reaches it.
TIMEOUT = 30


from conftest_shared import fingerprint, make_database  # noqa: E402,F401


class Server:
    """A connected client session and the notifications it received."""

    def __init__(self, session: ClientSession, notifications: list, arrived: anyio.Event):
        self.session = session
        self.notifications = notifications
        self._arrived = arrived

    async def call(self, tool: str, arguments: dict | None = None) -> types.CallToolResult:
        with anyio.fail_after(TIMEOUT):
            return await self.session.call_tool(tool, arguments or {})

    async def wait_for(self, predicate, timeout: float = TIMEOUT):
        """The first notification the predicate accepts, waiting for it."""
        with anyio.fail_after(timeout):
            while True:
                for notification in self.notifications:
                    if predicate(notification):
                        self.notifications.remove(notification)
                        return notification
                self._arrived = anyio.Event()
                await self._arrived.wait()

    def updated(self, uri: str):
        return lambda n: isinstance(n, types.ResourceUpdatedNotification) and str(n.params.uri) == uri

    @staticmethod
    def list_changed(n) -> bool:
        return isinstance(n, types.ResourceListChangedNotification)


@contextlib.asynccontextmanager
async def serve(database: pathlib.Path, *args: str):
    """`sqlive --mcp DATABASE ARGS`, initialized, as an MCP host would start it."""
    notifications: list = []
    state = {"event": anyio.Event()}

    async def handler(message) -> None:
        if isinstance(message, Exception):
            raise message
        notifications.append(message)
        server._arrived.set()

    parameters = StdioServerParameters(
        command=SQLIVE, args=["--mcp", str(database), *args], cwd=str(database.parent),
        env={"SQLIVE_QUIET": "1"})
    async with stdio_client(parameters, errlog=sys.stderr) as (read, write):
        async with ClientSession(read, write, message_handler=handler) as session:
            server = Server(session, notifications, state["event"])
            with anyio.fail_after(TIMEOUT):
                server.initialize_result = await session.initialize()
            yield server


@pytest.fixture
def database(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "games.sqlite"
    make_database(path)
    return path


def pytest_report_header(config):
    """Which SDK ran: it is installed unpinned, to keep pace with PyPI."""
    from importlib.metadata import version

    return f"MCP Python SDK (mcp) {version('mcp')}"
