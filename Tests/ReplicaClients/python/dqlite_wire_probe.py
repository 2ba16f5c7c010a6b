#!/usr/bin/env python3
"""Standalone (stdlib-only) dqlite wire-protocol probe.

Speaks the dqlite client protocol (version 1) directly over TCP, to verify
the byte layouts documented in docs/research/dqlite-wire.md against a real
cluster (e.g. one started by Tests/ReplicaClients/dqlite-cluster.sh, which
runs Debian's dqlite-demo 1.11.5 on top of libdqlite 1.11.1).

Usage:
    dqlite_wire_probe.py [--servers 127.0.0.1:9001,127.0.0.1:9002,...]
                         [--db demo] [--trace] [--api 127.0.0.1:8001]
                         [CHECK ...]

With no CHECK all checks run. --trace prints the hex of every frame sent and
received. Every socket operation has a timeout, so the probe never hangs.
Exit status 0 if all checks passed, 1 otherwise.

All integers on the wire are little endian. Everything is 8-byte aligned.
"""

import argparse
import socket
import struct
import sys
import time
import urllib.request

PROTOCOL_VERSION = 1
PROTOCOL_VERSION_LEGACY = 0x86104DD760433FE5

# Request types (dqlite src/protocol.h, go-dqlite internal/protocol/constants.go)
REQ_LEADER, REQ_CLIENT, REQ_HEARTBEAT, REQ_OPEN, REQ_PREPARE = 0, 1, 2, 3, 4
REQ_EXEC, REQ_QUERY, REQ_FINALIZE, REQ_EXEC_SQL, REQ_QUERY_SQL = 5, 6, 7, 8, 9
REQ_INTERRUPT, REQ_ADD, REQ_ASSIGN, REQ_REMOVE, REQ_DUMP = 10, 12, 13, 14, 15
REQ_CLUSTER, REQ_TRANSFER, REQ_DESCRIBE, REQ_WEIGHT = 16, 17, 18, 19

# Response types
RESP_FAILURE, RESP_SERVER, RESP_WELCOME, RESP_SERVERS, RESP_DB = 0, 1, 2, 3, 4
RESP_STMT, RESP_RESULT, RESP_ROWS, RESP_EMPTY, RESP_FILES = 5, 6, 7, 8, 9
RESP_METADATA = 10
RESP_NAMES = {0: "FAILURE", 1: "SERVER", 2: "WELCOME", 3: "SERVERS", 4: "DB",
              5: "STMT", 6: "RESULT", 7: "ROWS", 8: "EMPTY", 9: "FILES",
              10: "METADATA"}

# Value type codes
T_INTEGER, T_FLOAT, T_TEXT, T_BLOB, T_NULL = 1, 2, 3, 4, 5
T_UNIXTIME, T_ISO8601, T_BOOLEAN = 9, 10, 11

ROWS_PART = 0xEEEEEEEEEEEEEEEE
ROWS_DONE = 0xFFFFFFFFFFFFFFFF

# Error codes (SQLite extended codes as used by dqlite)
SQLITE_ERROR = 1
SQLITE_BUSY = 5
SQLITE_NOTFOUND = 12
SQLITE_IOERR_NOT_LEADER = 10 | (40 << 8)        # 10250
SQLITE_IOERR_LEADERSHIP_LOST = 10 | (41 << 8)   # 10506

ROLES = {0: "voter", 1: "standby", 2: "spare"}

TRACE = False


def hexdump(b):
    return " ".join("%02x" % x for x in b)


# ----------------------------------------------------------------- encoding

def pad8(n):
    return (8 - n % 8) % 8


def enc_u64(v):
    return struct.pack("<Q", v & 0xFFFFFFFFFFFFFFFF)


def enc_i64(v):
    return struct.pack("<q", v)


def enc_u32(v):
    return struct.pack("<I", v)


def enc_text(s):
    """text: UTF-8 bytes + NUL, zero padded to a multiple of 8 bytes."""
    b = s.encode("utf-8") + b"\x00"
    return b + b"\x00" * pad8(len(b))


def enc_blob(b):
    """blob: u64 length, bytes, zero padded to a multiple of 8 bytes."""
    return enc_u64(len(b)) + b + b"\x00" * pad8(len(b))


