"""The client side of the project's server socket: find the server, say who is calling,
speak HTTP/1.1 over the Unix socket by hand.

Every client of ``exomonad serve`` goes through here: the hook client (a process per
tool call of every agent), ``exomonad mcp-stdio`` (a process per agent session, proxying
its MCP to the server) and ExoMonad's own commands
(:func:`exomonad.server.pidfile.server_request`). So it imports only the cheapest of the
standard library: ``_socket``, not :mod:`socket` (whose enums and ``selectors`` cost a
process ~9 ms of CPU), no :mod:`http.client` (~35 ms), no :mod:`pathlib`; JSON through
:mod:`exomonad.util.fastjson`.

One exchange per connection (``Connection: close``): the server is local, a connect is
cheap, and a request never waits behind another one.
"""

from __future__ import annotations

import _socket
import os
import time

from exomonad.errors import ExomonadError, ServerError, ServerNotRunningError
from exomonad.util import fastjson
from exomonad.util.digits import is_number
from exomonad.util.proc import pid_alive

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs ~10 ms
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

__all__ = [
    "CONNECT_TIMEOUT",
    "LEAD_TOKEN_FILE",
    "MAX_ANSWER",
    "TOKEN_HEADER",
    "Connection",
    "Response",
    "caller_token",
    "live_server",
    "pid_file",
    "request",
]

#: HTTP header carrying the caller's token.
TOKEN_HEADER = "x-exomonad-token"
#: The root lead's token, in the state dir (written by the server, mode 0600).
LEAD_TOKEN_FILE = "lead.token"
#: Largest answer body read (bytes).
MAX_ANSWER = 16 << 20
#: Seconds to connect when the exchange itself has no time limit.
CONNECT_TIMEOUT = 10.0
_MAX_HEAD = 64 << 10


def pid_file(state: str) -> dict[str, Any] | None:
    """The server's pid file (``<state>/server.pid``, a JSON object), or None."""
    try:
        with open(os.path.join(state, "server.pid"), "rb") as fh:
            data = fastjson.loads(fh.read())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _pid_in(data: dict[str, Any] | None) -> int | None:
    try:
        pid = int(data["pid"])  # type: ignore[index]  # None: TypeError
    except (TypeError, KeyError, ValueError):
        return None
    return pid if pid > 0 else None


def server_pid(state: str) -> int | None:
    """The pid the project's pid file names (a positive number), or None."""
    return _pid_in(pid_file(state))


def live_server(state: str) -> tuple[int, str] | None:
    """``(pid, socket path)`` of the project's server if its process runs, else None."""
    data = pid_file(state)
    pid, sock = _pid_in(data), data.get("socket") if data is not None else None
    return (pid, sock) if pid is not None and isinstance(sock, str) and pid_alive(pid) else None


def _read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except OSError:
        return None


def caller_token(state: str, *, may_lead: bool, role: str | None = None,
                 refused: Callable[[str], None] | None = None) -> str | None:  # fmt: skip
    """The token this process presents: ``$EXOMONAD_TOKEN``; else, if ``may_lead``, the
    root lead's (``lead.token``) when this process belongs to the lead's own Claude Code
    session (a descendant of a Claude Code lead and of no other agent: see
    :func:`exomonad.ancestry.claude_lead_ancestor`); else None (the least role).

    ``role``: the role asked for (``mcp-stdio --role``); the lead's token only if it is
    the role the server gave that token (in ``tokens.json``, from ``[lead] role``).
    ``refused`` hears why a process that asked for the lead's token does not get it.
    """
    token = os.environ.get("EXOMONAD_TOKEN")
    if token:
        return token
    lead = (_read_text(os.path.join(state, LEAD_TOKEN_FILE)) or "").strip() if may_lead else ""
    if not lead:
        return None
    if role is not None:
        try:
            held = fastjson.loads(_read_text(os.path.join(state, "tokens.json")) or "{}")
            lead_role = held.get(lead, {}).get("role")
        except (ValueError, AttributeError):
            lead_role = None
        if role != lead_role:
            return None
    from exomonad.ancestry import claude_lead_ancestor

    why_not = claude_lead_ancestor()
    if why_not is not None:
        if refused is not None:
            refused(why_not)
        return None
    return lead


class Response:
    """An HTTP answer: status, headers (names in lower case), body."""

    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    def json(self) -> Any:
        """The body as JSON (``ValueError`` if it is not)."""
        return fastjson.loads(self.body)


