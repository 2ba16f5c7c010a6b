"""Loopback clients of a real sqlive server, with the Python standard library only.

A WebSocket client (RFC 6455) that can also misbehave (a frame head that
announces more than it sends, a socket that stops reading, a socket closed
mid-transaction), a small HTTP/1.1 client for MCP's streamable HTTP
transport (JSON or Server-Sent Events answers), the servers started as
`sqlive --web` and `sqlive --mcp --http` print their address, and a
sampler of a process's threads, descriptors, resident memory and CPU time
from /proc. Used by hostile.py (issue #56) and scripts/soak.py.
"""

from __future__ import annotations

import atexit
import base64
import json
import os
import re
import select
import signal
import socket
import struct
import subprocess
import time
import urllib.parse

# --------------------------------------------------------------- /proc


def sample(pid: int) -> dict:
    """Threads, open descriptors, resident memory (MiB) and CPU seconds
    (utime + stime) of a live process; zeros once it has gone."""
    result = {"threads": 0, "fds": 0, "rss_mib": 0.0, "cpu_s": 0.0}
    try:
        result["threads"] = len(os.listdir(f"/proc/{pid}/task"))
        result["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    result["rss_mib"] = int(line.split()[1]) / 1024
        result["cpu_s"] = cpu_seconds(pid)
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass
    return result


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, in seconds (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as stat:
        text = stat.read()
    # The command name is in parentheses and may hold spaces: split after it.
    fields = text[text.rindex(")") + 2 :].split()
    # Fields 14 and 15 of stat(5), utime and stime: 12 and 13 after the name.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# -------------------------------------------------------------- servers


RUNNING: set = set()  # servers started and not yet stopped


def stop_all() -> None:
    """Stops every server still running (atexit, and at SIGTERM)."""
    for server in list(RUNNING):
        server.stop()


atexit.register(stop_all)


class Server:
    """A sqlive server started by the suite: its process, port and token."""

    def __init__(self, argv: list[str], kind: str, env: dict | None = None, preexec=None):
        self.argv = argv
        self.kind = kind  # "web" or "mcp"
        self.label = kind
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env=env,
        )
        self.pid = self.process.pid
        RUNNING.add(self)
        self.port = 0
        self.token = ""
        self.announced: list[str] = []

    def read_announcement(self, timeout: float = 30) -> None:
        """Reads up to the URL the server prints (and, for MCP, the token
        line after it); what it printed before the URL is kept in `announced`."""
        deadline = time.monotonic() + timeout
        buffer = b""
        out = self.process.stdout

        def complete() -> bool:
            lines = buffer.decode(errors="replace").split("\n")[:-1]
            if not any(line.startswith("http://") for line in lines):
                return False
            return self.kind != "mcp" or any(line.startswith("Authorization: Bearer ") for line in lines)

        while not complete():
            left = deadline - time.monotonic()
            if left <= 0 or self.process.poll() is not None:
                raise RuntimeError(
                    f"{' '.join(self.argv)} printed no address: {buffer!r} {self.stderr_text()}"
                )
            ready, _, _ = select.select([out], [], [], left)
            if ready:
                chunk = os.read(out.fileno(), 4096)
                if chunk:
                    buffer += chunk
        lines = buffer.decode().split("\n")
        self.announced = lines
        url = next(line for line in lines if line.startswith("http://"))
        parsed = urllib.parse.urlparse(url.strip())
        self.port = parsed.port
        if self.kind == "web":
            self.token = urllib.parse.parse_qs(parsed.query)["token"][0]
        else:
            bearer = next(line for line in lines if line.startswith("Authorization: Bearer "))
            self.token = bearer.strip()[len("Authorization: Bearer ") :]

    def stderr_text(self) -> str:
        try:
            if select.select([self.process.stderr], [], [], 0)[0]:
                return os.read(self.process.stderr.fileno(), 65536).decode(errors="replace")
        except (ValueError, OSError):
            pass
        return ""

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout: float = 10) -> int | None:
        """SIGTERM to the server's process group, SIGKILL if it lingers; its status."""
        RUNNING.discard(self)
        if self.process.poll() is None:
            try:
                os.killpg(self.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.process.wait(5)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            try:
                stream.close()
            except OSError:
                pass
        return self.process.returncode


def start_web(binary: str, database: str, *extra: str, env=None) -> Server:
    server = Server([binary, "--web", "0", *extra, database], "web", env=env)
    server.read_announcement()
    return server


def start_repl_page(binary: str, database: str, *extra: str) -> Server:
    """`sqlive [extra] DATABASE` as a scripted REPL with `.web 0` typed: its page."""
    server = Server([binary, *extra, database], "web")
    server.process.stdin.write(b".web 0\n")
    server.process.stdin.flush()
    server.read_announcement()
    return server


def start_mcp(binary: str, database: str, *extra: str, wrapper: list[str] = (), env=None) -> Server:
    server = Server([*wrapper, binary, "--mcp", "--http", "0", *extra, database], "mcp", env=env)
    server.read_announcement()
    return server


# ------------------------------------------------------------ WebSocket


class Closed(Exception):
    """The WebSocket was closed (code and reason) or the connection ended."""

    def __init__(self, code: int | None, reason: str):
        super().__init__(f"closed {code}: {reason}")
        self.code = code
        self.reason = reason


class WebSocket:
    """One WebSocket to a sqlive page server, as the page opens it."""

    def __init__(self, port: int, path: str, headers: dict | None = None, timeout: float = 30):
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buffer = b""
        self.next_id = 0
        self.pending: list[dict] = []  # notifications read while waiting for a response
        self.close_code: int | None = None
        self.close_reason = ""
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [
            f"GET {path} HTTP/1.1",
            f"Host: 127.0.0.1:{port}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}",
            "Sec-WebSocket-Version: 13",
        ]
        for name, value in (headers or {}).items():
            lines.append(f"{name}: {value}")
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = self._read_until(b"\r\n\r\n")
        status_line = head.split(b"\r\n", 1)[0].decode(errors="replace")
        self.status = int(status_line.split()[1]) if len(status_line.split()) > 1 else 0
        if self.status != 101:
            raise Closed(None, f"handshake answered {status_line}")

    @classmethod
    def page(cls, port: int, token: str, initialize: bool = True, timeout: float = 30) -> "WebSocket":
        """The page's WebSocket (its Origin and token), initialized."""
        socket_ = cls(port, f"/rpc?token={token}", {"Origin": f"http://127.0.0.1:{port}"}, timeout=timeout)
        if initialize:
            answer = socket_.request("initialize", {"clientInfo": {"name": "hostile"}})
            if answer.get("result", {}).get("serverInfo", {}).get("name") != "sqlive":
                raise RuntimeError(f"initialize answered {answer}")
        return socket_

    # -- bytes

    def _read_until(self, marker: bytes) -> bytes:
        while marker not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise Closed(None, "connection ended during the handshake")
            self.buffer += chunk
        head, self.buffer = self.buffer.split(marker, 1)
        return head

    def _frame(self, opcode: int, payload: bytes, fin: bool = True) -> bytes:
        head = bytes([(0x80 if fin else 0) | opcode])
        length = len(payload)
        if length < 126:
            head += bytes([0x80 | length])
        elif length < 1 << 16:
            head += bytes([0x80 | 126]) + struct.pack("!H", length)
        else:
            head += bytes([0x80 | 127]) + struct.pack("!Q", length)
        mask = os.urandom(4)
        # Masking a megabyte byte by byte in Python is slow: XOR as integers.
        repeated = (mask * (length // 4 + 1))[:length]
        masked = (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(length, "big")
        return head + mask + masked

    def send_text(self, text: str) -> None:
        self.sock.sendall(self._frame(0x1, text.encode()))

    def send_frame_head(self, length: int) -> None:
        """A text frame's head announcing `length` bytes, and none of them."""
        head = bytes([0x81, 0x80 | 127]) + struct.pack("!Q", length) + os.urandom(4)
        self.sock.sendall(head)

    def _parse_frame(self):
        """The first whole frame in the buffer, consumed: (fin, opcode,
        payload); None while it is not all there (a time-out then loses
        nothing)."""
        buffer = self.buffer
        if len(buffer) < 2:
            return None
        b0, b1 = buffer[0], buffer[1]
        length = b1 & 0x7F
        at = 2
        if length == 126:
            if len(buffer) < 4:
                return None
            length = struct.unpack("!H", buffer[2:4])[0]
            at = 4
        elif length == 127:
            if len(buffer) < 10:
                return None
            length = struct.unpack("!Q", buffer[2:10])[0]
            at = 10
        mask = None
        if b1 & 0x80:
            if len(buffer) < at + 4:
                return None
            mask = buffer[at : at + 4]
            at += 4
        if len(buffer) < at + length:
            return None
        payload = buffer[at : at + length]
        self.buffer = buffer[at + length :]
        if mask:
            payload = bytes(x ^ mask[i % 4] for i, x in enumerate(payload))
        return bool(b0 & 0x80), b0 & 0x0F, payload

    def receive_frame(self, timeout: float | None = None) -> tuple[int, bytes]:
        """One message (fragments joined); pings answered; Closed at a
        close; socket.timeout when nothing whole came in time."""
        self.sock.settimeout(timeout)
        message = b""
        opcode = None
        while True:
            frame = self._parse_frame()
            if frame is None:
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise Closed(self.close_code, "connection ended")
                self.buffer += chunk
                continue
            fin, op, payload = frame
            if op == 0x8:
                self.close_code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                self.close_reason = payload[2:].decode(errors="replace")
                raise Closed(self.close_code, self.close_reason)
            if op == 0x9:
                self.sock.sendall(self._frame(0xA, payload))
                continue
            if op == 0xA:
                continue
            if opcode is None:
                opcode = op
            message += payload
            if fin:
                return opcode, message

    def receive(self, timeout: float | None = None) -> dict:
        _, payload = self.receive_frame(timeout)
        return json.loads(payload)

    def close_code_within(self, timeout: float) -> int | None:
        """Reads until the server closes; its close code (None: the TCP
        connection ended without one, or nothing came in time: `ended`
        says which)."""
        deadline = time.monotonic() + timeout
        self.ended = "still open"
        try:
            while time.monotonic() < deadline:
                self.receive_frame(max(0.05, deadline - time.monotonic()))
        except Closed as closed:
            self.ended = "a close frame" if closed.code is not None else "the connection ended, no close frame"
            return closed.code
        except TimeoutError:
            self.ended = f"still open after {timeout:g} s"
        except OSError as error:
            self.ended = f"the connection ended, no close frame ({error})"
        return None

    # -- JSON-RPC

    def send_request(self, method: str, params: dict | None = None, id_: int | None = None) -> int:
        if id_ is None:
            self.next_id += 1
            id_ = self.next_id
        message = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            message["params"] = params
        self.send_text(json.dumps(message))
        return id_

    def notify(self, method: str, params: dict | None = None) -> None:
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send_text(json.dumps(message))

    def response(self, id_: int, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no response to {id_} in {timeout} s")
            message = self.receive(left)
            if message.get("id") == id_ and ("result" in message or "error" in message):
                return message
            self.pending.append(message)
            if len(self.pending) > 10000:
                del self.pending[:5000]

    def request(self, method: str, params: dict | None = None, timeout: float = 60) -> dict:
        return self.response(self.send_request(method, params), timeout)

    def execute(self, sql: str, timeout: float = 60) -> dict:
        return self.request("query/execute", {"sql": sql}, timeout)

    def abandon(self) -> None:
        """Closes the TCP connection without a WebSocket close."""
        try:
            self.sock.close()
        except OSError:
            pass

    def close(self) -> None:
        try:
            self.sock.sendall(self._frame(0x8, struct.pack("!H", 1000)))
        except OSError:
            pass
        self.abandon()


def first_value(response: dict):
    """The first value of the first row of a query/execute response."""
    try:
        return response["result"]["results"][0]["rows"][0][0]
    except (KeyError, IndexError, TypeError):
        return None


def error_text(response: dict) -> str:
    """A JSON-RPC error's message and data, as one string ('' when none)."""
    error = response.get("error")
    if not error:
        return ""
    data = error.get("data")
    return f"{error.get('message', '')} {json.dumps(data) if data is not None else ''}".strip()


# ----------------------------------------------------------------- HTTP


class Response:
    def __init__(self, status: int, headers: dict, body: bytes):
        self.status = status
        self.headers = headers  # names in lower case
        self.body = body

    @property
    def text(self) -> str:
        return self.body.decode(errors="replace")

    def message(self) -> dict:
        """The JSON-RPC message: the body, or the last SSE event's data."""
        text = self.text.strip()
        if text.startswith("{"):
            return json.loads(text)
        data = [line[len("data:") :].strip() for line in text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1]) if data else {}


class HTTPConnection:
    """One HTTP/1.1 connection, raw: requests written as given (bad Host
    headers included), answers read by Content-Length, chunks, or to the
    end of the connection."""

    def __init__(self, port: int, timeout: float = 30):
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buffer = b""

    def send(self, method: str, path: str, headers: dict, body: bytes = b"") -> None:
        lines = [f"{method} {path} HTTP/1.1"]
        if not any(name.lower() == "host" for name in headers):
            lines.append(f"Host: 127.0.0.1:{self.port}")
        for name, value in headers.items():
            lines.append(f"{name}: {value}")
        if body or method in ("POST", "PUT"):
            lines.append(f"Content-Length: {len(body)}")
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)

    def _fill(self) -> bool:
        chunk = self.sock.recv(65536)
        if not chunk:
            return False
        self.buffer += chunk
        return True

    def _line(self) -> bytes:
        while b"\r\n" not in self.buffer:
            if not self._fill():
                raise ConnectionError("connection ended")
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line

    def read_head(self) -> tuple[int, dict]:
        status_line = self._line().decode()
        headers = {}
        while True:
            line = self._line().decode()
            if not line:
                break
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return int(status_line.split()[1]), headers

    def read_body(self, headers: dict, until_message_id=None) -> bytes:
        """The body; for an event stream, up to the event that carries the
        response with `until_message_id` (or the stream's end)."""
        if "content-length" in headers:
            length = int(headers["content-length"])
            while len(self.buffer) < length:
                if not self._fill():
                    break
            body, self.buffer = self.buffer[:length], self.buffer[length:]
            return body
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self._line().split(b";")[0], 16)
                if size == 0:
                    self._line()
                    return body
                while len(self.buffer) < size + 2:
                    if not self._fill():
                        return body
                body += self.buffer[:size]
                self.buffer = self.buffer[size + 2 :]
                if until_message_id is not None and _has_response(body, until_message_id):
                    return body
        body = self.buffer
        self.buffer = b""
        while True:
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            body += chunk
        return body

    def request(self, method: str, path: str, headers: dict, body: bytes = b"", until_message_id=None) -> Response:
        self.send(method, path, headers, body)
        status, response_headers = self.read_head()
        if method == "HEAD" or status in (101, 204, 304):
            return Response(status, response_headers, b"")
        return Response(status, response_headers, self.read_body(response_headers, until_message_id))

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def _has_response(body: bytes, id_) -> bool:
    for line in body.decode(errors="replace").splitlines():
        if line.startswith("data:"):
            try:
                message = json.loads(line[5:])
            except ValueError:
                continue
            if message.get("id") == id_ and ("result" in message or "error" in message):
                return True
    return False


def http(port: int, method: str, path: str, headers: dict, body: bytes = b"", timeout: float = 30) -> Response:
    """One request on a connection of its own."""
    connection = HTTPConnection(port, timeout)
    try:
        until = None
        if body:
            try:
                until = json.loads(body).get("id")
            except (ValueError, AttributeError):
                pass
        return connection.request(method, path, headers, body, until)
    finally:
        connection.close()


# ------------------------------------------------------- MCP over HTTP

MCP_VERSION = "2025-11-25"
STATELESS_VERSION = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": STATELESS_VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "hostile", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def mcp_headers(token: str, session: str | None = None) -> dict:
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    if session:
        headers["Mcp-Session-Id"] = session
        headers["MCP-Protocol-Version"] = MCP_VERSION
    return headers


def initialize_message(id_: int = 1) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": id_,
            "method": "initialize",
            "params": {
                "protocolVersion": MCP_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "hostile", "version": "1"},
            },
        }
    ).encode()


