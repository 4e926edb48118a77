"""``exomonad mcp-stdio`` with a server running: the agent's stdio, proxied to the
server's MCP endpoint, on the standard library alone.

Every agent session starts one (Claude Code's ``.mcp.json``, Gemini CLI's and Codex
CLI's MCP settings), and waits for it: so it imports no MCP SDK, no CLI framework and no
HTTP library (see :mod:`exomonad.uds`). The SDK is imported only when no server runs at
start (embedded mode, :mod:`exomonad.server.stdio_bridge`).

Each JSON-RPC message read from stdin (one per line) is POSTed to ``/mcp`` on the
server's Unix socket with the agent's token and the session's ``mcp-session-id``; each
answer (JSON, or server-sent events) goes to stdout, one message per line. This process
connects itself, so the server's ``SO_PEERCRED`` check sees a process of the agent's own
tree. Requests run concurrently, each on a connection and thread of its own, sent in the
order they were read. Messages the server sends on its own arrive on a ``GET /mcp``
stream, opened once the client said ``notifications/initialized``.

The server may be killed or restarted meanwhile. A request it can no longer answer (its
connection closed mid-request) is answered here with a JSON-RPC error at once, never
left waiting for the agent's own time-out (Gemini CLI: 10 minutes); so is a request made
while no server runs. The next message finds the restarted server through the pid file
and opens a new session on it, replaying the client's own ``initialize`` and
``notifications/initialized`` first, so the agent keeps its tools without reconnecting.
When stdin closes, requests in flight get :data:`DRAIN_TIMEOUT` seconds to be answered,
then the session is closed (``DELETE /mcp``).
"""

from __future__ import annotations

import os
import sys
import threading

from exomonad import uds
from exomonad.errors import ExomonadError, ServerError, ServerNotRunningError
from exomonad.state import nearest_state_dir
from exomonad.util import sse
from exomonad.util.fastjson import dumps, loads

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs ~10 ms
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import IO, Any

__all__ = ["DRAIN_TIMEOUT", "HANDSHAKE_TIMEOUT", "Proxy", "main", "proxy_if_running",
           "session_token"]  # fmt: skip

#: Seconds to wait, after stdin closed, for answers to requests already forwarded.
DRAIN_TIMEOUT = 30.0
#: Seconds to wait for a restarted server to answer the client's replayed handshake.
HANDSHAKE_TIMEOUT = 30.0
SESSION_HEADER = "mcp-session-id"
_INTERNAL_ERROR = -32603  # JSON-RPC
_NOT_RUNNING = ("no ExoMonad server is running for this project: start it (exomonad serve, "
                "or exomonad up), then call again")  # fmt: skip
_GONE = ("the ExoMonad server stopped before it answered (killed or restarted): the call "
         "may or may not have run; check before repeating it")  # fmt: skip
_OPTIONS = {"--role": "role", "--name": "name", "--state-dir": "state_dir",
            "--config-dir": "config_dir"}  # fmt: skip


def _note(message: str) -> None:
    sys.stderr.write(f"exomonad mcp-stdio: {message}\n")
    sys.stderr.flush()


class _Session:
    """One MCP session on one server process, and its ``GET`` stream."""

    def __init__(self, server: tuple[int, str], reply: uds.Response) -> None:
        """The session ``reply`` (the answer to ``initialize``) opened on ``server``."""
        self.pid, self.sock = server
        self.id = reply.headers.get(SESSION_HEADER)
        self.stream: uds.Connection | None = None


