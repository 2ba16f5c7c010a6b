#!/usr/bin/env python3
"""Keeps a copy of a big live query's result from changes only.

Registers SQL with `diff: "only"`: sqlive sends the full result once, then
only what changed, and this client applies the changes to its copy. With
`--check N`, it makes N one-row writes itself through Python's sqlite3
module (another process, at its default settings), and after each one waits
until its copy equals the query's result read straight from the file; it
prints each notification's size and exits 1 if the copy ever differs.

    python3 mirror.py big.sqlite items "SELECT id, name, qty FROM items ORDER BY id" \\
        --max-rows 1000000 --check 20 --table items
"""

import argparse
import random
import sqlite3
import sys
import time

from sqlive_client import SQLiveClient, apply_changes, decode_rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("database")
    parser.add_argument("name")
    parser.add_argument("sql")
    parser.add_argument("--sqlive", default="sqlive", help="the sqlive executable")
    parser.add_argument("--max-rows", type=int, default=None)
    parser.add_argument("--check", type=int, default=0, help="make N one-row writes and check the copy after each")
    parser.add_argument("--table", default="items", help="the table --check writes (id INTEGER PRIMARY KEY, qty)")
    parser.add_argument("--timeout", type=float, default=30)
    arguments = parser.parse_args()

    with SQLiveClient(command=(arguments.sqlive, "--rpc"), database=arguments.database) as client:
        params = {"name": arguments.name, "sql": arguments.sql, "diff": "only"}
        if arguments.max_rows:
            params["maxRows"] = arguments.max_rows
        first = client.request("liveQuery/register", params)
        copy = decode_rows(first["rows"])
        version = first["version"]
        print(f"{arguments.name} v{version}: {len(copy)} rows of {first['total']}", flush=True)
        if arguments.check == 0:
            follow(client, arguments.name, copy)
            return 0
        writer = sqlite3.connect(arguments.database)  # Python's defaults
        ids = [row[0] for row in writer.execute(f"SELECT id FROM {arguments.table}")]
        generator = random.Random(7)
        largest = 0
        for round_number in range(arguments.check):
            kind = ["update", "insert", "delete"][round_number % 3]
            if kind == "update":
                writer.execute(f"UPDATE {arguments.table} SET qty = qty + 1 WHERE id = ?", (generator.choice(ids),))
            elif kind == "insert":
                cursor = writer.execute(f"INSERT INTO {arguments.table}(qty) VALUES (?)", (round_number,))
                ids.append(cursor.lastrowid)
            else:
                victim = ids.pop(generator.randrange(len(ids)))
                writer.execute(f"DELETE FROM {arguments.table} WHERE id = ?", (victim,))
            writer.commit()
            expected = [list(row) for row in writer.execute(arguments.sql)]
            if arguments.max_rows:
                expected = expected[:arguments.max_rows]
            deadline = time.monotonic() + arguments.timeout
            while copy != expected:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    print(f"round {round_number} ({kind}): the copy differs from the file", flush=True)
                    return 1
                notification = client.next_notification(timeout=remaining)
                if notification is None or notification["method"] != "liveQuery/changed":
                    continue
                change = notification["params"]
                if "changes" in change:
                    copy = apply_changes(copy, change["changes"])
                else:
                    copy = decode_rows(change["rows"])
                largest = max(largest, change["$bytes"])
                print(f"{kind}: v{change['version']}, {change['$bytes']} bytes, total {change['total']}", flush=True)
        print(f"the copy matched after each of {arguments.check} writes; largest notification {largest} bytes",
              flush=True)
        return 0


def follow(client, name, copy):
    while True:
        notification = client.next_notification()
        if notification is None:
            return
        change = notification["params"]
        if notification["method"] != "liveQuery/changed" or change["name"] != name:
            continue
        copy = apply_changes(copy, change["changes"]) if "changes" in change else decode_rows(change["rows"])
        print(f"{name} v{change['version']}: {len(copy)} rows ({change['$bytes']} bytes)", flush=True)


if __name__ == "__main__":
    sys.exit(main())