def enc_params(values):
    """params-tuple (schema 0): u8 count, count x u8 type codes, zero pad so
    that (1 + count) is a multiple of 8, then the values, each 8-aligned.

    An empty parameter list is encoded as *nothing at all* (go-dqlite
    putNamedValues returns early; the server's bind__params treats a fully
    consumed body as "no parameters")."""
    if not values:
        return b""
    if len(values) > 255:
        raise ValueError("schema 0 params tuple holds at most 255 values")
    types = []
    body = b""
    for v in values:
        if v is None:
            types.append(T_NULL)
            body += enc_u64(0)
        elif isinstance(v, bool):
            types.append(T_BOOLEAN)
            body += enc_u64(1 if v else 0)
        elif isinstance(v, int):
            types.append(T_INTEGER)
            body += enc_i64(v)
        elif isinstance(v, float):
            types.append(T_FLOAT)
            body += struct.pack("<d", v)
        elif isinstance(v, (bytes, bytearray)):
            types.append(T_BLOB)
            body += enc_blob(bytes(v))
        elif isinstance(v, str):
            types.append(T_TEXT)
            body += enc_text(v)
        else:
            raise TypeError(type(v))
    header = bytes([len(values)] + types)
    header += b"\x00" * pad8(len(header))
    return header + body


