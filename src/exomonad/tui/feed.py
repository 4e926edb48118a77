"""The status view's connection: ``/status``, then ``/events`` from there; again after
every failure.

:meth:`Feed.items` is an endless async iterator of what the server says, in the order
:class:`~exomonad.tui.model.StatusModel` takes it: a :class:`~exomonad.tui.model.Snapshot`
on every (re)connection, then the events and gaps of ``GET /events``; a
:class:`~exomonad.tui.model.Down` when the server is gone, unreachable or refuses, after
which it tries again every ``retry`` seconds. Reconnecting to the same server process
resumes where it stopped (``Last-Event-ID``: nothing missed, nothing twice); a new server
process (sequence ids start again) is read from ``backlog`` events before its snapshot.

The requests go through :class:`~exomonad.client.ServerClient` (the pid file, the lead's
token, its errors); the stream, which that client does not do, through ``httpx2`` on the
same socket, its frames parsed by :func:`~exomonad.server.events.parse_sse`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2

from exomonad.client import ServerClient
from exomonad.errors import ExomonadError
from exomonad.server.events import BaseEvent, Gap, parse_event, parse_sse
from exomonad.server.identity import TOKEN_HEADER, TokenStore
from exomonad.tui.model import Down, Snapshot

__all__ = ["BACKLOG", "Feed"]

#: Events before the snapshot read on a first connection (the timeline's history).
BACKLOG = 200

Item = Snapshot | Down | BaseEvent | Gap


class Feed:
    """The server's status and events for the project whose state dir is ``state``.

    Parameters
    ----------
    state:
        The project's ``.exomonad/``.
    retry:
        Seconds between attempts while the server cannot be reached.
    idle:
        Seconds a stream may be silent before it counts as lost (the server sends a
        keep-alive comment far more often).
    """

    def __init__(self, state: Path, *, retry: float = 1.0, idle: float = 60.0,
                 backlog: int = BACKLOG) -> None:  # fmt: skip
        self.state = state
        self.retry = retry
        self.idle = idle
        self.backlog = backlog
        self._runs: dict[tuple[int, float], int] = {}
        #: The server run (numbered from 1) and the last sequence id read from it.
        self.run = 0
        self.last_seq = 0

    def _client(self) -> ServerClient:
        """A client as the lead (the only role that may read status and events)."""
        path = TokenStore(self.state).lead_path
        if not path.exists():
            raise ExomonadError(f"no lead token in {self.state}: is the server running? "
                                "(`exomonad up`)")  # fmt: skip
        return ServerClient(self.state, token=path.read_text().strip(), timeout=10)

    def _run(self, client: ServerClient) -> tuple[int, str]:
        """The number of the server run ``client`` reaches, and its socket."""
        info = client.info()
        return self._runs.setdefault((info.pid, info.started_at), len(self._runs) + 1), info.socket

    async def snapshot(self) -> Snapshot | None:
        """A fresh ``/status`` of the server being read (None: that one is gone; the
        stream notices too, and says why)."""
        try:
            client = self._client()
            run, _ = self._run(client)
            return await _status(client, run) if run == self.run else None
        except ExomonadError:
            return None

    async def items(self) -> AsyncIterator[Item]:
        """Everything the server says, forever (see the module doc)."""
        while True:
            try:
                async for item in self._session():
                    yield item
                reason = "the server ended the event stream"
            except ExomonadError as exc:
                reason = str(exc)
            except (httpx2.HTTPError, OSError) as exc:
                reason = f"lost the server: {exc or type(exc).__name__}"
            yield Down(reason)
            await asyncio.sleep(self.retry)

    async def _session(self) -> AsyncIterator[Item]:
        """One connection: a snapshot, then the stream until it ends."""
        client = self._client()
        run, socket = self._run(client)
        resume, self.run = run == self.run, run
        snap = await _status(client, run)
        yield snap
        headers = {TOKEN_HEADER: client.token or ""}
        if resume:
            headers["Last-Event-ID"] = str(self.last_seq)
        else:
            self.last_seq = max(0, int(snap.doc.get("seq", 0)) - self.backlog)
        timeout = httpx2.Timeout(10.0, read=self.idle)
        async with (
            httpx2.AsyncClient(
                transport=httpx2.AsyncHTTPTransport(uds=socket), timeout=timeout
            ) as http,  # fmt: skip
            http.stream(
                "GET", "http://exomonad/events", params={"since": self.last_seq}, headers=headers
            ) as response,  # fmt: skip
        ):
            if response.status_code != 200:
                body = (await response.aread()).decode(errors="replace")
                raise ExomonadError(f"/events: {response.status_code} {body[:300]}")
            async for item in _frames(response.aiter_lines()):
                if isinstance(item, BaseEvent):
                    self.last_seq = item.seq
                yield item


async def _status(client: ServerClient, run: int) -> Snapshot:
    doc: dict[str, Any] = await asyncio.to_thread(client.call, "GET", "/status")
    return Snapshot(doc, run)


async def _frames(lines: AsyncIterator[str]) -> AsyncIterator[BaseEvent | Gap]:
    """The events and gaps of a server-sent event stream (``hello`` is skipped)."""
    block: list[str] = []
    async for line in lines:
        if line:
            block.append(line)
            continue
        for msg in parse_sse(iter([*block, ""])):
            if msg.event != "hello":
                yield parse_event(msg.data)
        block = []
