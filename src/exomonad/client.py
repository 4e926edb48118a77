"""The project's server for ExoMonad's own commands: found, authenticated, called.

:class:`ServerClient` finds the server by its pid file, sends the caller's token and
turns error answers into :class:`ServerError`; each request is one
:func:`~exomonad.server.pidfile.server_request`, on :mod:`exomonad.uds` (the one HTTP
client of the socket, which the hook client and ``mcp-stdio`` use too).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from exomonad.errors import ServerError, ServerNotRunningError
from exomonad.server.identity import TOKEN_HEADER
from exomonad.server.pidfile import ServerInfo, read_server_info, server_request

__all__ = ["ServerClient", "ServerError", "ServerNotRunningError"]


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
        headers = {TOKEN_HEADER: self.token} if self.token else {}
        return server_request(self.info().socket, method, path, body, timeout=self.timeout,
                              headers=headers)  # fmt: skip

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
