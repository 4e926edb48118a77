"""A small HTTP/1.1 server on a Unix socket for client tests: every request goes to a
handler (in a thread of its own) that answers with raw bytes, so a test can answer
anything: chunks, server-sent events, a truncated body, nothing at all."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Request", "UdsServer", "http_answer"]


def http_answer(status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> bytes:
    """A whole answer with a Content-Length."""
    head = [f"HTTP/1.1 {status} X", f"Content-Length: {len(body)}",
            *(f"{k}: {v}" for k, v in (headers or {}).items())]  # fmt: skip
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


@dataclass
class Request:
    """One request as the client sent it, and the connection to answer on."""

    method: str
    target: str
    headers: dict[str, str]  # names in lower case
    body: bytes
    conn: socket.socket = field(repr=False)

    def send(self, data: bytes) -> None:
        """Write raw bytes of the answer."""
        self.conn.sendall(data)


class UdsServer:
    """Listens on ``path``; ``handler(request)`` answers each request (the connection is
    closed when it returns). Every request is kept in :attr:`requests`."""

    def __init__(self, path: Path, handler: Callable[[Request], None]) -> None:
        self.path, self.handler = path, handler
        self.requests: list[Request] = []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(64)
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                more = conn.recv(65536)
                if not more:
                    return
                data += more
            head, _, body = data.partition(b"\r\n\r\n")
            first, *lines = head.decode("latin-1").split("\r\n")
            headers = {k.strip().lower(): v.strip() for k, _, v in
                       (line.partition(":") for line in lines)}  # fmt: skip
            while len(body) < int(headers.get("content-length", "0")):
                body += conn.recv(65536)
            method, target, _ = first.split(" ", 2)
            request = Request(method, target, headers, body, conn)
            self.requests.append(request)
            with contextlib.suppress(OSError):  # the client went away
                self.handler(request)

    def close(self) -> None:
        """Stop accepting (connections being answered finish on their own)."""
        self.sock.close()
        self.path.unlink(missing_ok=True)
