"""The dashboard's loopback TCP listener: a second uvicorn server in the server's loop.

Browsers cannot reach a Unix socket, so on request the server also listens on
``127.0.0.1`` (never any other address) and serves the dashboard there, and only the
dashboard (no MCP, hooks or tools), behind :class:`~.access.TokenGate`. It opens when
the server starts with ``exomonad serve --dashboard-port N`` (or ``[dashboard] port``),
and its URL with a fresh token is handed to ``announce`` (the serve command prints it on
its terminal); or later, when a person runs ``exomonad dashboard``, which gets a fresh
token over the Unix socket and prints the URL itself. Tokens live in this process's
memory only: never logged, never written to a file.

A :class:`DashboardListener` is one of the server's services (``name``, :meth:`run`,
:meth:`request_stop`, :meth:`health`); stopping it closes the listener: its event
streams end first (:func:`until_closed`), anything else still open gets :data:`GRACE`
seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterator
from typing import Any, TypeVar

import uvicorn
from starlette.types import ASGIApp

from exomonad.errors import ExomonadError
from exomonad.server.dashboard.access import DashboardTokens, TokenGate, security_headers

__all__ = ["GRACE", "HOST", "DashboardListener", "until_closed"]

#: The only address the dashboard listens on.
HOST = "127.0.0.1"
#: Seconds open connections get when the listener closes.
GRACE = 1

T = TypeVar("T")


class _Quiet(uvicorn.Server):
    """uvicorn that leaves the process's signal handlers to the main server."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def until_closed(chunks: AsyncIterable[T], closing: asyncio.Event) -> AsyncIterator[T]:
    """``chunks`` until they end or ``closing`` is set (the one waited for is cancelled:
    an event stream's generator closes its subscription)."""
    source = aiter(chunks)
    closed = asyncio.ensure_future(closing.wait())
    try:
        while True:
            chunk = asyncio.ensure_future(anext(source))
            await asyncio.wait({chunk, closed}, return_when=asyncio.FIRST_COMPLETED)
            if not chunk.done():
                chunk.cancel()
                with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                    await chunk
                return
            try:
                yield chunk.result()
            except StopAsyncIteration:
                return
    finally:
        closed.cancel()


def _bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise ExomonadError(f"the dashboard cannot listen on {HOST}:{port}: {exc}") from exc
    sock.listen(64)
    return sock


class DashboardListener:
    """The TCP listener and its tokens (see the module doc).

    Parameters
    ----------
    make_app:
        Builds the dashboard's ASGI app (paths relative to the token) given
        :attr:`closing`, set when the listener closes: its event streams end then.
    port:
        Open at start on this port (0: any free one); None: only when asked.
    announce:
        Given the URL (with a fresh token) when the listener opens at start.
    """

    name = "dashboard"

    def __init__(self, make_app: Callable[[asyncio.Event], ASGIApp], *, port: int | None = None,
                 announce: Callable[[str], None] | None = None) -> None:  # fmt: skip
        self.tokens = DashboardTokens()
        self.port: int | None = None
        self.closing = asyncio.Event()
        self._app = TokenGate(security_headers(make_app(self.closing)), self.tokens,
                              lambda: self.port)  # fmt: skip
        self._start_port = port
        self._announce = announce
        self._server: _Quiet | None = None
        self._task: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._stop = asyncio.Event()
        self.issued = 0

    def url(self, token: str) -> str:
        """The dashboard's address with ``token``."""
        return f"http://{HOST}:{self.port}/{token}/"

    async def open(self, port: int | None = None) -> str:
        """Listen (if not yet: on ``port``, 0 or None for any free one) and return the
        URL with a new token."""
        async with self._lock:
            if self._server is None:
                sock = _bind(port or 0)
                self.closing.clear()
                config = uvicorn.Config(self._app, log_level="warning", access_log=False,
                                        lifespan="off", server_header=False,
                                        timeout_graceful_shutdown=GRACE)  # fmt: skip
                server = _Quiet(config)
                task = asyncio.create_task(server.serve(sockets=[sock]),
                                           name="dashboard-listener")  # fmt: skip
                self._server, self._task, self.port = server, task, sock.getsockname()[1]
                while not server.started and not task.done():  # uvicorn has no event
                    await asyncio.sleep(0.005)
                if task.done():
                    self._server, self._task, self.port = None, None, None
                    sock.close()
                    why = None if task.cancelled() else task.exception()
                    raise ExomonadError(f"the dashboard listener did not start: {why!r}")
        self.issued += 1
        return self.url(self.tokens.issue())

    async def close(self) -> None:
        """Stop listening (event streams get :data:`GRACE` seconds)."""
        async with self._lock:
            server, task, self._server, self._task = self._server, self._task, None, None
            if server is None or task is None:
                return
            self.closing.set()  # event streams end: nothing for uvicorn to wait for
            server.should_exit = True
            with contextlib.suppress(asyncio.CancelledError):
                await task
            self.port = None

    async def run(self, ready: asyncio.Event) -> None:
        """Open at start when a port was given (announcing the URL), then serve until
        :meth:`request_stop`."""
        if self._start_port is not None:
            url = await self.open(self._start_port)
            if self._announce is not None:
                self._announce(url)
        ready.set()
        try:
            await self._stop.wait()
        finally:
            await self.close()

    def request_stop(self) -> None:
        """Let :meth:`run` close the listener and return."""
        self._stop.set()

    def health(self) -> dict[str, Any]:
        """Whether it listens, where, and how many tokens it issued (never a token)."""
        return {"listening": self._server is not None, "host": HOST, "port": self.port,
                "tokens_issued": self.issued}  # fmt: skip
