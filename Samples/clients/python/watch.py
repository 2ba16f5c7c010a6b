#!/usr/bin/env python3
"""Watches a live query and prints each change of its result.

    python3 watch.py games.sqlite leaders "SELECT name, score FROM players ORDER BY score DESC LIMIT 3"

Leave it running, and change the database from anywhere (the sqlite3 shell,
another program): each change that alters the result is printed. Only
Python's standard library is needed, and `sqlive` on the PATH (or --sqlive).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from sqlive_client import SQLiveClient, SQLiveError, decode_rows  # noqa: E402


def print_result(header, columns, rows):
    print(header)
    print("  " + " | ".join(columns))
    for row in decode_rows(rows):
        print("  " + " | ".join("NULL" if value is None else str(value) for value in row))
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("database", help="the database file to watch")
    parser.add_argument("name", help="a name for the live query")
    parser.add_argument("sql", help="one read-only SQL statement")
    parser.add_argument("--sqlive", default="sqlive", help="the sqlive executable (default: sqlive on the PATH)")
    parser.add_argument("--changes", type=int, default=0, help="exit after this many changes (default: never)")
    parser.add_argument("--timeout", type=float, default=None, help="give up after this many seconds of silence")
    arguments = parser.parse_args()

    with SQLiveClient(command=[arguments.sqlive, "--rpc"]) as client:
        try:
            opened = client.request("database/open", {"path": arguments.database})
            print(f"opened {opened['path']} (SQLite {opened['sqliteVersion']}, {opened['journalMode']} journal)")
            first = client.request("liveQuery/register", {"name": arguments.name, "sql": arguments.sql})
        except SQLiveError as error:
            print(f"error: {error.message}", file=sys.stderr)
            return 1
        print_result(f"{first['name']} v{first['version']}:", first["columns"], first["rows"])

        seen = 0
        while arguments.changes == 0 or seen < arguments.changes:
            try:
                notification = client.next_notification(timeout=arguments.timeout)
            except Exception:
                print("error: no change in time", file=sys.stderr)
                return 1
            if notification is None:
                print("error: the server ended", file=sys.stderr)
                return 1
            params = notification["params"]
            if notification["method"] == "liveQuery/changed":
                seen += 1
                print_result(
                    f"{params['name']} v{params['version']} ({params['cause']} change):",
                    params["columns"], params["rows"])
            elif notification["method"] == "liveQuery/error":
                print(f"{params['name']} failed: {params['error']['message']}")
                sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
