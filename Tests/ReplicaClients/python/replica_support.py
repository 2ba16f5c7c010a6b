"""What the replica tests share: free loopback ports, the JSON-RPC client of
Samples/clients/python, and waiting for one live query's next change."""

import pathlib
import queue
import socket
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "Samples" / "clients" / "python"))
from sqlive_client import SQLiveClient, SQLiveError  # noqa: E402,F401


def free_ports(count):
    """`count` distinct free ports of 127.0.0.1 (all held while chosen)."""
    sockets = []
    for _ in range(count):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        sockets.append(s)
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def changed(client, name, timeout, skipped=None):
    """The next liveQuery/changed of `name`'s rows (others are skipped, and
    their methods added to `skipped`)."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"no notification for {name}")
        try:
            message = client.next_notification(timeout=left)
        except queue.Empty:
            raise AssertionError(f"no notification for {name}")
        assert message is not None, "sqlive ended"
        if message["method"] == "liveQuery/changed" and message["params"]["name"] == name:
            return message["params"]
        if skipped is not None:
            skipped.append(message["method"])
