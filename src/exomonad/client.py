"""The project's server for ExoMonad's own commands: found, authenticated, called.

:class:`ServerClient` finds the server by its pid file, sends the caller's token and
turns error answers into :class:`ServerError`; each request is one
:func:`~exomonad.server.pidfile.server_request`, on :mod:`exomonad.uds` (the one HTTP
client of the socket, which the hook client and ``mcp-stdio`` use too).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import orjson

from exomonad.errors import ServerError, ServerNotRunningError
from exomonad.server.events import SseMessage, parse_sse
from exomonad.server.identity import TOKEN_HEADER
from exomonad.server.pidfile import ServerInfo, read_server_info, server_request, server_stream
from exomonad.uds import LEAD_TOKEN_FILE

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

    @classmethod
    def as_lead(cls, state: Path, *, timeout: float = 60.0) -> ServerClient:
        """A client presenting the lead's token (``lead.token``) if there is one, else
        none. The server counts it only from a person's or the lead's own process."""
        path = state / LEAD_TOKEN_FILE
        token = path.read_text().strip() if path.exists() else None
        return cls(state, token=token or None, timeout=timeout)

    def _headers(self) -> dict[str, str]:
        return {TOKEN_HEADER: self.token} if self.token else {}

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
        return server_request(self.info().socket, method, path, body, timeout=self.timeout,
                              headers=self._headers())  # fmt: skip

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

    @contextlib.contextmanager
    def events(self, *, since: int | None = None,
               team: str | None = None) -> Iterator[Iterator[SseMessage]]:  # fmt: skip
        """The server's event stream (``GET /events``): server-sent events, the first an
        ``hello``; iterate until the server stops (a read waits at most ``timeout``
        seconds: the server pings every 15). :class:`ServerError` if refused."""
        query = urlencode({k: v for k, v in (("since", since), ("team", team)) if v is not None})
        target = "/events" + (f"?{query}" if query else "")
        with server_stream(self.info().socket, target, timeout=self.timeout,
                           headers=self._headers()) as (status, chunks):  # fmt: skip
            if status != 200:
                body = b"".join(chunks)
                try:
                    error = orjson.loads(body).get("error")
                except (orjson.JSONDecodeError, AttributeError):
                    error = body.decode(errors="replace")
                raise ServerError(f"/events: {error}")
            yield parse_sse(chunks)
