#!/usr/bin/env python3
"""Row oracle for sqlive's change feed (issue #55).

An independent judge of `sqlive --changes`: a writer built from *upstream*
SQLite (apsw from PyPI, which bundles it with the session extension; its
defaults, so secure_delete is OFF unless --secure-delete on) makes random
commits, records each commit's own changeset with a session, and compares
them, commit by commit and row by row, with what `sqlive --changes DB`
(a child process) prints for the same file.

    PIP_ROOT_USER_ACTION=ignore python3 -m pip install apsw
    python3 Tests/RowOracle/oracle.py --sqlive .build/debug/sqlive \
        --journal wal --secure-delete off --commits 300 --seed 1

Every writer commit also inserts one row into `tick` (id = commit number),
which names it in the feed. Per commit and table: rows the changeset has and
the feed lacks are *missing*, rows the feed has and the changeset lacks are
*invented*, the same key with other values is *wrong* (an UPDATE is compared
on the changeset's PK and changed columns; columns the changeset says did
not change must be equal in the feed's old and new); a feed commit holding
the ticks of two writer commits is *merged*. A table the feed calls
`unknown` in that commit counts its changeset rows as *abstained* (allowed;
coverage = derived / (derived + abstained)). Values compare exactly: text by
code point, blobs as bytes, integers as integers; the allowances are the
protocol's documented ones: an integral REAL written as `3`, an infinite REAL
as the string "Infinity" or "-Infinity".

Modes: --journal wal|delete, --secure-delete off|on, --auto-vacuum
none|full|incremental (incremental adds `PRAGMA incremental_vacuum` to the
mix), --encoding utf-8|utf-16le, --seed, --commits, --lockstep (wait, at most
--wait seconds, for each commit's tick before the next) or --free,
--checkpoint-prob P with --checkpoint-modes (WAL), --pause-every N (SIGSTOP
sqlive across --pause-commits commits and a checkpoint, then SIGCONT).

--page-size sets PRAGMA page_size; --preset ci runs five short seeded
configurations in a row (80 commits each, about 25 s in all on 2 cores).

Prints a summary line per run, examples of each defect, and last `N passed,
M failed` (writer commits judged right / wrong; a feed commit matching no
writer commit and holding derived rows counts as a failed one; in lockstep a
commit not in the feed within --wait fails). Exit status 1 on any missing,
invented, wrong, merged or late, 2 on a setup error.

Matching: a feed commit is named by the tick rows it derived. Feed commits
that derived no tick (tick `unknown`) are matched by position between two
named ones: one to one when the counts agree, else all together against the
writer commits' changesets concatenated (merged, a defect, unless every line
is `unknown`). "changeset rows" counts rows per such group, so in free-running
runs a row changed by several commits judged together counts once.
"""

import argparse
import base64
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata

try:
    import apsw
except ImportError:  # pragma: no cover
    sys.stderr.write("oracle: needs apsw (PIP_ROOT_USER_ACTION=ignore python3 -m pip install apsw)\n")
    sys.exit(2)

START_MARKER = 1_000_000_000  # tick ids of the commits that wait for the feed to start
END_MARKER = 2_000_000_000  # tick id of the commit that flushes the feed at the end
NO_CHANGE = apsw.no_change


# ----------------------------------------------------------------------------
# Random data


WORDS = [
    "café", "naïve", "résumé", "Ångström", "façade", "jalapeño", "Zoë", "São Paulo",
    "über", "crème brûlée", "piñata", "Dvořák", "Ελληνικά", "Ŝerĉo", "Việt Nam",
    "한국어", "Mötley Crüe", "coöperate", "élève", "déjà vu", "Kraków", "Ærøskøbing",
]
ALPHABET = (
    "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJ 0123456789 .,;:!?-_'\""
    "éèêëàâäçîïôöùûüñÅåøæœ" "ΑΒΓαβγ" "жзий" "日本語中文" "😀🎉🐍𝔘"  # non-BMP: surrogates in UTF-16
    "\t\u00a0\u200b"
)
DECOMPOSABLE = "éèêëàâäçîïôöùûüñÅåÉÈÖÜ"