class Proxy:
    """Proxy ``stdin`` to the server of the project whose state dir is ``state``, its
    answers to ``out``, presenting ``token``."""

    def __init__(self, state: str, token: str | None, out: IO[bytes]) -> None:
        self.state, self.token, self.out = state, token, out
        self.session: _Session | None = None
        self.handshake: list[bytes] = []  # the client's initialize and initialized
        self._lock = threading.Lock()  # stdout, and the in-flight count
        self._idle = threading.Condition(self._lock)
        self._inflight = 0

    # -- out ------------------------------------------------------------------------------

    def emit(self, message: bytes) -> None:
        """Write one message to the client (on one line: JSON has line breaks only as
        whitespace)."""
        line = message.strip().replace(b"\r", b" ").replace(b"\n", b" ") + b"\n"
        with self._lock:
            try:
                self.out.write(line)
                self.out.flush()
            except (OSError, ValueError):
                pass  # the client is gone; stdin closes next

    def fail(self, request_id: object, reason: str) -> None:
        """Answer request ``request_id`` with a JSON-RPC error."""
        error = {"code": _INTERNAL_ERROR, "message": reason}
        self.emit(dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode())

    def _headers(self, session: _Session | None) -> dict[str, str]:
        headers = {"Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream"}  # fmt: skip
        if self.token:
            headers[uds.TOKEN_HEADER] = self.token
        if session is not None and session.id:
            headers[SESSION_HEADER] = session.id
        return headers

    # -- in -------------------------------------------------------------------------------

    def run(self, stdin: IO[bytes]) -> None:
        """Forward every message of ``stdin`` until it closes; then drain and close."""
        for line in stdin:
            if not line.strip():
                continue
            try:
                message = loads(line)
            except ValueError:
                message = None
            if not isinstance(message, dict):
                _note(f"dropping a line from stdin that is no JSON-RPC message: {line[:200]!r}")
                continue
            self.forward(message, line.strip())
        with self._idle:
            self._idle.wait_for(lambda: self._inflight == 0, DRAIN_TIMEOUT)
        self._close()

    def forward(self, message: dict[str, Any], raw: bytes) -> None:
        """Send one client message to the server (a new session first if needed)."""
        method = message.get("method")
        request_id = message.get("id")
        is_request = isinstance(method, str) and request_id is not None
        if method == "initialize":
            self.handshake = [raw]
        elif method == "notifications/initialized" and len(self.handshake) == 1:
            self.handshake.append(raw)
        server = uds.live_server(self.state)
        session = self.session
        if session is not None and (server is None or session.pid != server[0]):
            self._forget(session)  # killed or restarted: not this session any more
            session = None
        if server is None:
            if is_request:
                self.fail(request_id, _NOT_RUNNING)  # it never reached a server
            return
        try:
            if method == "initialize":
                self._initialize(server, raw, request_id)
                return
            if session is None and self.handshake:
                session = self.session = self._replay(server)
                if method == "notifications/initialized":
                    return  # replayed just now
            conn = self._post(server[1], raw, session)
        except ServerNotRunningError:
            if is_request:
                self.fail(request_id, _NOT_RUNNING)
            return
        except (OSError, ExomonadError) as exc:
            _note(f"lost the ExoMonad server (pid {server[0]}): {exc}")
            if is_request:
                self.fail(request_id, _GONE)
            return
        with self._lock:
            self._inflight += 1
        threading.Thread(target=self._answer, args=(conn, message, session),
                         daemon=True).start()  # fmt: skip

    def _post(self, sock: str, raw: bytes, session: _Session | None) -> uds.Connection:
        """Send one message; its connection, to read the answer from."""
        conn = uds.Connection(sock)
        try:
            conn.send("POST", "/mcp", raw, self._headers(session))
        except BaseException:
            conn.close()
            raise
        return conn

    def _answer(self, conn: uds.Connection, message: dict[str, Any],
                session: _Session | None) -> None:  # fmt: skip
        """Relay the server's answer to one forwarded message."""
        request_id = message.get("id")
        is_request = message.get("method") is not None and request_id is not None
        try:
            status, headers = conn.head()
            if status == 202:
                if is_request:
                    self.fail(request_id, "the server answered a request with 202 Accepted")
                elif message.get("method") == "notifications/initialized" and session:
                    self._listen(session)
            elif status >= 400:
                if status == 404 and session is not None:
                    self._forget(session)  # the server no longer knows it: open a new one
                if is_request:
                    self._refused(request_id, status, conn.body())
            elif headers.get("content-type", "").startswith("text/event-stream"):
                if not self._relay(sse.messages(conn.chunks()), request_id) and is_request:
                    self.fail(request_id, _GONE)
            elif is_request:
                self.emit(conn.body())
        except (OSError, ExomonadError) as exc:  # killed mid-request, restarted, closed
            if is_request:
                _note(f"lost the ExoMonad server while it answered: {exc}")
                self.fail(request_id, _GONE)
        finally:
            conn.close()
            with self._idle:
                self._inflight -= 1
                self._idle.notify_all()

    def _refused(self, request_id: object, status: int, body: bytes) -> None:
        """An HTTP error answer to a request: its JSON-RPC error under the request's id,
        else one saying the status."""
        try:
            error = loads(body).get("error")
        except (ValueError, AttributeError):
            error = None
        if isinstance(error, dict) and "code" in error and "message" in error:
            self.emit(dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode())
        else:
            self.fail(request_id, f"the ExoMonad server refused the request (HTTP {status})")

    def _relay(self, messages: Iterable[bytes], request_id: object) -> bool:
        """Write each message to the client; True once the answer to ``request_id`` was
        among them (None: relay until the stream ends)."""
        for data in messages:
            self.emit(data)
            if request_id is None:
                continue
            try:
                answer = loads(data)
            except ValueError:
                continue
            answered = isinstance(answer, dict) and "method" not in answer
            if answered and answer.get("id") == request_id:
                return True
        return False

    # -- sessions -------------------------------------------------------------------------

    def _handshake(self, server: tuple[int, str], raw: bytes,
                   session: _Session | None = None) -> uds.Response:  # fmt: skip
        """POST one message of the handshake (``initialize``, ``initialized``) and read
        its whole answer."""
        return uds.request(server[1], "POST", "/mcp", raw, self._headers(session),
                           timeout=HANDSHAKE_TIMEOUT)  # fmt: skip

    def _initialize(self, server: tuple[int, str], raw: bytes, request_id: object) -> None:
        """The client's own ``initialize``: a new session, its answer to the client."""
        if self.session is not None:
            self._forget(self.session)  # initialized again: the old one is done
        reply = self._handshake(server, raw)
        if reply.status >= 400:
            self._refused(request_id, reply.status, reply.body)
            return
        self.session = _Session(server, reply)
        self._relay(self._messages(reply), None)

    def _replay(self, server: tuple[int, str]) -> _Session:
        """A new session on a (restarted) server, opened with the client's own handshake;
        the answers are the client's no more (it had them from the first server)."""
        init, *rest = self.handshake
        reply = self._handshake(server, init)
        answer = next(iter(self._messages(reply)), b"")
        if reply.status >= 400 or not answer:
            raise ServerError(f"initialize answered with HTTP {reply.status}: {answer[:200]!r}")
        error = loads(answer).get("error")
        if error is not None:
            raise ServerError(f"the restarted server refused initialize: {error}")
        session = _Session(server, reply)
        for note in rest:
            reply = self._handshake(server, note, session)
            if reply.status >= 400:
                raise ServerError(f"the restarted server refused {note[:80]!r}: {reply.status}")
        if rest:
            self._listen(session)
        _note(f"took the session over to the ExoMonad server with pid {server[0]}")
        return session

    @staticmethod
    def _messages(reply: uds.Response) -> list[bytes]:
        """The messages of a whole answer: its JSON body, or its events' data."""
        if reply.headers.get("content-type", "").startswith("text/event-stream"):
            return list(sse.messages([reply.body]))
        return [reply.body] if reply.body.strip() else []

    def _listen(self, session: _Session) -> None:
        """Open the session's ``GET`` stream: what the server sends on its own."""
        try:
            conn = uds.Connection(session.sock)
        except (OSError, ExomonadError):
            return  # the next message finds out what became of the server
        try:
            conn.send("GET", "/mcp", b"", {**self._headers(session),
                                           "Accept": "text/event-stream"})  # fmt: skip
        except (OSError, ExomonadError):
            conn.close()
            return
        session.stream = conn
        threading.Thread(target=self._stream, args=(conn,), daemon=True).start()

    def _stream(self, conn: uds.Connection) -> None:
        try:
            status, headers = conn.head()
            if status == 200 and headers.get("content-type", "").startswith("text/event-stream"):
                self._relay(sse.messages(conn.chunks()), None)
        except (OSError, ExomonadError):
            pass  # the server went away (or closed the session): nothing more comes
        finally:
            conn.close()

    def _forget(self, session: _Session) -> None:
        if self.session is session:
            self.session = None
        if session.stream is not None:
            session.stream.close()

    def _close(self) -> None:
        """End the session on the server (``DELETE``), if it still runs."""
        session = self.session
        if session is None:
            return
        self._forget(session)
        server = uds.live_server(self.state)
        if server is not None and server[0] == session.pid:
            try:  # noqa: SIM105  (contextlib's imports would cost every session's start)
                uds.request(session.sock, "DELETE", "/mcp", b"", self._headers(session),
                            timeout=5.0)  # fmt: skip
            except (OSError, ExomonadError):
                pass


