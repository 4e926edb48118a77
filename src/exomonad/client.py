"""The one client of the project's server for ExoMonad's own commands (JSON over the socket).

The hook client (:mod:`exomonad.hookclient`) keeps its own stdlib-only HTTP by hand for
start-up speed, and ``mcp-stdio`` speaks MCP through the SDK; everything else (the
teammate, ``status``, ``worker``, ``up``/``down``, ``doctor``) uses :class:`ServerClient`.
"""

from __future__ import annotations

import http.client
import socket
from pathlib import Path
from typing import Any

import orjson

from exomonad.errors import ExomonadError
from exomonad.server.identity import TOKEN_HEADER
from exomonad.server.pidfile import ServerInfo, read_server_info

__all__ = ["ServerClient", "ServerError", "ServerNotRunningError"]


class ServerNotRunningError(ExomonadError):
    """No ExoMonad server runs for this project."""


class ServerError(ExomonadError):
    """The server answered with an error (its message included)."""


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self._path)
        self.sock = sock


class ServerClient:
    """JSON requests to the server of the project whose state dir is ``state``.

    Parameters
    ----------
    state:
        The project's ``.exomonad/``.
    token:
        Sent as the caller's identity (``x-exomonad-token``); ``None``: anonymous.
    timeout:
        Seconds for connecting and for each answer.
    """

    def __init__(self, state: Path, *, token: str | None = None, timeout: float = 60.0) -> None:
        self.state = state
        self.token = token
        self.timeout = timeout

    def info(self) -> ServerInfo:
        """The running server's pid file, or :class:`ServerNotRunningError`."""
        info = read_server_info(self.state)
        if info is None or not info.alive:
            raise ServerNotRunningError(
                f"no ExoMonad server runs for {self.state.parent}: start it with "
                "`exomonad serve` (or `exomonad up`)"
            )
        return info

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """One request; the status and the decoded JSON answer."""
        conn = _UnixConnection(self.info().socket, self.timeout)
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers[TOKEN_HEADER] = self.token
        try:
            payload = None if body is None else orjson.dumps(body)
            conn.request(method, path, body=payload, headers=headers)
            response = conn.getresponse()
            raw = response.read()
        except OSError as exc:
            raise ServerNotRunningError(f"the server at {self.state} did not answer: {exc}"
                                        ) from exc
        finally:
            conn.close()
        try:
            return response.status, orjson.loads(raw) if raw else None
        except orjson.JSONDecodeError as exc:
            raise ServerError(f"{method} {path}: the answer is not JSON: {raw[:200]!r}") from exc

    def call(self, method: str, path: str, body: Any = None) -> Any:
        """Like :meth:`request`, raising :class:`ServerError` unless the status is 200."""
        status, data = self.request(method, path, body)
        if status != 200:
            error = data.get("error") if isinstance(data, dict) else data
            raise ServerError(f"{path}: {error}")
        return data

    def health(self) -> dict[str, Any]:
        """The server's ``/health`` document."""
        data: dict[str, Any] = self.call("GET", "/health")
        return data

    def tool(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """Call one ExoMonad tool as the token's identity (same checks as over MCP)."""
        data: dict[str, Any] = self.call("POST", f"/tool/{name}", arguments or {})
        return data
