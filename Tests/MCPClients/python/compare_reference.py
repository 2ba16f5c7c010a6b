"""The bypass list and the reads, side by side: the reference SQLite MCP
server (PyPI `mcp-server-sqlite`) and `sqlive --mcp`, each on a fresh copy of
the same database, through the same MCP client. Prints the markdown tables of
docs/mcp.md, and exits 1 if sqlive ran any attempt, changed any file, or
refused any read.

The reference server needs an older SDK; run it from a virtual environment:

    python3 -m venv /tmp/refmcp
    /tmp/refmcp/bin/pip install 'mcp<1.20' 'pydantic<2.11' mcp-server-sqlite
    SQLIVE_BIN=/path/to/sqlive /tmp/refmcp/bin/python Tests/MCPClients/python/compare_reference.py

It uses only the client API both SDK generations share.
"""

import asyncio
import os
import pathlib
import shutil
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from bypass_attempts import ATTEMPTS, READS  # noqa: E402
from conftest_shared import fingerprint, make_database  # noqa: E402

SQLIVE = os.environ.get("SQLIVE_BIN", "sqlive")
REFERENCE = os.environ.get("REFERENCE_BIN", str(pathlib.Path(sys.executable).parent / "mcp-server-sqlite"))


async def call(command, args, directory, tool, sql):
    """One tool call on a fresh server: (ran, error text or None, protocol version, subscribe)."""
    parameters = StdioServerParameters(command=command, args=args, cwd=str(directory), env={**os.environ, "SQLIVE_QUIET": "1"})
    with open(os.devnull, "w") as quiet:
        async with stdio_client(parameters, errlog=quiet) as (read, write):
            async with ClientSession(read, write) as session:
                init = await asyncio.wait_for(session.initialize(), 30)
                try:
                    result = await asyncio.wait_for(session.call_tool(tool, {sql[0]: sql[1]}), 30)
                    text = result.content[0].text if result.content else ""
                    # The reference server returns its errors as ordinary
                    # text ("Error: ...", "Database error: ..."), not as isError results.
                    error = text if result.isError or text.startswith(("Error:", "Database error:")) else None
                except Exception as exception:  # a protocol error
                    error = str(exception)
                subscribe = bool(init.capabilities.resources and init.capabilities.resources.subscribe)
                return error is None, error, init.protocolVersion, subscribe


async def outcome(server, tool, sql, work):
    """What one attempt did to a fresh copy of the database."""
    directory = pathlib.Path(tempfile.mkdtemp(dir=work))
    database = directory / "games.sqlite"
    make_database(database)
    before = fingerprint(directory, database)
    if server == "reference":
        ran, error, version, subscribe = await call(REFERENCE, ["--db-path", str(database)], directory, tool, ("query", sql))
    else:
        ran, error, version, subscribe = await call(SQLIVE, ["--mcp", str(database)], directory, tool, ("sql", sql))
    after = fingerprint(directory, database)
    shutil.rmtree(directory)
    changed = after[0] != before[0]
    made = sorted(set(after[1]) - set(before[1]) - {"games.sqlite-journal"})
    if not ran:
        verdict = "refused"
    elif changed or made:
        verdict = "**ran: " + ", ".join((["changed the file"] if changed else []) + [f"made {m}" for m in made]) + "**"
    else:
        verdict = "ran"
    return verdict, ran, changed or bool(made), version, subscribe


async def main():
    work = pathlib.Path(tempfile.mkdtemp())
    failures = []
    versions = {}
    print("| attempt | SQL | reference `read_query` | reference `write_query` | sqlive `query` |")
    print("|---|---|---|---|---|")
    for what, sql in ATTEMPTS:
        read_query = (await outcome("reference", "read_query", sql, work))[0]
        write_query = (await outcome("reference", "write_query", sql, work))[0]
        verdict, ran, touched, version, subscribe = await outcome("sqlive", "query", sql, work)
        versions["sqlive"] = (version, subscribe)
        if ran or touched:
            failures.append(f"sqlive ran {sql!r}")
        shown = sql.replace("\n", " ").replace("|", "\\|")
        print(f"| {what} | `{shown}` | {read_query} | {write_query} | {verdict} |")
    print()
    print("| read | SQL | reference `read_query` | sqlive `query` |")
    print("|---|---|---|---|")
    for what, sql in READS:
        reference = await outcome("reference", "read_query", sql, work)
        versions["reference"] = (reference[3], reference[4])
        verdict = await outcome("sqlive", "query", sql, work)
        if not verdict[1]:
            failures.append(f"sqlive refused the read {sql!r}")
        answer = lambda o: "answered" if o[1] else "**refused**"  # noqa: E731
        print(f"| {what} | `{sql}` | {answer(reference)} | {answer(verdict)} |")
    print()
    for server, (version, subscribe) in sorted(versions.items()):
        print(f"- {server}: protocol {version}, resources.subscribe {subscribe}")
    shutil.rmtree(work)
    for failure in failures:
        print(f"FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
