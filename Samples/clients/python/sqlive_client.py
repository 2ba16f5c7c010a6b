"""A small client for `sqlive --rpc`, using only Python's standard library.

sqlive speaks JSON-RPC 2.0 with the Language Server Protocol's framing:
each message is `Content-Length: N\\r\\n\\r\\n` followed by N bytes of UTF-8
JSON. This module starts the server as a subprocess, sends requests, and
hands out the server's notifications (live-query changes, traces).

    from sqlive_client import SQLiveClient

    with SQLiveClient() as client:
        client.request("database/open", {"path": "games.sqlite"})
        print(client.request("query/execute", {"sql": "SELECT * FROM games"}))
"""

import base64
import itertools
import json
import queue
import subprocess
import threading


class SQLiveError(Exception):
    """An error response: `code`, `message` and `data` as the server sent them."""

    def __init__(self, error):
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code = error.get("code")
        self.message = error.get("message")
        self.data = error.get("data")


def decode_value(value):
    """An SQLite value from its JSON form: a BLOB `{"$blob": base64}` becomes bytes."""
    if isinstance(value, dict) and set(value) == {"$blob"}:
        return base64.b64decode(value["$blob"])
    return value


def decode_rows(rows):
    return [[decode_value(value) for value in row] for row in rows]


def apply_changes(rows, changes):
    """The rows after a `diff: "only"` notification's `changes`: remove the
    rows at `removed[].from` and `changed[].from`, then insert the `added`
    and `changed` rows at their `at`, ascending."""
    rows = list(rows)
    for position in sorted([entry["from"] for entry in changes["removed"]]
                           + [entry["from"] for entry in changes["changed"]], reverse=True):
        del rows[position]
    insertions = sorted([(entry["at"], entry["row"]) for entry in changes["added"]]
                        + [(entry["at"], entry["row"]) for entry in changes["changed"]], key=lambda pair: pair[0])
    for position, row in insertions:
        rows.insert(position, decode_rows([row])[0])
    return rows


class SQLiveClient:
    """A running `sqlive --rpc`, initialized and ready for requests."""

    def __init__(self, command=("sqlive", "--rpc"), database=None, stderr=None):
        arguments = list(command) + ([database] if database else [])
        self.process = subprocess.Popen(
            arguments, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
        self._ids = itertools.count(1)
        self._pending = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self.notifications = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.server_info = self.request("initialize", {"clientInfo": {"name": "sqlive_client.py"}})

    # Framing

    def _send(self, message):
        content = json.dumps(message).encode("utf-8")
        frame = b"Content-Length: %d\r\n\r\n" % len(content) + content
        with self._write_lock:
            self.process.stdin.write(frame)
            self.process.stdin.flush()

    def _read_message(self):
        length = None
        while True:
            line = self.process.stdout.readline()
            if not line:
                return None
            line = line.strip()
            if not line:
                if length is not None:
                    break
                continue
            name, _, value = line.decode("ascii", "replace").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        content = self.process.stdout.read(length)
        message = json.loads(content.decode("utf-8"))
        if isinstance(message, dict) and "method" in message and isinstance(message.get("params"), dict):
            # The size on the wire, for clients that watch what changes cost.
            message["params"]["$bytes"] = length
        return message

    def _read(self):
        while True:
            message = self._read_message()
            if message is None:
                break
            for item in message if isinstance(message, list) else [message]:
                if "method" in item and "id" not in item:
                    self.notifications.put(item)
                else:
                    with self._lock:
                        slot = self._pending.pop(item.get("id"), None)
                    if slot is not None:
                        slot.put(item)
        self.notifications.put(None)
        with self._lock:
            for slot in self._pending.values():
                slot.put({"error": {"code": -32603, "message": "the server closed its output"}})

    # Messages

    def request(self, method, params=None, timeout=60):
        """Sends a request and returns its result; raises SQLiveError for an error."""
        request_id = next(self._ids)
        slot = queue.Queue(maxsize=1)
        with self._lock:
            self._pending[request_id] = slot
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)
        response = slot.get(timeout=timeout)
        if "error" in response:
            raise SQLiveError(response["error"])
        return response.get("result")

    def notify(self, method, params=None):
        """Sends a notification (no response)."""
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def next_notification(self, timeout=None):
        """The next notification from the server: a dict with `method` and
        `params`, or None once the server has ended."""
        return self.notifications.get(timeout=timeout)

    def close(self):
        """Ends the session cleanly: `shutdown`, then `exit`."""
        if self.process.poll() is None:
            try:
                self.request("shutdown", timeout=10)
                self.notify("exit")
                self.process.stdin.close()
            except (BrokenPipeError, SQLiveError, queue.Empty):
                pass
            try:
                return self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