class MCPSession:
    """A session of the handshake era over HTTP, initialized."""

    def __init__(self, port: int, token: str, timeout: float = 30):
        self.port = port
        self.token = token
        self.timeout = timeout
        opened = http(port, "POST", "/mcp", mcp_headers(token), initialize_message(), timeout)
        self.opened = opened
        self.key = opened.headers.get("mcp-session-id")
        if opened.status != 200 or not self.key:
            raise RuntimeError(f"initialize answered {opened.status}: {opened.text[:300]}")
        done = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if done.status != 202:
            raise RuntimeError(f"notifications/initialized answered {done.status}")
        self.next_id = 1

    def post(self, message: dict) -> Response:
        return http(
            self.port, "POST", "/mcp", mcp_headers(self.token, self.key), json.dumps(message).encode(), self.timeout
        )

    def call(self, tool: str, arguments: dict) -> dict:
        self.next_id += 1
        return self.post(
            {
                "jsonrpc": "2.0",
                "id": self.next_id,
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments},
            }
        ).message()

    def delete(self) -> int:
        return http(self.port, "DELETE", "/mcp", mcp_headers(self.token, self.key), timeout=self.timeout).status


def stateless(token: str, id_, method: str, tool: str | None = None, arguments: dict | None = None):
    """Headers and body of a request of the stateless era (2026-07-28)."""
    params: dict = {"_meta": ENVELOPE}
    if tool:
        params["name"] = tool
        params["arguments"] = arguments or {}
    elif arguments:
        params.update(arguments)
    message = {"jsonrpc": "2.0", "method": method, "params": params}
    if id_ is not None:
        message["id"] = id_
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": STATELESS_VERSION,
        "Mcp-Method": method,
    }
    if tool:
        headers["Mcp-Name"] = tool
    return headers, json.dumps(message).encode()


def tool_rows(message: dict):
    try:
        return message["result"]["structuredContent"]["rows"]
    except (KeyError, TypeError):
        return None


def tool_error(message: dict) -> str:
    """A tool call's failure, as text ('' when it succeeded)."""
    if "error" in message:
        return json.dumps(message["error"])
    result = message.get("result", {})
    if result.get("isError"):
        return " ".join(part.get("text", "") for part in result.get("content", []))
    return ""


_TOKEN = re.compile(r"token=[0-9a-zA-Z]+")


def redact(text: str) -> str:
    return _TOKEN.sub("token=…", text)