def rand_text(rng, low, high):
    n = rng.randint(low, high)
    chars = [rng.choice(ALPHABET) for _ in range(n)]
    # At least a few letters whose NFC and NFD forms differ.
    for _ in range(max(1, n // 40)):
        chars[rng.randrange(n)] = rng.choice(DECOMPOSABLE)
    text = "".join(chars)
    return unicodedata.normalize(rng.choice(["NFC", "NFD"]), text) if rng.random() < 0.5 else text


def other_form(text):
    nfc = unicodedata.normalize("NFC", text)
    return unicodedata.normalize("NFD", text) if text == nfc else nfc


def rand_int(rng):
    return rng.choice([
        rng.randint(-1000, 1000), rng.randint(-2**31, 2**31), rng.randint(-2**63, 2**63 - 1),
        2**63 - 1, -2**63, 0, 2**53 + 1,
    ])


def rand_real(rng):
    return rng.choice([
        rng.uniform(-1e6, 1e6), rng.random(), 1e300, -2.5e-300, 0.1, float(rng.randint(-100, 100)),
        rng.uniform(-1, 1) * 10 ** rng.randint(-20, 20), 1.0 / 3.0,
    ])


def rand_blob(rng, low, high):
    return rng.randbytes(rng.randint(low, high))


def big_row(rng, overflow_prob=0.04):
    text = rand_text(rng, 4000, 20000) if rng.random() < overflow_prob else rand_text(rng, 120, 400)
    blob = rand_blob(rng, 3000, 9000) if rng.random() < overflow_prob / 2 else rand_blob(rng, 0, 80)
    row = [rand_int(rng), rand_real(rng), text, blob]
    # Now and then a NULL, or a value of another storage class.
    if rng.random() < 0.05:
        row[rng.randrange(4)] = None
    if rng.random() < 0.03:
        row[0] = rand_text(rng, 1, 10)
    return row


def word_key(rng):
    word = rng.choice(WORDS)
    form = rng.choice(["NFC", "NFD"])
    return unicodedata.normalize(form, "%s %04d" % (word, rng.randint(0, 1999))), rng.randint(0, 2)


# ----------------------------------------------------------------------------
# The writer


SCHEMA = """
CREATE TABLE big(id INTEGER PRIMARY KEY, i INTEGER, r REAL, t TEXT, b BLOB);
CREATE INDEX big_i ON big(i);
CREATE TABLE words(w TEXT, lang INTEGER, n INTEGER, note TEXT, PRIMARY KEY(lang, w)) WITHOUT ROWID;
CREATE INDEX words_n ON words(n);
CREATE TABLE plain(a, b);
CREATE TABLE tick(id INTEGER PRIMARY KEY);
"""


class Writer:
    def __init__(self, path, args, rng):
        self.args = args
        self.rng = rng
        self.db = apsw.Connection(path)
        self.db.set_busy_timeout(10000)
        self.tables = {}  # name -> {"columns": [...], "kind": "ipk"|"rowid"|"wr", "pk": [...]}
        self.ops_log = []

    def execute(self, sql, bindings=None):
        return list(self.db.execute(sql, bindings) if bindings is not None else self.db.execute(sql))

    def setup(self):
        a = self.args
        self.execute("PRAGMA encoding='%s'" % {"utf-8": "UTF-8", "utf-16le": "UTF-16le"}[a.encoding])
        self.execute("PRAGMA auto_vacuum=%s" % a.auto_vacuum.upper())
        if a.page_size:
            self.execute("PRAGMA page_size=%d" % a.page_size)
        self.execute("PRAGMA secure_delete=%s" % ("ON" if a.secure_delete == "on" else "OFF"))
        mode = self.execute("PRAGMA journal_mode=%s" % a.journal.upper())[0][0]
        if mode.lower() != a.journal:
            raise RuntimeError("journal_mode is %s, not %s" % (mode, a.journal))
        self.execute(SCHEMA)
        with self.db:
            for _ in range(a.rows):
                self.execute("INSERT INTO big(i, r, t, b) VALUES (?, ?, ?, ?)", big_row(self.rng, 0.02))
            for _ in range(a.rows * 2 // 3):
                w, lang = word_key(self.rng)
                self.execute("INSERT OR IGNORE INTO words VALUES (?, ?, ?, ?)",
                             (w, lang, rand_int(self.rng), rand_text(self.rng, 120, 350)))
            for _ in range(a.rows // 10):
                self.execute("INSERT INTO plain VALUES (?, ?)", (rand_int(self.rng), rand_text(self.rng, 5, 60)))
        got = {
            "encoding": self.execute("PRAGMA encoding")[0][0],
            "auto_vacuum": self.execute("PRAGMA auto_vacuum")[0][0],
            "secure_delete": self.execute("PRAGMA secure_delete")[0][0],
            "journal_mode": self.execute("PRAGMA journal_mode")[0][0],
            "page_count": self.execute("PRAGMA page_count")[0][0],
            "page_size": self.execute("PRAGMA page_size")[0][0],
        }
        for (name,) in self.execute("SELECT name FROM sqlite_schema WHERE type='table' AND name NOT LIKE 'sqlite_%'"):
            info = self.execute("PRAGMA table_info(%s)" % name)
            columns = [row[1] for row in info]
            pk = [row[1] for row in sorted((r for r in info if r[5]), key=lambda r: r[5])]
            wr = self.execute("SELECT wr FROM pragma_table_list WHERE name=? AND schema='main'", (name,))[0][0]
            if wr:
                kind = "wr"
            elif len(pk) == 1 and [r[2] for r in info if r[5]][0].upper() == "INTEGER":
                kind = "ipk"
            elif not pk:
                kind = "rowid"
            else:
                raise RuntimeError("table %s: a rowid table with a non-INTEGER primary key is not supported" % name)
            self.tables[name.lower()] = {"columns": columns, "kind": kind, "pk": pk}
        return got

    # One commit: its changeset (bytes), or None when it failed.
    def commit(self, tick_id, ops=True):
        session = apsw.Session(self.db, "main")
        session.config(apsw.SQLITE_SESSION_OBJCONFIG_ROWID, 1)
        session.attach()
        try:
            self.execute("BEGIN IMMEDIATE")
            try:
                if ops:
                    for _ in range(self.rng.randint(1, 4)):
                        self.random_op()
                self.execute("INSERT INTO tick(id) VALUES (?)", (tick_id,))
                self.execute("COMMIT")
            except BaseException:
                if not self.db.get_autocommit():
                    self.execute("ROLLBACK")
                raise
            return session.changeset()
        finally:
            session.close()

    def count(self, table):
        return self.execute("SELECT count(*) FROM %s" % table)[0][0]

    def random_op(self, depth=0):
        rng = self.rng
        ops = [
            (3, self.big_insert), (2, self.big_delete_range), (1, self.big_delete_scattered),
            (3, self.big_update), (2, self.big_update_nf), (1, self.big_update_equal), (1, self.big_overflow),
            (3, self.words_insert), (2, self.words_delete_range), (2, self.words_update), (2, self.words_update_nf),
            (1, self.words_key_nf), (1, self.words_replace), (1, self.plain_op),
        ]
        if depth == 0:
            ops += [(1, self.savepoint_rollback), (0.5, self.savepoint_release)]
        if self.args.auto_vacuum == "incremental":
            ops.append((1.5, self.incremental_vacuum))
        # Keep the tables near their size: refill when deletes have won.
        if self.count("big") < self.args.rows * 0.7:
            ops.append((6, self.big_bulk_insert))
        if self.count("words") < self.args.rows * 0.45:
            ops.append((6, self.words_bulk_insert))
        total = sum(w for w, _ in ops)
        pick = rng.uniform(0, total)
        for weight, op in ops:
            pick -= weight
            if pick <= 0:
                break
        op()

    def log(self, what):
        self.ops_log.append(what)

    # Rows are picked by the seeded generator (never SQLite's random()), so a
    # seed makes the same commits.
    def pick(self, sql, k):
        n = self.count(sql.split(" FROM ")[1].split()[0])
        if n == 0:
            return []
        offsets = sorted(set(self.rng.randrange(n) for _ in range(k)))
        return [self.execute(sql + " LIMIT 1 OFFSET ?", (o,))[0] for o in offsets]

    def random_big_ids(self, k):
        return [r[0] for r in self.pick("SELECT id FROM big ORDER BY id", k)]

    def big_insert(self, low=1, high=40):
        rng = self.rng
        n = rng.randint(low, high)
        for _ in range(n):
            if rng.random() < 0.15:
                # An id that may have been used before (a reused rowid), or a fresh high one.
                self.execute("INSERT OR REPLACE INTO big(id, i, r, t, b) VALUES (?, ?, ?, ?, ?)",
                             [rng.randint(1, self.args.rows * 2)] + big_row(rng))
            else:
                self.execute("INSERT INTO big(i, r, t, b) VALUES (?, ?, ?, ?)", big_row(rng))
        self.log("big_insert %d" % n)

    def big_bulk_insert(self):
        self.big_insert(100, 250)

    def big_delete_range(self):
        rng = self.rng
        k = rng.randint(50, 200)
        row = self.random_big_ids(1)
        if not row:
            return
        self.execute("DELETE FROM big WHERE id IN (SELECT id FROM big WHERE id >= ? ORDER BY id LIMIT ?)", (row[0], k))
        self.log("big_delete_range %d from %d" % (k, row[0]))

    def big_delete_scattered(self):
        ids = self.random_big_ids(self.rng.randint(1, 10))
        self.execute("DELETE FROM big WHERE id IN (%s)" % ",".join(map(str, ids)) if ids else "SELECT 1")
        self.log("big_delete_scattered %d" % len(ids))

    def big_update(self):
        rng = self.rng
        ids = self.random_big_ids(rng.randint(1, 20))
        for rid in ids:
            column = rng.choice(["i", "r", "t", "b", "ir", "all"])
            new = big_row(rng, 0.01)
            if column == "i":
                self.execute("UPDATE big SET i=? WHERE id=?", (new[0], rid))
            elif column == "r":
                self.execute("UPDATE big SET r=? WHERE id=?", (new[1], rid))
            elif column == "t":
                self.execute("UPDATE big SET t=? WHERE id=?", (new[2], rid))
            elif column == "b":
                self.execute("UPDATE big SET b=? WHERE id=?", (new[3], rid))
            elif column == "ir":
                self.execute("UPDATE big SET i=i+1, r=r*2 WHERE id=? AND typeof(i)='integer' AND i BETWEEN -1000000 AND 1000000", (rid,))
            else:
                self.execute("UPDATE big SET i=?, r=?, t=?, b=? WHERE id=?", new + [rid])
        if rng.random() < 0.1 and ids:
            # A rowid change: the old row goes, a new key comes.
            new_id = rng.randint(self.args.rows * 2, self.args.rows * 4)
            self.execute("UPDATE OR IGNORE big SET id=? WHERE id=?", (new_id, ids[0]))
        self.log("big_update %d" % len(ids))

    def big_update_nf(self):
        # Only the Unicode normal form of the text changes.
        n = 0
        for rid in self.random_big_ids(self.rng.randint(1, 5)):
            row = self.execute("SELECT t FROM big WHERE id=? AND typeof(t)='text'", (rid,))
            if row and other_form(row[0][0]) != row[0][0]:
                self.execute("UPDATE big SET t=? WHERE id=?", (other_form(row[0][0]), rid))
                n += 1
        self.log("big_update_nf %d" % n)

    def big_update_equal(self):
        ids = self.random_big_ids(self.rng.randint(1, 20))
        if not ids:
            return
        which = self.rng.choice(["t=t", "i=i, r=r", "b=b", "t=t||''"])
        self.execute("UPDATE big SET %s WHERE id IN (%s)" % (which, ",".join(map(str, ids))))
        self.log("big_update_equal %d" % len(ids))

    def big_overflow(self):
        rng = self.rng
        for rid in self.random_big_ids(rng.randint(1, 3)):
            if rng.random() < 0.5:
                self.execute("UPDATE big SET t=? WHERE id=?", (rand_text(rng, 4000, 20000), rid))
            else:
                self.execute("UPDATE big SET b=? WHERE id=?", (rand_blob(rng, 3000, 12000), rid))
        # And shrink one that overflows.
        self.execute("UPDATE big SET t=substr(t, 1, 100) WHERE id=(SELECT id FROM big WHERE length(t) > 3000 ORDER BY id LIMIT 1 OFFSET ?)",
                     (self.rng.randrange(3),))
        self.log("big_overflow")

    def words_insert(self, low=1, high=40):
        rng = self.rng
        n = rng.randint(low, high)
        for _ in range(n):
            w, lang = word_key(rng)
            self.execute("INSERT OR IGNORE INTO words VALUES (?, ?, ?, ?)", (w, lang, rand_int(rng), rand_text(rng, 120, 350)))
            if rng.random() < 0.3:
                # The same word in the other normal form: another key.
                self.execute("INSERT OR IGNORE INTO words VALUES (?, ?, ?, ?)",
                             (other_form(w), lang, rand_int(rng), rand_text(rng, 120, 350)))
        self.log("words_insert %d" % n)

    def words_bulk_insert(self):
        self.words_insert(100, 250)

    def random_word_keys(self, k):
        return self.pick("SELECT w, lang FROM words ORDER BY lang, w", k)

    def words_delete_range(self):
        k = self.rng.randint(50, 200)
        start = self.random_word_keys(1)
        if not start:
            return
        w, lang = start[0]
        self.execute("DELETE FROM words WHERE (lang, w) IN (SELECT lang, w FROM words WHERE (lang, w) >= (?, ?) ORDER BY lang, w LIMIT ?)",
                     (lang, w, k))
        self.log("words_delete_range %d" % k)

    def words_update(self):
        rng = self.rng
        keys = self.random_word_keys(rng.randint(1, 20))
        for w, lang in keys:
            if rng.random() < 0.5:
                self.execute("UPDATE words SET n=? WHERE w=? AND lang=?", (rand_int(rng), w, lang))
            else:
                self.execute("UPDATE words SET note=? WHERE w=? AND lang=?", (rand_text(rng, 120, 350), w, lang))
        self.log("words_update %d" % len(keys))

    def words_update_nf(self):
        n = 0
        for w, lang in self.random_word_keys(self.rng.randint(1, 8)):
            note = self.execute("SELECT note FROM words WHERE w=? AND lang=? AND typeof(note)='text'", (w, lang))
            if note and other_form(note[0][0]) != note[0][0]:
                self.execute("UPDATE words SET note=? WHERE w=? AND lang=?", (other_form(note[0][0]), w, lang))
                n += 1
        self.log("words_update_nf %d" % n)

    def words_key_nf(self):
        # The key itself changes form only: for SQLite another key (a delete and an insert).
        n = 0
        for w, lang in self.random_word_keys(self.rng.randint(1, 4)):
            if other_form(w) != w:
                self.execute("UPDATE OR IGNORE words SET w=? WHERE w=? AND lang=?", (other_form(w), w, lang))
                n += 1
        self.log("words_key_nf %d" % n)

    def words_replace(self):
        rng = self.rng
        keys = self.random_word_keys(rng.randint(1, 10))
        for w, lang in keys:
            if rng.random() < 0.5:
                # The same values again: no change for SQLite's session.
                self.execute("INSERT OR REPLACE INTO words SELECT * FROM words WHERE w=? AND lang=?", (w, lang))
            else:
                self.execute("INSERT OR REPLACE INTO words VALUES (?, ?, ?, ?)", (w, lang, rand_int(rng), rand_text(rng, 120, 350)))
        self.log("words_replace %d" % len(keys))

    def plain_op(self):
        rng = self.rng
        choice = rng.randrange(3)
        if choice == 0:
            for _ in range(rng.randint(1, 10)):
                self.execute("INSERT INTO plain VALUES (?, ?)", (rand_int(rng), rand_text(rng, 5, 60)))
        elif choice == 1:
            for (rowid,) in self.pick("SELECT rowid FROM plain ORDER BY rowid", rng.randint(1, 10)):
                self.execute("DELETE FROM plain WHERE rowid=?", (rowid,))
        else:
            value = rand_blob(rng, 0, 40) if rng.random() < 0.5 else rand_real(rng)
            for (rowid,) in self.pick("SELECT rowid FROM plain ORDER BY rowid", rng.randint(1, 5)):
                self.execute("UPDATE plain SET b=? WHERE rowid=?", (value, rowid))
        self.log("plain_op %d" % choice)

    def savepoint_rollback(self):
        self.execute("SAVEPOINT s")
        for _ in range(self.rng.randint(1, 3)):
            self.random_op(depth=1)
        self.execute("ROLLBACK TO s")
        self.execute("RELEASE s")
        self.log("savepoint_rollback")

    def savepoint_release(self):
        self.execute("SAVEPOINT s")
        for _ in range(self.rng.randint(1, 2)):
            self.random_op(depth=1)
        self.execute("RELEASE s")
        self.log("savepoint_release")

    def incremental_vacuum(self):
        pages = self.rng.choice([0, 1, 5, 20, 100])
        self.execute("PRAGMA incremental_vacuum(%d)" % pages if pages else "PRAGMA incremental_vacuum")
        self.log("incremental_vacuum %d" % pages)

    def checkpoint(self, mode):
        return self.execute("PRAGMA wal_checkpoint(%s)" % mode)[0]


# ----------------------------------------------------------------------------
# The feed


class Feed:
    """`sqlive --changes DB` as a child; its lines parsed as they come."""

    def __init__(self, sqlive, path, log_path, err_path):
        self.log = open(log_path, "wb")
        self.err = open(err_path, "wb")
        self.proc = subprocess.Popen([sqlive, "--changes", path], stdout=subprocess.PIPE, stderr=self.err,
                                     stdin=subprocess.DEVNULL)
        self.cond = threading.Condition()
        self.commits = {}  # feed commit number -> [line dicts]
        self.order = []  # feed commit numbers in the order first seen
        self.ticks = {}  # tick id -> feed commit number (first seen)
        self.tick_unknown_commits = set()  # feed commits with tick unknown
        self.bad_lines = []
        self.lines = 0
        self.last_line = time.monotonic()
        self.eof = False
        self.stopped = False
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        for raw in self.proc.stdout:
            self.log.write(raw)
            try:
                line = json.loads(raw)
                number = line["commit"]
                table = line["table"].lower()
                op = line["op"]
            except Exception as error:  # noqa: BLE001 - any malformed line is reported
                with self.cond:
                    self.bad_lines.append((raw[:300], repr(error)))
                continue
            with self.cond:
                self.lines += 1
                self.last_line = time.monotonic()
                if number not in self.commits:
                    self.commits[number] = []
                    self.order.append(number)
                self.commits[number].append(line)
                if table == "tick":
                    if op == "unknown":
                        self.tick_unknown_commits.add(number)
                    elif op == "insert" and isinstance(line.get("key"), dict) and "rowid" in line["key"]:
                        self.ticks.setdefault(line["key"]["rowid"], number)
                self.cond.notify_all()
        with self.cond:
            self.eof = True
            self.cond.notify_all()

    def last_commit(self):
        with self.cond:
            return self.order[-1] if self.order else None

    def wait(self, predicate, timeout):
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                if predicate():
                    return True
                left = deadline - time.monotonic()
                if left <= 0 or self.eof:
                    return predicate()
                self.cond.wait(min(left, 0.25))

    def wait_tick(self, tick_id, timeout, after=None, quiet=0.0):
        """Until the feed printed `tick_id`, or (with `after`) a later commit whose tick is
        unknown (and then, with `quiet`, no line for that many seconds)."""
        def seen():
            if tick_id in self.ticks:
                return True
            return (after is not None and any(n > after for n in self.tick_unknown_commits)
                    and time.monotonic() - self.last_line >= quiet)
        return self.wait(seen, timeout)

    def pause(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGSTOP)
            self.stopped = True

    def resume(self):
        if self.stopped and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)
        self.stopped = False

    def stop(self):
        self.resume()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.thread.join(10)
        self.log.close()
        self.err.close()
        return self.proc.returncode


# ----------------------------------------------------------------------------
# Comparison


def canon(value):
    """A hashable, exact form of a value (for keys)."""
    if value is None:
        return ("null",)
    if isinstance(value, bool):
        return ("int", int(value))
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return ("int", int(value)) if value.is_integer() and abs(value) < 2**63 else ("real", value)
    if isinstance(value, str):
        return ("text", value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return ("blob", bytes(value))
    raise TypeError(type(value))


def from_json(value):
    if isinstance(value, dict) and set(value) == {"$blob"}:
        return base64.b64decode(value["$blob"], validate=True)
    return value


def same(expected, got):
    """Exact equality of a SQLite value and a feed value (decoded)."""
    if expected is None:
        return got is None
    if isinstance(expected, float):
        if expected in (float("inf"), float("-inf")):
            # Documented (protocol.md, "Value encoding"): JSON has no infinities.
            return got == ("Infinity" if expected > 0 else "-Infinity")
        if isinstance(got, float):
            return got == expected or (got != got and expected != expected)
        # The protocol's known loss: an integral REAL is written as `3`.
        return isinstance(got, int) and not isinstance(got, bool) and expected.is_integer() and float(got) == expected and int(expected) == got
    if isinstance(expected, bool) or isinstance(expected, int):
        return isinstance(got, int) and not isinstance(got, bool) and got == expected
    if isinstance(expected, str):
        return isinstance(got, str) and got == expected
    if isinstance(expected, (bytes, bytearray, memoryview)):
        return isinstance(got, bytes) and got == bytes(expected)
    return False


def same_feed(a, b):
    """Two feed values equal (for columns the changeset says did not change)."""
    if type(a) is not type(b):
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
            return float(a) == float(b)
        return False
    return a == b


def short(value, limit=60):
    if isinstance(value, (bytes, bytearray)):
        text = "x'%s'" % bytes(value[:limit // 2]).hex()
        return text + ("…(%d bytes)" % len(value) if len(value) > limit // 2 else "")
    if isinstance(value, str):
        text = repr(value[:limit]) + ("…(%d chars)" % len(value) if len(value) > limit else "")
        return text
    return repr(value)


def clip(line, limit=240):
    text = json.dumps(line, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"


def short_row(row, limit=40):
    if row is None:
        return "null"
    return "{" + ", ".join("%s: %s" % (k, short(v, limit)) for k, v in row.items() if v is not NO_CHANGE) + "}"


class Expected:
    """A changeset as rows: (table, key) -> (op, old, new) with column names."""

    def __init__(self, changeset, tables):
        self.rows = {}
        self.order = []
        if not changeset:
            return
        for change in apsw.Changeset.iter(changeset):
            name = change.name.lower()
            info = tables[name]
            columns = info["columns"]
            old, new = change.old, change.new
            if info["kind"] == "rowid":
                # SQLITE_SESSION_OBJCONFIG_ROWID: the rowid comes first.
                names = ["\0rowid"] + columns
            else:
                names = columns
            oldd = dict(zip(names, old)) if old is not None else None
            newd = dict(zip(names, new)) if new is not None else None
            keysrc = oldd if change.op in ("UPDATE", "DELETE") else newd
            if info["kind"] == "rowid":
                key = (("rowid", ("int", keysrc["\0rowid"])),)
                for d in (oldd, newd):
                    if d is not None:
                        d.pop("\0rowid")
            elif info["kind"] == "ipk":
                key = (("rowid", ("int", keysrc[info["pk"][0]])),)
            else:
                key = tuple(sorted((c, canon(keysrc[c])) for c in info["pk"]))
            self.rows[(name, key)] = (change.op.lower(), oldd, newd)
            self.order.append((name, key))

    def tables(self):
        return {t for t, _ in self.rows}


def feed_key(line, info):
    key = line.get("key")
    if not isinstance(key, dict):
        return None
    if info is None:
        return tuple(sorted((c, canon(from_json(v))) for c, v in key.items()))
    if info["kind"] in ("rowid", "ipk"):
        return (("rowid", canon(key.get("rowid"))),) if set(key) == {"rowid"} else ("bad", json.dumps(key))
    return tuple(sorted((c, canon(from_json(v))) for c, v in key.items()))


class Stats:
    def __init__(self, examples):
        self.limit = examples
        self.n = {k: 0 for k in ("changeset_rows", "derived", "ok", "abstained", "missing", "invented", "wrong", "merged",
                                 "unknown_lines", "duplicate_lines", "out_of_order", "timeouts")}
        self.examples = {k: [] for k in ("missing", "invented", "wrong", "merged", "late")}
        self.reasons = {}
        self.passed = 0
        self.failed = 0
        self.failed_commits = []
        self.late = set()  # lockstep: commits not in the feed within --wait

    def example(self, kind, text):
        if len(self.examples[kind]) < self.limit:
            self.examples[kind].append(text)


def compare_group(writer_ids, changesets, feed_lines, tables, stats, label):
    """Compares the writer commits `writer_ids` (their changesets concatenated) with feed lines."""
    if len(changesets) == 0:
        cs = b""
    elif len(changesets) == 1:
        cs = changesets[0]
    else:
        cs = changesets[0]
        for more in changesets[1:]:
            cs = apsw.Changeset.concat(cs, more)
    expected = Expected(cs, tables)
    unknown = {}
    got = {}
    duplicates = 0
    defects = 0
    for line in feed_lines:
        table = line["table"].lower()
        if line["op"] == "unknown":
            unknown.setdefault(table, line.get("reason"))
            stats.n["unknown_lines"] += 1
            reason = str(line.get("reason"))
            stats.reasons[reason] = stats.reasons.get(reason, 0) + 1
            continue
        key = feed_key(line, tables.get(table))
        if (table, key) in got:
            duplicates += 1
            stats.n["duplicate_lines"] += 1
            stats.n["invented"] += 1
            defects += 1
            stats.example("invented", "%s %s %s: a second line for the same key: %s" % (label, table, key, clip(line)))
            continue
        got[(table, key)] = line
    stats.n["changeset_rows"] += len(expected.rows)
    for (table, key) in expected.order:
        op, old, new = expected.rows[(table, key)]
        keytext = ", ".join("%s=%s" % (c, short(v[-1] if len(v) > 1 else None)) for c, v in key)
        if table in unknown or "*" in unknown:
            stats.n["abstained"] += 1
            continue
        line = got.pop((table, key), None)
        if line is None:
            stats.n["missing"] += 1
            defects += 1
            stats.example("missing", "%s %s [%s] %s old=%s new=%s" % (label, table, keytext, op, short_row(old), short_row(new)))
            continue
        stats.n["derived"] += 1
        problems = check_row(op, old, new, line, tables.get(table))
        if problems:
            stats.n["wrong"] += 1
            defects += 1
            stats.example("wrong", "%s %s [%s] expected %s: %s; feed: %s" % (
                label, table, keytext, op, "; ".join(problems[:3]), clip(line)))
        else:
            stats.n["ok"] += 1
    for (table, key), line in got.items():
        if table in unknown or "*" in unknown:
            continue  # the table is abstained from in this commit: its other lines are not judged
        stats.n["invented"] += 1
        defects += 1
        stats.example("invented", "%s %s: %s" % (label, table, clip(line)))
    return defects


def check_row(op, old, new, line, info):
    problems = []
    fop = line["op"]
    if fop != op:
        problems.append("op %s, feed %s" % (op, fop))
    columns = info["columns"] if info else []
    fold = line.get("old")
    fnew = line.get("new")
    fold = {k: from_json(v) for k, v in fold.items()} if isinstance(fold, dict) else fold
    fnew = {k: from_json(v) for k, v in fnew.items()} if isinstance(fnew, dict) else fnew
    for name, frow, needed in (("old", fold, op in ("update", "delete")), ("new", fnew, op in ("update", "insert"))):
        if needed and not isinstance(frow, dict):
            problems.append("feed %s is %s" % (name, json.dumps(line.get(name))))
        elif not needed and frow is not None:
            problems.append("feed %s should be null" % name)
        elif needed and sorted(frow) != sorted(columns):
            problems.append("feed %s has columns %s, table has %s" % (name, sorted(frow), sorted(columns)))
    if problems:
        return problems
    pk = set(info["pk"]) if info and info["kind"] != "rowid" else set()
    for column in columns:
        eo = old.get(column, NO_CHANGE) if old else NO_CHANGE
        en = new.get(column, NO_CHANGE) if new else NO_CHANGE
        if op == "insert":
            if not same(en, fnew[column]):
                problems.append("new.%s %s, feed %s" % (column, short(en), short(fnew[column])))
        elif op == "delete":
            if not same(eo, fold[column]):
                problems.append("old.%s %s, feed %s" % (column, short(eo), short(fold[column])))
        else:
            if eo is not NO_CHANGE and not same(eo, fold[column]):
                problems.append("old.%s %s, feed %s" % (column, short(eo), short(fold[column])))
            if en is not NO_CHANGE and not same(en, fnew[column]):
                problems.append("new.%s %s, feed %s" % (column, short(en), short(fnew[column])))
            if column in pk and en is NO_CHANGE and eo is not NO_CHANGE and not same(eo, fnew[column]):
                problems.append("key new.%s %s, feed %s" % (column, short(eo), short(fnew[column])))
            if eo is NO_CHANGE and en is NO_CHANGE and not same_feed(fold[column], fnew[column]):
                problems.append("%s did not change, feed old %s new %s" % (column, short(fold[column]), short(fnew[column])))
            if column not in pk and eo is not NO_CHANGE and en is NO_CHANGE:
                problems.append("%s: changeset has old without new" % column)
    return problems


def judge(commits, feed, tables, stats, start_feed_commit):
    """commits: {tick_id: changeset} of the checked writer commits (1..N, in order)."""
    writer_ids = sorted(commits)
    valid = set(writer_ids) | {END_MARKER}
    feed_order = [n for n in sorted(feed.commits) if start_feed_commit is None or n > start_feed_commit]
    # Anchors: feed commits naming writer commits by their tick rows.
    ticks_of = {}
    for n in feed_order:
        ids = []
        for line in feed.commits[n]:
            if line["table"].lower() == "tick" and line["op"] == "insert" and isinstance(line.get("key"), dict):
                rid = line["key"].get("rowid")
                if rid in valid:
                    ids.append(rid)
        ticks_of[n] = sorted(set(ids))
    claimed = set()
    results = {}  # writer id -> bool (right)
    extra_failures = 0
    anchors = []  # (feed commit, writer ids claimed)
    last_max = 0
    for n in feed_order:
        ids = [i for i in ticks_of[n] if i not in claimed]
        dup = [i for i in ticks_of[n] if i in claimed]
        if dup:
            stats.example("invented", "feed commit %d repeats writer commit(s) %s" % (n, dup))
        if not ticks_of[n]:
            continue
        if ids and min(ids) < last_max:
            stats.n["out_of_order"] += 1
        if ids:
            last_max = max(last_max, max(ids))
        claimed.update(ids)
        anchors.append((n, ids))
    # Walk the feed: anchored commits against their writer commits, and each gap
    # (unanchored feed commits between anchors) against the unclaimed writer commits between.
    anchor_index = {n: ids for n, ids in anchors}
    gap_feed = []
    prev_ids = [0]

    def close_gap(upto_ids):
        nonlocal extra_failures
        low = max(prev_ids) if prev_ids else 0
        high = min(upto_ids) if upto_ids else (max(writer_ids) + 1 if writer_ids else 1)
        gap_writers = [w for w in writer_ids if low < w < high and w not in claimed]
        for w in gap_writers:
            claimed.add(w)
        if not gap_writers and not gap_feed:
            return
        if len(gap_feed) == len(gap_writers):
            for n, w in zip(gap_feed, gap_writers):
                d = compare_group([w], [commits[w]], feed.commits[n], tables, stats, "commit %d (feed %d, tick not derived)" % (w, n))
                results[w] = d == 0
            return
        if not gap_writers:
            lines = [l for n in gap_feed for l in feed.commits[n]]
            d = compare_group([], [], lines, tables, stats, "feed %s (no writer commit)" % gap_feed)
            if d:
                extra_failures += 1
                stats.failed_commits.append("feed %s" % gap_feed)
            return
        lines = [l for n in gap_feed for l in feed.commits[n]]
        label = "commits %s (feed %s)" % (gap_writers, gap_feed or "none")
        d = compare_group(gap_writers, [commits[w] for w in gap_writers], lines, tables, stats, label)
        derived_lines = [l for l in lines if l["op"] != "unknown"]
        if gap_feed and len(gap_feed) < len(gap_writers) and derived_lines:
            stats.n["merged"] += 1
            d += 1
            stats.example("merged", "%s: %d writer commits in %d feed commit(s) with derived rows and no tick" % (
                label, len(gap_writers), len(gap_feed)))
        for w in gap_writers:
            results[w] = d == 0

    for n in feed_order:
        if n not in anchor_index:
            gap_feed.append(n)
            continue
        ids = anchor_index[n]
        if not ids:
            # Only ticks of writer commits another feed commit had: a repeat.
            d = compare_group([], [], feed.commits[n], tables, stats, "feed %d (a repeated commit)" % n)
            if d:
                extra_failures += 1
                stats.failed_commits.append("feed %d" % n)
            continue
        close_gap(ids)
        gap_feed.clear()
        checked = [i for i in ids if i != END_MARKER]
        if len(ids) > 1 and checked:
            stats.n["merged"] += 1
            stats.example("merged", "feed commit %d holds the ticks of writer commits %s" % (n, ids))
        if END_MARKER in ids and not checked:
            prev_ids[:] = [max(prev_ids + [max(writer_ids, default=0)])]
            continue
        changesets = [commits[i] for i in checked]
        d = compare_group(checked, changesets, [l for l in feed.commits[n] if not (l["table"].lower() == "tick" and (l.get("key") or {}).get("rowid") == END_MARKER)],
                          tables, stats, "commit %s (feed %d)" % (",".join(map(str, checked)), n))
        ok = d == 0 and len(ids) == 1
        for i in checked:
            results[i] = ok
        prev_ids[:] = [max(ids) if END_MARKER not in ids else max(checked)]
    close_gap([])
    gap_feed.clear()
    for w in writer_ids:
        if w not in results:
            # Never seen: every row missing.
            d = compare_group([w], [commits[w]], [], tables, stats, "commit %d (not in the feed)" % w)
            results[w] = d == 0
    for w in sorted(stats.late):
        # Lockstep: not in the feed within --wait is a failure even if it came later.
        if w in results:
            results[w] = False
            stats.example("late", "commit %d: not in the feed within --wait" % w)
    stats.passed = sum(1 for w in writer_ids if results[w])
    stats.failed = sum(1 for w in writer_ids if not results[w]) + extra_failures
    stats.failed_commits = [w for w in writer_ids if not results[w]] + stats.failed_commits


# ----------------------------------------------------------------------------
# A run


def main(argv=None):
    p = argparse.ArgumentParser(description="Row oracle for `sqlive --changes` (issue #55).")
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--sqlive", default=os.environ.get("SQLIVE", os.path.join(here, "..", "..", ".build", "debug", "sqlive")))
    p.add_argument("--journal", choices=["wal", "delete"], default="wal")
    p.add_argument("--secure-delete", choices=["off", "on"], default="off")
    p.add_argument("--auto-vacuum", choices=["none", "full", "incremental"], default="none")
    p.add_argument("--encoding", choices=["utf-8", "utf-16le"], default="utf-8")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--page-size", type=int, default=0, help="PRAGMA page_size (default: SQLite's, 4096)")
    p.add_argument("--commits", type=int, default=300)
    p.add_argument("--rows", type=int, default=3000, help="rows of `big` at the start (words: 2/3 of it)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--lockstep", dest="lockstep", action="store_true", default=True,
                      help="wait for each commit's tick in the feed before the next (default)")
    mode.add_argument("--free", dest="lockstep", action="store_false", help="no waiting: judge at the end")
    p.add_argument("--wait", type=float, default=10.0, help="seconds to wait for one commit in lockstep")
    p.add_argument("--pace-ms", type=float, default=0.0,
                   help="free-running: start a commit every this many ms (a writer at a human or app pace)")
    p.add_argument("--checkpoint-prob", type=float, default=0.0, help="chance of a checkpoint after a commit (WAL)")
    p.add_argument("--checkpoint-modes", default="PASSIVE,FULL,RESTART,TRUNCATE")
    p.add_argument("--pause-every", type=int, default=0, help="every N commits, SIGSTOP sqlive (0: never)")
    p.add_argument("--pause-commits", type=int, default=5, help="commits made while sqlive is stopped")
    p.add_argument("--time-limit", type=float, default=600.0, help="stop making commits after this many seconds")
    p.add_argument("--examples", type=int, default=4)
    p.add_argument("--dir", help="work directory (kept); default: a temporary one, removed")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--preset", choices=["ci"], help="ci: %d short seeded runs in a row (--commits applies to each, "
                   "default %d), one closing line for all" % (len(CI_PRESET), CI_COMMITS))
    args = p.parse_args(argv)
    if not args.preset:
        passed, failed, status = run(args)
        print("%d passed, %d failed" % (passed, failed), flush=True)
        return status
    explicit = {a.split("=")[0] for a in (argv if argv is not None else sys.argv[1:]) if a.startswith("--")}
    totals = [0, 0]
    worst = 0
    for overrides in CI_PRESET:
        one = argparse.Namespace(**vars(args))
        if "--commits" not in explicit:
            one.commits = CI_COMMITS
        if "--rows" not in explicit:
            one.rows = CI_ROWS
        for name, value in overrides.items():
            setattr(one, name, value)
        passed, failed, status = run(one)
        totals[0] += passed
        totals[1] += failed
        worst = max(worst, status)
    print("%d passed, %d failed" % tuple(totals), flush=True)
    return worst


# `--preset ci`: each a run of CI_COMMITS commits over CI_ROWS rows.
CI_COMMITS = 80
CI_ROWS = 2000
CI_PRESET = [
    {"journal": "wal", "secure_delete": "off", "checkpoint_prob": 0.1, "seed": 11},
    {"journal": "wal", "secure_delete": "on", "seed": 12},
    {"journal": "wal", "auto_vacuum": "incremental", "encoding": "utf-16le", "seed": 13},
    {"journal": "delete", "secure_delete": "off", "seed": 14},
    {"journal": "wal", "lockstep": False, "pause_every": 20, "pause_commits": 4, "checkpoint_prob": 0.05, "seed": 15},
]


def run(args):
    """One run; returns (commits right, commits wrong, exit status)."""
    sqlive = os.path.abspath(args.sqlive)
    if not os.access(sqlive, os.X_OK):
        print("oracle: no sqlive at %s (--sqlive or $SQLIVE)" % sqlive, file=sys.stderr)
        return 0, 1, 2
    work = args.dir or tempfile.mkdtemp(prefix="sqlive-oracle-")
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "oracle.db")
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    rng = random.Random(args.seed)
    started = time.monotonic()
    config = "journal=%s secure_delete=%s auto_vacuum=%s encoding=%s%s seed=%d commits=%d %s%s%s" % (
        args.journal, args.secure_delete, args.auto_vacuum, args.encoding,
        " page_size=%d" % args.page_size if args.page_size else "", args.seed, args.commits,
        "lockstep" if args.lockstep else "free",
        " checkpoint=%g(%s)" % (args.checkpoint_prob, args.checkpoint_modes) if args.checkpoint_prob else "",
        " pause-every=%d/%d" % (args.pause_every, args.pause_commits) if args.pause_every else "")
    print("oracle: %s" % config, flush=True)

    writer = Writer(path, args, rng)
    try:
        got = writer.setup()
    except Exception as error:  # noqa: BLE001
        print("oracle: setup failed: %s" % error, file=sys.stderr)
        return 0, 1, 2
    if not args.quiet:
        print("oracle: SQLite %s (apsw %s), %s, %s" % (apsw.sqlite_lib_version(), apsw.apsw_version(), got, work), flush=True)

    feed = Feed(sqlive, path, os.path.join(work, "feed.jsonl"), os.path.join(work, "sqlive.stderr"))
    stats = Stats(args.examples)
    commits = {}
    failed_commits = 0
    notes = []
    status = 0
    try:
        # The feed starts watching when it starts: marker commits until one shows.
        start_feed_commit = None
        for k in range(30):
            if feed.proc.poll() is not None:
                break
            writer.commit(START_MARKER + k, ops=False)
            if feed.wait_tick(START_MARKER + k, 1.0):
                start_feed_commit = feed.ticks[START_MARKER + k]
                break
        if start_feed_commit is None:
            print("oracle: the feed never showed a marker commit (sqlive %s)" % (
                "exited %s" % feed.proc.returncode if feed.proc.poll() is not None else "running"), file=sys.stderr)
            return 0, 1, 2
        modes = [m.strip().upper() for m in args.checkpoint_modes.split(",") if m.strip()]
        paused_until = 0
        paced_from = time.monotonic()
        for n in range(1, args.commits + 1):
            if time.monotonic() - started > args.time_limit:
                notes.append("time limit: stopped after %d commits" % (n - 1))
                break
            if feed.proc.poll() is not None:
                notes.append("sqlive exited (%s) before commit %d" % (feed.proc.returncode, n))
                break
            if args.pause_every and n % args.pause_every == 0 and not feed.stopped:
                feed.pause()
                paused_until = n + args.pause_commits
            if args.pace_ms:
                # The next commit starts a pace after the last one started.
                next_start = paced_from + (n - 1) * args.pace_ms / 1000.0
                delay = next_start - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            before = feed.last_commit()
            try:
                commits[n] = writer.commit(n)
            except apsw.Error as error:
                failed_commits += 1
                notes.append("commit %d failed: %s" % (n, error))
                continue
            if args.checkpoint_prob and args.journal == "wal" and rng.random() < args.checkpoint_prob:
                writer.checkpoint(rng.choice(modes))
            if feed.stopped and n >= paused_until:
                if args.journal == "wal":
                    writer.checkpoint(rng.choice(["RESTART", "TRUNCATE", "PASSIVE"]))
                feed.resume()
            if args.lockstep and not feed.stopped:
                if not feed.wait_tick(n, args.wait, after=before if before is not None else -1):
                    stats.n["timeouts"] += 1
                    stats.late.add(n)
        elapsed_writing = time.monotonic() - started
        feed.resume()
        # Flush: a last commit, and its tick (or, where the feed abstains from
        # `tick`, a commit after the last one seen and 2 s of quiet).
        before = feed.last_commit()
        writer.commit(END_MARKER, ops=False)
        end_wait = max(args.wait, 30.0)
        if not feed.wait_tick(END_MARKER, end_wait, after=before if before is not None else -1, quiet=2.0):
            notes.append("the end marker did not show within %gs" % end_wait)
        time.sleep(0.3)
    finally:
        code = feed.stop()
        writer.db.close()
    if code not in (0, -signal.SIGTERM):
        notes.append("sqlive exit status %s" % code)
    if feed.bad_lines:
        notes.append("%d malformed feed line(s), first: %s" % (len(feed.bad_lines), feed.bad_lines[0]))

    judge(commits, feed, writer.tables, stats, start_feed_commit)
    s = stats.n
    coverage = 100.0 * s["derived"] / (s["derived"] + s["abstained"]) if s["derived"] + s["abstained"] else 100.0
    elapsed = time.monotonic() - started
    print("oracle: %s: commits %d, changeset rows %d, derived %d (right %d), abstained %d, missing %d, invented %d, "
          "wrong %d, merged %d, coverage %.1f%%; feed lines %d (unknown %d), lockstep timeouts %d, out of order %d; "
          "%.1fs (writing %.1fs)" % (
              config, len(commits), s["changeset_rows"], s["derived"], s["ok"], s["abstained"], s["missing"],
              s["invented"], s["wrong"], s["merged"], coverage, feed.lines, s["unknown_lines"], s["timeouts"],
              s["out_of_order"], elapsed, elapsed_writing), flush=True)
    if stats.reasons:
        print("oracle: unknown reasons: %s" % "; ".join("%dx %s" % (c, r) for r, c in sorted(stats.reasons.items(), key=lambda x: -x[1])[:6]))
    for kind in ("missing", "invented", "wrong", "merged", "late"):
        for text in stats.examples[kind]:
            print("  %s: %s" % (kind, text))
    if stats.failed_commits:
        print("oracle: failed commits: %s%s" % (stats.failed_commits[:30], " …" if len(stats.failed_commits) > 30 else ""))
    for note in notes:
        print("oracle: note: %s" % note)
    if not args.dir:
        shutil.rmtree(work, ignore_errors=True)
    if s["missing"] or s["invented"] or s["wrong"] or s["merged"] or s["timeouts"] or feed.bad_lines or failed_commits:
        status = 1
    return stats.passed, stats.failed + failed_commits, status


if __name__ == "__main__":
    sys.exit(main())