class Connection:
    """One HTTP/1.1 exchange on a connection of its own to the server's socket.

    ``timeout`` (seconds) bounds the whole exchange; None: connecting is bounded by
    :data:`CONNECT_TIMEOUT`, the answer is waited for as long as it takes (a killed
    server's connections are closed by the kernel, so nothing waits on a dead server),
    or each read up to ``read_timeout`` seconds (a stream's).
    Raises :class:`ServerNotRunningError` if nobody listens on the socket,
    :class:`ServerError` for an answer that is not HTTP, ``OSError`` (``TimeoutError``
    included) when the connection fails.
    """

    def __init__(self, sock_path: str, timeout: float | None = None, *,
                 read_timeout: float | None = None) -> None:  # fmt: skip
        self.deadline = None if timeout is None else time.monotonic() + timeout
        #: Without a deadline: how long one read may wait (None: as long as it takes).
        self.read_timeout = read_timeout
        self.sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        self.status = 0
        self.headers: dict[str, str] = {}
        self._buf = b""
        try:
            self.sock.settimeout(CONNECT_TIMEOUT if timeout is None else timeout)
            self.sock.connect(sock_path)
        except (FileNotFoundError, ConnectionRefusedError) as exc:
            self.sock.close()
            raise ServerNotRunningError(f"nobody listens on {sock_path} ({exc})") from exc
        except BaseException:
            self.sock.close()
            raise

    def send(self, method: str, target: str, body: bytes = b"",
             headers: dict[str, str] | None = None) -> None:  # fmt: skip
        """Send the request."""
        lines = [f"{method} {target} HTTP/1.1", "Host: localhost", "Connection: close",
                 f"Content-Length: {len(body)}"]  # fmt: skip
        for name, value in (headers or {}).items():
            if "\r" in value or "\n" in value or "\r" in name or "\n" in name:
                raise ExomonadError(f"HTTP header {name!r} holds a line break")
            lines.append(f"{name}: {value}")
        self._wait()
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)

    def _wait(self) -> None:
        """Arm the socket's time-out with what is left of the deadline."""
        if self.deadline is None:
            self.sock.settimeout(self.read_timeout)
            return
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no answer in time")
        self.sock.settimeout(left)

    def _more(self) -> bytes:
        self._wait()
        return self.sock.recv(65536)

    def head(self) -> tuple[int, dict[str, str]]:
        """Read the status line and headers."""
        while (end := self._buf.find(b"\r\n\r\n")) < 0:
            data = self._more()
            if not data:
                raise ServerError("the connection closed before the answer")
            self._buf += data
            if len(self._buf) > _MAX_HEAD:
                raise ServerError("the answer's head is too large")
        head, self._buf = self._buf[:end].decode("latin-1"), self._buf[end + 4 :]
        first, *lines = head.split("\r\n")
        parts = first.split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/") or not is_number(parts[1]):
            raise ServerError(f"not an HTTP answer: {first[:80]!r}")
        self.status = int(parts[1])
        for line in lines:
            name, sep, value = line.partition(":")
            if sep:
                self.headers[name.strip().lower()] = value.strip()
        return self.status, self.headers

    def chunks(self) -> Iterator[bytes]:
        """The body as it arrives (after :meth:`head`), de-chunked."""
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            yield from self._dechunked()
            return
        length = self.headers.get("content-length")
        left = int(length) if length is not None and is_number(length) else -1
        data, self._buf = self._buf, b""
        while left != 0:
            if data:
                piece = data if left < 0 else data[:left]
                left -= 0 if left < 0 else len(piece)
                yield piece
            if left == 0:
                return
            data = self._more()
            if not data:
                if left > 0:
                    raise ServerError("the connection closed in the middle of the answer")
                return

    def _dechunked(self) -> Iterator[bytes]:
        while True:
            while (end := self._buf.find(b"\r\n")) < 0:
                self._fill("a chunk's size")
            try:
                size = int(self._buf[:end].split(b";")[0], 16)
            except ValueError:
                raise ServerError("a malformed chunk in the answer") from None
            self._buf = self._buf[end + 2 :]
            if size == 0:
                return
            while len(self._buf) < size + 2:
                self._fill("a chunk")
            chunk, self._buf = self._buf[:size], self._buf[size + 2 :]
            yield chunk

    def _fill(self, what: str) -> None:
        data = self._more()
        if not data:
            raise ServerError(f"the connection closed in the middle of {what}")
        self._buf += data

    def body(self, limit: int = MAX_ANSWER) -> bytes:
        """The whole body (after :meth:`head`); :class:`ServerError` above ``limit``."""
        out, size = [], 0
        for chunk in self.chunks():
            size += len(chunk)
            if size > limit:
                raise ServerError("the answer is too large")
            out.append(chunk)
        return b"".join(out)

    def close(self) -> None:
        """Close the connection (also what aborts an exchange from another thread)."""
        try:  # noqa: SIM105  (contextlib's imports would cost the hook client)
            self.sock.shutdown(_socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


def request(sock_path: str, method: str, target: str, body: bytes = b"",
            headers: dict[str, str] | None = None, *, timeout: float | None,
            limit: int = MAX_ANSWER) -> Response:  # fmt: skip
    """One exchange with the server on ``sock_path`` (see :class:`Connection`)."""
    conn = Connection(sock_path, timeout)
    try:
        conn.send(method, target, body, headers)
        status, head = conn.head()
        return Response(status, head, conn.body(limit))
    finally:
        conn.close()