def frame(mtype, body, schema=0):
    """Header word: u32 body length in words, u8 type, u8 schema, u16 unused."""
    assert len(body) % 8 == 0 and len(body) > 0
    return struct.pack("<IBBH", len(body) // 8, mtype, schema, 0) + body


# ----------------------------------------------------------------- decoding

class Cursor:
    def __init__(self, data):
        self.data = data
        self.off = 0

    def left(self):
        return len(self.data) - self.off

    def u8(self):
        v = self.data[self.off]
        self.off += 1
        return v

    def u32(self):
        v = struct.unpack_from("<I", self.data, self.off)[0]
        self.off += 4
        return v

    def u64(self):
        v = struct.unpack_from("<Q", self.data, self.off)[0]
        self.off += 8
        return v

    def i64(self):
        v = struct.unpack_from("<q", self.data, self.off)[0]
        self.off += 8
        return v

    def f64(self):
        v = struct.unpack_from("<d", self.data, self.off)[0]
        self.off += 8
        return v

    def text(self):
        end = self.data.index(b"\x00", self.off)
        s = self.data[self.off:end].decode("utf-8")
        n = end - self.off + 1
        self.off += n + pad8(n)
        return s

    def blob(self):
        n = self.u64()
        b = self.data[self.off:self.off + n]
        self.off += n + pad8(n)
        return b

    def peek_u64(self):
        return struct.unpack_from("<Q", self.data, self.off)[0]


class DqliteError(Exception):
    def __init__(self, code, message):
        super().__init__("%s (%d)" % (message, code))
        self.code = code
        self.message = message


class Rows:
    """A decoded ROWS response (possibly several batches)."""

    def __init__(self):
        self.columns = []
        self.rows = []      # list of lists of python values
        self.types = []     # per-row list of type codes
        self.batches = 0
        self.end_markers = []


def decode_rows_batch(body, rows):
    c = Cursor(body)
    ncol = c.u64()
    cols = [c.text() for _ in range(ncol)]
    rows.columns = cols
    hdr_len = (ncol + 1) // 2        # 4 bits per column...
    hdr_len += pad8(hdr_len)         # ...padded to whole words
    while True:
        # End marker: a whole word 0xff.. (done) or 0xee.. (more follow).
        # A row header can never start with 0xee/0xff since type codes < 12.
        if c.left() >= 8 and c.peek_u64() in (ROWS_DONE, ROWS_PART):
            marker = c.u64()
            rows.end_markers.append(marker)
            assert c.left() == 0, "bytes after end marker"
            return marker
        header = c.data[c.off:c.off + hdr_len]
        c.off += hdr_len
        types = []
        for i in range(ncol):
            b = header[i // 2]
            types.append(b & 0x0F if i % 2 == 0 else b >> 4)
        vals = []
        for t in types:
            if t == T_INTEGER:
                vals.append(c.i64())
            elif t == T_FLOAT:
                vals.append(c.f64())
            elif t == T_TEXT:
                vals.append(c.text())
            elif t == T_BLOB:
                vals.append(c.blob())
            elif t == T_NULL:
                c.u64()
                vals.append(None)
            elif t == T_UNIXTIME:
                vals.append(("unixtime", c.i64()))
            elif t == T_ISO8601:
                vals.append(("iso8601", c.text()))
            elif t == T_BOOLEAN:
                vals.append(c.u64() != 0)
            else:
                raise ValueError("unknown type code %d" % t)
        rows.rows.append(vals)
        rows.types.append(types)


# ----------------------------------------------------------------- connection

class Conn:
    def __init__(self, address, timeout=5.0, version=PROTOCOL_VERSION):
        host, port = address.rsplit(":", 1)
        self.address = address
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.sock.settimeout(timeout)
        self.db_id = None
        hs = enc_u64(version)
        if TRACE:
            print("  -> handshake %s" % hexdump(hs))
        self.sock.sendall(hs)
        self.last_sent = b""
        self.last_recv = b""

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def _recv_exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("connection closed by server")
            buf += chunk
        return buf

    def send(self, mtype, body, schema=0):
        f = frame(mtype, body, schema)
        self.last_sent = f
        if TRACE:
            print("  -> %s" % hexdump(f))
        self.sock.sendall(f)

    def recv(self):
        hdr = self._recv_exact(8)
        words, mtype, schema, _extra = struct.unpack("<IBBH", hdr)
        body = self._recv_exact(words * 8)
        self.last_recv = hdr + body
        if TRACE:
            print("  <- [%s] %s" % (RESP_NAMES.get(mtype, mtype),
                                    hexdump(hdr + body)))
        return mtype, body

    def call(self, mtype, body, expect, schema=0):
        self.send(mtype, body, schema)
        rtype, rbody = self.recv()
        if rtype == RESP_FAILURE:
            c = Cursor(rbody)
            raise DqliteError(c.u64(), c.text())
        if rtype != expect:
            raise ValueError("expected response %d, got %d" % (expect, rtype))
        return rbody

    # ---- requests

    def leader(self):
        c = Cursor(self.call(REQ_LEADER, enc_u64(0), RESP_SERVER))
        return c.u64(), c.text()

    def client(self, client_id=0):
        return Cursor(self.call(REQ_CLIENT, enc_u64(client_id),
                                RESP_WELCOME)).u64()

    def cluster(self, fmt=1):
        c = Cursor(self.call(REQ_CLUSTER, enc_u64(fmt), RESP_SERVERS))
        n = c.u64()
        out = []
        for _ in range(n):
            node_id, addr = c.u64(), c.text()
            role = c.u64() if fmt == 1 else None
            out.append((node_id, addr, role))
        return out

    def open(self, name, flags=0, vfs="volatile"):
        body = enc_text(name) + enc_u64(flags) + enc_text(vfs)
        c = Cursor(self.call(REQ_OPEN, body, RESP_DB))
        self.db_id = c.u32()
        c.u32()
        return self.db_id

    def prepare(self, sql):
        c = Cursor(self.call(REQ_PREPARE, enc_u64(self.db_id) + enc_text(sql),
                             RESP_STMT))
        return c.u32(), c.u32(), c.u64()   # db, stmt id, param count

    def _result(self, body):
        c = Cursor(body)
        return c.u64(), c.u64()            # last_insert_id, rows_affected

    def exec(self, stmt_id, params=()):
        body = enc_u32(self.db_id) + enc_u32(stmt_id) + enc_params(params)
        return self._result(self.call(REQ_EXEC, body, RESP_RESULT))

    def exec_sql(self, sql, params=()):
        body = enc_u64(self.db_id) + enc_text(sql) + enc_params(params)
        return self._result(self.call(REQ_EXEC_SQL, body, RESP_RESULT))

    def _rows(self, mtype, body, max_batches=None):
        rows = Rows()
        rbody = self.call(mtype, body, RESP_ROWS)
        while True:
            rows.batches += 1
            marker = decode_rows_batch(rbody, rows)
            if marker == ROWS_DONE:
                return rows
            if max_batches is not None and rows.batches >= max_batches:
                return rows
            # ROWS_PART: the server pushes the next batch unprompted; just
            # read the next message.
            rtype, rbody = self.recv()
            if rtype == RESP_FAILURE:
                c = Cursor(rbody)
                raise DqliteError(c.u64(), c.text())
            assert rtype == RESP_ROWS, rtype

    def query(self, stmt_id, params=(), max_batches=None):
        body = enc_u32(self.db_id) + enc_u32(stmt_id) + enc_params(params)
        return self._rows(REQ_QUERY, body, max_batches)

    def query_sql(self, sql, params=(), max_batches=None):
        body = enc_u64(self.db_id) + enc_text(sql) + enc_params(params)
        return self._rows(REQ_QUERY_SQL, body, max_batches)

    def finalize(self, stmt_id):
        self.call(REQ_FINALIZE, enc_u32(self.db_id) + enc_u32(stmt_id),
                  RESP_EMPTY)

    def interrupt(self):
        """Send INTERRUPT and discard messages until EMPTY (like go-dqlite's
        Protocol.Interrupt): pending ROWS batches may still arrive first."""
        self.send(REQ_INTERRUPT, enc_u64(self.db_id))
        skipped = 0
        while True:
            rtype, _ = self.recv()
            if rtype == RESP_EMPTY:
                return skipped
            skipped += 1


def find_leader(servers, timeout=5.0):
    """go-dqlite Connector.connectAttemptAll, simplified: ask each server in
    turn with LEADER; if it names itself, send CLIENT and keep the
    connection; if it names another node, dial that one and ask again; if it
    knows no leader (empty address), try the next server."""
    for addr in servers:
        try:
            conn = Conn(addr, timeout)
            _, leader = conn.leader()
        except (OSError, DqliteError, ConnectionError, ValueError):
            continue
        if leader == addr:
            conn.client(0)
            return conn
        conn.close()
        if not leader:
            continue
        try:
            conn = Conn(leader, timeout)
            _, leader2 = conn.leader()
            if leader2 == leader:
                conn.client(0)
                return conn
            conn.close()
        except (OSError, DqliteError, ConnectionError, ValueError):
            continue
    raise RuntimeError("no available dqlite leader among %s" % servers)


# ----------------------------------------------------------------- checks

RESULTS = []


def check(name, cond, detail=""):
    RESULTS.append((name, bool(cond)))
    print("%s %s%s" % ("PASS" if cond else "FAIL", name,
                       (": " + detail) if detail else ""))


def show(label, data):
    print("    %s: %s" % (label, hexdump(data)))


def data_version(conn):
    # 'PRAGMA data_version' works through QUERY_SQL as a normal 1-column query
    return conn.query_sql("PRAGMA data_version").rows[0][0]


def run_checks(args, wanted):
    servers = args.servers.split(",")

    def on(name):
        return not wanted or name in wanted

    # --- frames: static encodings
    if on("encoding"):
        f = frame(REQ_LEADER, enc_u64(0))
        check("encoding.leader_frame", hexdump(f) ==
              "01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00", hexdump(f))
        p = enc_params([1, "ab", None])
        check("encoding.params_header", p[:8] == bytes([3, 1, 3, 5, 0, 0, 0, 0]),
              hexdump(p))

    # --- leader discovery through every server
    if on("leader"):
        for addr in servers:
            try:
                c = Conn(addr)
            except OSError as e:
                print("SKIP leader.reply[%s]: %s" % (addr, e))
                continue
            node_id, leader = c.leader()
            show("LEADER req  " + addr, c.last_sent)
            show("SERVER resp " + addr, c.last_recv)
            check("leader.reply[%s]" % addr, leader != "",
                  "id=%d address=%s" % (node_id, leader))
            c.close()

    conn = find_leader(servers)
    print("leader: %s" % conn.address)

    if on("cluster"):
        nodes = conn.cluster(1)
        show("CLUSTER resp", conn.last_recv)
        check("cluster.format1", len(nodes) >= 1,
              ", ".join("%x %s %s" % (i, a, ROLES.get(r, r)) for i, a, r in nodes))
        nodes0 = conn.cluster(0)
        check("cluster.format0_no_role", all(r is None for _, _, r in nodes0)
              and len(nodes0) == len(nodes))

    db = conn.open(args.db)
    show("OPEN req", conn.last_sent)
    show("DB resp", conn.last_recv)
    check("open.db_id_zero", db == 0, "db_id=%d" % db)

    if on("open"):
        try:
            conn.open(args.db)
            check("open.twice_is_busy", False)
        except DqliteError as e:
            check("open.twice_is_busy", e.code == SQLITE_BUSY, str(e))
        # OPEN works without the CLIENT registration
        c2 = Conn(conn.address)
        c2.open(args.db)
        check("open.without_client_request", True)
        c2.close()

    if on("query"):
        r = conn.query_sql("SELECT * FROM model")
        check("query.model", r.columns == ["key", "value"],
              "columns=%s rows=%d" % (r.columns, len(r.rows)))

    if on("exec"):
        lid, n = conn.exec_sql(
            "INSERT OR REPLACE INTO model(key, value) VALUES(?, ?)",
            ["probe", "v1"])
        show("EXEC_SQL req", conn.last_sent)
        show("RESULT resp", conn.last_recv)
        check("exec.insert_params", n == 1, "last_insert_id=%d rows=%d" % (lid, n))
        r = conn.query_sql("SELECT key, value FROM model WHERE key = ?", ["probe"])
        show("QUERY_SQL req", conn.last_sent)
        show("ROWS resp", conn.last_recv)
        check("exec.readback", r.rows == [["probe", "v1"]], repr(r.rows))

    if on("types"):
        r = conn.query_sql("SELECT 42, -1.5, 'héllo', x'0102030405060708090a',"
                           " NULL, ?, ?", [True, 2**40])
        show("ROWS resp (types)", conn.last_recv)
        check("types.values", r.rows == [[42, -1.5, "héllo",
                                          bytes(range(1, 11)), None, 1, 2**40]],
              repr(r.rows))
        check("types.codes", r.types == [[1, 2, 3, 4, 5, 1, 1]], repr(r.types))
        conn.exec_sql("CREATE TABLE IF NOT EXISTS probe_types ("
                      "d DATETIME, b BOOLEAN, t TIMESTAMP, x DATE)")
        conn.exec_sql("DELETE FROM probe_types")
        conn.exec_sql("INSERT INTO probe_types VALUES (?, ?, ?, ?)",
                      [1700000000, True, "2024-01-02 03:04:05", None])
        r = conn.query_sql("SELECT d, b, t, x FROM probe_types")
        show("ROWS resp (time types)", conn.last_recv)
        check("types.special", r.types == [[T_UNIXTIME, T_BOOLEAN, T_ISO8601,
                                            T_ISO8601]],
              "types=%s values=%s" % (r.types, r.rows))

    if on("wide"):
        # 17 result columns -> 9 nibble bytes -> row header padded to 16 bytes
        cols = ", ".join(str(i) for i in range(17))
        r = conn.query_sql("SELECT " + cols)
        check("wide.17_columns", r.rows == [list(range(17))], repr(r.rows))
        # 8 parameters -> 1 count byte + 8 type bytes -> header padded to 16
        body = enc_params(list(range(8)))
        check("wide.8_params_header_16_bytes", body[:16] == bytes(
            [8] + [1] * 8 + [0] * 7), hexdump(body[:16]))
        r = conn.query_sql("SELECT " + ", ".join(["?"] * 8), list(range(8)))
        check("wide.8_params", r.rows == [list(range(8))], repr(r.rows))
        big = "x" * 100000
        conn.exec_sql("INSERT OR REPLACE INTO model VALUES ('big', ?)", [big])
        r = conn.query_sql("SELECT value FROM model WHERE key = 'big'")
        # One oversized row: batch 1 = that row + PART marker, batch 2 =
        # column names + DONE and no rows at all (a batch may be empty).
        check("wide.100k_text_roundtrip", r.rows == [[big]],
              "batches=%d markers=%s" % (r.batches,
                                         [hex(m) for m in r.end_markers]))
        conn.exec_sql("DELETE FROM model WHERE key = 'big'")

    if on("prepared"):
        db_id, sid, nparams = conn.prepare("SELECT value FROM model WHERE key = ?")
        show("PREPARE req", conn.last_sent)
        show("STMT resp", conn.last_recv)
        check("prepared.stmt", nparams == 1, "db=%d stmt=%d params=%d" %
              (db_id, sid, nparams))
        r = conn.query(sid, ["probe"])
        show("QUERY req", conn.last_sent)
        check("prepared.query", r.rows == [["v1"]], repr(r.rows))
        r = conn.query(sid, ["nope"])
        check("prepared.query_reuse_empty", r.rows == [], repr(r.rows))
        _, sid2, _ = conn.prepare("UPDATE model SET value = ? WHERE key = ?")
        lid, n = conn.exec(sid2, ["v2", "probe"])
        show("EXEC req", conn.last_sent)
        check("prepared.exec", n == 1, "rows=%d" % n)
        conn.finalize(sid)
        show("FINALIZE req", conn.last_sent)
        show("EMPTY resp", conn.last_recv)
        conn.finalize(sid2)
        # NOTE: do NOT reuse a finalized statement id here. In libdqlite
        # 1.11.1 the statement registry leaves a NULL hole for a finalized id
        # and stmt__registry_get() dereferences it (src/lib/registry.h:151-153):
        # QUERY/EXEC/FINALIZE on such an id segfaults the server. An id that
        # was never allocated (>= registry length) is answered with
        # SQLITE_NOTFOUND; that is safe to probe:
        try:
            conn.query(1000, ["probe"])
            check("prepared.unknown_id_notfound", False)
        except DqliteError as e:
            check("prepared.unknown_id_notfound", e.code == SQLITE_NOTFOUND, str(e))

    if on("errors"):
        try:
            conn.query_sql("SELEC 1")
        except DqliteError as e:
            show("FAILURE resp", conn.last_recv)
            check("errors.syntax", e.code == SQLITE_ERROR, str(e))
        try:
            conn.exec_sql("INSERT INTO model(key, value) VALUES('probe', 'dup')")
            check("errors.constraint", False)
        except DqliteError as e:
            check("errors.constraint", e.code == (19 | (8 << 8)), str(e))
        try:
            conn.query_sql("INSERT INTO model(key, value) VALUES('q', 'q')")
            check("errors.query_sql_on_write_fails", False)
        except DqliteError as e:
            check("errors.query_sql_on_write_fails", True, str(e))
        try:
            conn.exec_sql("SELECT 1")
            check("errors.exec_sql_on_select_fails", False)
        except DqliteError as e:
            check("errors.exec_sql_on_select_fails", e.code == 100, str(e))
        try:
            c = Conn(conn.address)
            c.open(args.db)
            c.call(REQ_EXEC_SQL, enc_u64(1) + enc_text("SELECT 1"), RESP_RESULT)
            check("errors.db_id_nonzero_notfound", False)
        except DqliteError as e:
            check("errors.db_id_nonzero_notfound", e.code == SQLITE_NOTFOUND, str(e))
        c.close()
        n = conn.query_sql("SELECT count(*) FROM model WHERE key = 'q'").rows[0][0]
        check("errors.query_sql_on_write_not_executed", n == 0, "count=%d" % n)
        try:
            conn.exec_sql("   ")
            check("errors.empty_exec_sql_ok", True)
        except DqliteError as e:
            check("errors.empty_exec_sql_ok", False, str(e))
        try:
            conn.query_sql("  ")
            check("errors.empty_query_sql_fails", False)
        except DqliteError as e:
            check("errors.empty_query_sql_fails", True, str(e))

    if on("multi"):
        conn.exec_sql("CREATE TABLE IF NOT EXISTS probe_multi (x INTEGER)")
        conn.exec_sql("DELETE FROM probe_multi")
        res = conn.exec_sql("INSERT INTO probe_multi VALUES (1);"
                            "INSERT INTO probe_multi VALUES (2);"
                            "INSERT INTO probe_multi VALUES (3)")
        n = conn.query_sql("SELECT count(*) FROM probe_multi").rows[0][0]
        check("multi.exec_sql_runs_all", n == 3, "count=%d result=%s" % (n, res))
        res2 = conn.exec_sql("INSERT INTO probe_multi VALUES (4); ")
        check("multi.exec_sql_trailing_space_result", True,
              "result(last_id, changes)=%s" % (res2,))
        res3 = conn.exec_sql("INSERT INTO probe_multi VALUES (?); "
                             "INSERT INTO probe_multi VALUES (99)", [5])
        vals = [r[0] for r in conn.query_sql(
            "SELECT x FROM probe_multi ORDER BY x").rows]
        check("multi.params_bind_first_stmt_only", 5 in vals and 99 in vals,
              "values=%s result=%s" % (vals, res3))
        r = conn.query_sql("SELECT 1; SELECT 2")
        check("multi.query_sql_first_only", r.rows == [[1]], repr(r.rows))
        # Is the tail of QUERY_SQL executed? (it must not be)
        r = conn.query_sql("SELECT count(*) FROM probe_multi; "
                           "DELETE FROM probe_multi")
        n2 = conn.query_sql("SELECT count(*) FROM probe_multi").rows[0][0]
        check("multi.query_sql_tail_ignored", n2 == r.rows[0][0], "count=%d" % n2)

    if on("batches"):
        sql = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c "
               "LIMIT 3000) SELECT x, 'row-' || x FROM c")
        r = conn.query_sql(sql)
        check("batches.multi_part", r.batches > 1 and len(r.rows) == 3000 and
              r.end_markers[-1] == ROWS_DONE and
              all(m == ROWS_PART for m in r.end_markers[:-1]),
              "batches=%d rows=%d" % (r.batches, len(r.rows)))
        # interrupt after the first batch, then the connection stays usable
        r = conn.query_sql(sql, max_batches=1)
        skipped = conn.interrupt()
        show("INTERRUPT req", conn.last_sent if False else
             frame(REQ_INTERRUPT, enc_u64(0)))
        ok = conn.query_sql("SELECT 7").rows == [[7]]
        check("batches.interrupt", ok,
              "first batch rows=%d, discarded %d batches before EMPTY" %
              (len(r.rows), skipped))

    if on("tx"):
        conn.exec_sql("CREATE TABLE IF NOT EXISTS probe_tx (x INTEGER)")
        conn.exec_sql("DELETE FROM probe_tx")
        other = Conn(conn.address)
        other.client(0)
        other.open(args.db)
        conn.exec_sql("BEGIN")
        conn.exec_sql("INSERT INTO probe_tx VALUES (1)")
        conn.exec_sql("INSERT INTO probe_tx VALUES (2)")
        inside = conn.query_sql("SELECT count(*) FROM probe_tx").rows[0][0]
        outside = other.query_sql("SELECT count(*) FROM probe_tx").rows[0][0]
        # A write from another connection while the tx is open
        try:
            t0 = time.time()
            other.exec_sql("INSERT INTO probe_tx VALUES (100)")
            other_write = "succeeded"
        except DqliteError as e:
            other_write = "failed: %s after %.2fs" % (e, time.time() - t0)
        conn.exec_sql("COMMIT")
        after = other.query_sql("SELECT count(*) FROM probe_tx").rows[0][0]
        check("tx.multi_request", inside == 2 and outside == 0 and after >= 2,
              "inside=%d outside-before-commit=%d after=%d; concurrent write %s"
              % (inside, outside, after, other_write))
        conn.exec_sql("BEGIN")
        conn.exec_sql("INSERT INTO probe_tx VALUES (3)")
        conn.exec_sql("ROLLBACK")
        n = other.query_sql("SELECT count(*) FROM probe_tx WHERE x = 3").rows[0][0]
        check("tx.rollback", n == 0)
        other.close()

    if on("data_version"):
        other = find_leader(servers)
        other.open(args.db)
        v0 = data_version(conn)
        show("ROWS resp (PRAGMA data_version)", conn.last_recv)
        v0b = data_version(conn)
        own = conn.exec_sql("INSERT OR REPLACE INTO model VALUES ('dv-own', 'x')")
        v1 = data_version(conn)
        other.exec_sql("INSERT OR REPLACE INTO model VALUES ('dv', ?)",
                       [str(time.time())])
        v2 = data_version(conn)
        check("data_version.stable_without_writes", v0 == v0b, "%d %d" % (v0, v0b))
        check("data_version.own_commit_unchanged", v1 == v0,
              "before=%d after own write=%d" % (v0, v1))
        check("data_version.other_conn_commit_changes", v2 != v1,
              "before=%d after other conn write=%d" % (v1, v2))
        if args.api:
            try:
                req = urllib.request.Request("http://%s/dv-http" % args.api,
                                             data=str(time.time()).encode(),
                                             method="PUT")
                urllib.request.urlopen(req, timeout=5).read()
                v3 = data_version(conn)
                check("data_version.http_api_write_changes", v3 != v2,
                      "before=%d after=%d" % (v2, v3))
            except OSError as e:
                check("data_version.http_api_write_changes", False, str(e))
        # Same thing observed from a follower-side connection? (No: reads
        # through the protocol are always on the leader.)
        other.close()

    if on("not_leader"):
        nodes = conn.cluster(1)
        followers = [a for _, a, r in nodes if a != conn.address and r == 0]
        for addr in followers:
            try:
                f = Conn(addr)
                f.leader()
            except (OSError, ConnectionError) as e:
                print("SKIP not_leader via %s: %s" % (addr, e))
                continue
            f.open(args.db)   # OPEN succeeds on a follower
            try:
                f.query_sql("SELECT 1")
                check("not_leader.query", False)
            except DqliteError as e:
                show("FAILURE resp (not leader)", f.last_recv)
                check("not_leader.query", e.code == SQLITE_IOERR_NOT_LEADER, str(e))
            try:
                f.exec_sql("INSERT INTO model VALUES ('x', 'y')")
                check("not_leader.exec", False)
            except DqliteError as e:
                check("not_leader.exec", e.code == SQLITE_IOERR_NOT_LEADER, str(e))
            try:
                f.prepare("SELECT 1")
                check("not_leader.prepare_allowed", True)
            except DqliteError as e:
                check("not_leader.prepare_allowed", False, str(e))
            f.close()
            break   # one reachable follower is enough

    if on("handshake"):
        # Unknown protocol version: the server just closes the connection.
        c = Conn(conn.address, timeout=3, version=2)
        try:
            c.send(REQ_LEADER, enc_u64(0))
            c.recv()
            check("handshake.bad_version_closes", False)
        except (ConnectionError, OSError) as e:
            check("handshake.bad_version_closes", True, type(e).__name__)
        c.close()
        # HEARTBEAT (type 2) is not dispatched by the 1.11.1 gateway: no
        # response is ever sent and the server stops reading that
        # connection. Clients must not send it.
        c = Conn(conn.address, timeout=2)
        c.send(REQ_HEARTBEAT, enc_u64(int(time.time())))
        try:
            c.recv()
            check("handshake.heartbeat_unanswered", False)
        except socket.timeout:
            check("handshake.heartbeat_unanswered", True, "no reply within 2s")
        c.close()

    if on("dump"):
        # DUMP -> FILES: u64 count (=2), then per file: text name, u64 size,
        # raw bytes (size is a multiple of the page size, so no padding).
        body = conn.call(REQ_DUMP, enc_text(args.db), RESP_FILES)
        c = Cursor(body)
        files = []
        for _ in range(c.u64()):
            name = c.text()
            size = c.u64()
            files.append((name, size, body[c.off:c.off + 16]))
            c.off += size
        check("dump.files", len(files) == 2 and files[0][0] == args.db and
              files[1][0] == args.db + "-wal" and
              files[0][2].startswith(b"SQLite format 3\x00"),
              "; ".join("%s %d bytes" % (n, sz) for n, sz, _ in files))
        # DESCRIBE (format 0) -> METADATA: u64 failure domain, u64 weight
        c = Cursor(conn.call(REQ_DESCRIBE, enc_u64(0), RESP_METADATA))
        check("describe.metadata", True, "failure_domain=%d weight=%d"
              % (c.u64(), c.u64()))

    if on("other_db"):
        c3 = Conn(conn.address)
        c3.open("probe-other.db")
        c3.exec_sql("CREATE TABLE IF NOT EXISTS t (x)")
        r = c3.query_sql("SELECT name FROM sqlite_master")
        check("other_db.any_name", ["t"] in r.rows, repr(r.rows))
        c3.close()

    conn.close()


def main():
    global TRACE
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--servers", default="127.0.0.1:9001,127.0.0.1:9002,127.0.0.1:9003")
    ap.add_argument("--db", default="demo")
    ap.add_argument("--api", default="", help="dqlite-demo HTTP API host:port")
    ap.add_argument("--trace", action="store_true")
    ap.add_argument("checks", nargs="*")
    args = ap.parse_args()
    TRACE = args.trace
    try:
        run_checks(args, set(args.checks))
    except Exception as e:  # report, don't hang
        check("probe.exception", False, "%s: %s" % (type(e).__name__, e))
    passed = sum(1 for _, ok in RESULTS if ok)
    failed = len(RESULTS) - passed
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