def session_token(state: str, role: str) -> str | None:
    """The token an ``mcp-stdio --role ROLE`` session presents (see
    :func:`exomonad.uds.caller_token`); says so on stderr when the lead's is refused."""

    def refused(why: str) -> None:
        _note(f"not the lead's session ({why}): connecting without the lead's token")

    return uds.caller_token(state, may_lead=True, role=role, refused=refused)


def _options(argv: list[str]) -> dict[str, str] | None:
    """``mcp-stdio``'s options, or None for anything else (``--help``, a typo)."""
    found: dict[str, str] = {}
    rest = list(argv)
    while rest:
        flag, eq, value = rest.pop(0).partition("=")
        if flag not in _OPTIONS or (not eq and not rest):
            return None
        found[_OPTIONS[flag]] = value if eq else rest.pop(0)
    return found


def main(argv: list[str]) -> int | None:
    """``exomonad mcp-stdio [OPTIONS]`` when the project's server runs: proxy stdio to
    it and return the exit code. None when this is not that case (``--help``, an option
    it does not know, no server running: embedded mode): the full CLI takes over."""
    found = _options(argv)
    if found is None:
        return None
    state = found.get("state_dir") or nearest_state_dir()
    if state is None:
        return None
    try:
        if not proxy_if_running(state, session_token(state, found.get("role", "worker"))):
            return None
    except KeyboardInterrupt:
        return 130
    return 0


def proxy_if_running(state: str, token: str | None) -> bool:
    """Proxy stdio to the project's server if one runs (its socket there); False if
    none does (nothing was read or written)."""
    server = uds.live_server(state)
    if server is None or not os.path.exists(server[1]):
        return False
    Proxy(state, token, sys.stdout.buffer).run(sys.stdin.buffer)
    return True
