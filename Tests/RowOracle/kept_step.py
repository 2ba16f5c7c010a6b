#!/usr/bin/env python3
"""The smallest case kept.py --free reduced to (issue #55): two kept live
queries delivered out of step.

Two live queries, both kept from rows (`precision: "rows"`):

    clock   SELECT max(id) FROM tick
    gcount  SELECT count(*) FROM g

A writer (apsw: upstream SQLite) commits every --pace-ms (4 ms): each commit
inserts one `tick` row (id = the commit's number), and every --every-th
(5th) commit also inserts one row into `g`, in the same transaction. So at
commit n, gcount = the rows g started with + n // 5. Each read of
`sqlive --rpc`'s output that ends between two frames and carried a
notification is a delivered state (sqlive writes one refresh's notifications
in one write); a state whose clock says n and whose gcount is not the count
at n is out of step. Prints how many states were, the first few
(clock, gcount delivered, gcount at that commit), and how long each stayed
so (until the next delivered state that was right). Exit status 1 when any.
--rerun makes both queries run again instead (`… WHERE (SELECT 1)`): the
states are out of step all the same, so the refresh's batch, not the
keeping, is where they part.

    python3 Tests/RowOracle/kept_step.py --sqlive .build/release/sqlive --journal wal
"""

import argparse
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kept  # noqa: E402
from oracle import apsw  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--sqlive", default=os.environ.get("SQLIVE", os.path.join(here, "..", "..", ".build", "debug", "sqlive")))
    p.add_argument("--journal", choices=["wal", "delete"], default="wal")
    p.add_argument("--commits", type=int, default=1500)
    p.add_argument("--pace-ms", type=float, default=4.0)
    p.add_argument("--every", type=int, default=5)
    p.add_argument("--rows", type=int, default=3000, help="rows of g at the start")
    p.add_argument("--rerun", action="store_true", help="the same two queries made not to be kept (run again)")
    args = p.parse_args(argv)
    work = tempfile.mkdtemp(prefix="sqlive-kept-step-")
    path = os.path.join(work, "step.db")
    db = apsw.Connection(path)
    db.execute("PRAGMA journal_mode=%s" % args.journal)
    db.execute("CREATE TABLE tick(id INTEGER PRIMARY KEY); CREATE TABLE g(id INTEGER PRIMARY KEY, qty)")
    with db:
        for i in range(args.rows):
            db.execute("INSERT INTO g(qty) VALUES (?)", (i,))
    rpc = kept.Rpc(os.path.abspath(args.sqlive), path, os.path.join(work, "sqlive.stderr"))
    try:
        rpc.request("initialize", {})
        queries = [("clock", "SELECT max(id) FROM tick"), ("gcount", "SELECT count(*) FROM g")]
        if args.rerun:
            # The same two, run again at each refresh (a subquery is never kept).
            queries = [(name, sql + " WHERE (SELECT 1)") for name, sql in queries]
        for name, sql in queries:
            result = rpc.request("liveQuery/register", {"name": name, "sql": sql})
            with rpc.cond:
                rpc.latest[name] = (result["version"], result["rows"], result.get("total"))
        # Until both are kept.
        deadline = time.monotonic() + (0 if args.rerun else 10)
        while time.monotonic() < deadline:
            precision = {q["name"]: q["precision"] for q in rpc.request("liveQuery/list")["liveQueries"]}
            if all(v == "rows" for v in precision.values()):
                break
            time.sleep(0.1)
        with rpc.cond:
            rpc.record_states = True
        started = time.monotonic()
        count = {0: args.rows}
        for n in range(1, args.commits + 1):
            delay = started + n * args.pace_ms / 1000.0 - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            with db:
                if n % args.every == 0:
                    db.execute("INSERT INTO g(qty) VALUES (?)", (n,))
                db.execute("INSERT INTO tick(id) VALUES (?)", (n,))
            count[n] = count[n - 1] + (1 if n % args.every == 0 else 0)
        rpc.wait(lambda: rpc.clock == args.commits, 30)
        time.sleep(0.5)
        with rpc.cond:
            states = list(rpc.states)
        final = rpc.request("liveQuery/list")["liveQueries"]
    finally:
        rpc.stop()
        db.close()
        shutil.rmtree(work, ignore_errors=True)
    bad = []
    for i, (clock, state, at) in enumerate(states):
        c = clock or 0
        got = state["gcount"][1][0][0]
        if got != count[c]:
            right = next((t for cl, s, t in states[i + 1:] if s["gcount"][1][0][0] == count[cl or 0]), None)
            bad.append((c, got, count[c], None if right is None else (right - at) * 1000))
    print("kept_step: %sjournal=%s commits=%d pace=%gms every=%d: states %d, out of step %d%s; precision at the end: %s" % (
        "run again, " if args.rerun else "", args.journal, args.commits, args.pace_ms, args.every, len(states), len(bad),
        " (right again after %.1f ms at most)" % max(b[3] for b in bad if b[3] is not None) if any(b[3] is not None for b in bad) else "",
        ", ".join("%s %s" % (q["name"], q["precision"]) for q in final)))
    for c, got, want, ms in bad[:6]:
        print("  clock %d: gcount %d, at commit %d it is %d%s" % (c, got, c, want, "" if ms is None else " (right %.1f ms later)" % ms))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
