"""The status view's connection: ``/status``, then ``/events`` from there; again after
every failure.

:meth:`Feed.items` is an endless async iterator of what the server says, in the order
:class:`~exomonad.tui.model.StatusModel` takes it: a :class:`~exomonad.tui.model.Snapshot`
on every (re)connection, then the events and gaps of ``GET /events``; a
:class:`~exomonad.tui.model.Down` when the server is gone, unreachable or refuses, after
which it tries again every ``retry`` seconds. Reconnecting to the same server process
resumes after the last event read (``since``: nothing missed, nothing twice); a new
server process (sequence ids start again) is read from ``backlog`` events before its
snapshot.

Both go through :class:`~exomonad.client.ServerClient` as the lead
(:meth:`~exomonad.client.ServerClient.as_lead`); its blocking event stream
(:meth:`~exomonad.client.ServerClient.events`) is read in a daemon thread that hands
each event to the event loop, so quitting never waits for a read.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from exomonad.client import ServerClient
from exomonad.errors import ExomonadError
from exomonad.server.events import BaseEvent, Gap, parse_event
from exomonad.tui.model import Down, Snapshot

__all__ = ["BACKLOG", "Feed"]

#: Events before the snapshot read on a first connection (the timeline's history).
BACKLOG = 200

Item = Snapshot | Down | BaseEvent | Gap


class _Lost(ExomonadError):
    """The event stream ended or broke (its reason in the message)."""


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
    backlog:
        Events before the snapshot shown as history when a server is first read.
    """

    def __init__(self, state: Path, *, retry: float = 1.0, idle: float = 60.0,
                 backlog: int = BACKLOG) -> None:  # fmt: skip
        self.state = state
        self.retry = retry
        self.idle = idle
        self.backlog = backlog
        self._runs: dict[tuple[int, float], int] = {}
        #: The server run (numbered from 1) being read, and the last sequence id read.
        self.run = 0
        self.last_seq = 0

    def _connect(self) -> tuple[ServerClient, int]:
        """A client as the lead, and the number of the server run it reaches."""
        client = ServerClient.as_lead(self.state, timeout=self.idle)
        info = client.info()
        return client, self._runs.setdefault((info.pid, info.started_at), len(self._runs) + 1)

    async def snapshot(self) -> Snapshot | None:
        """A fresh ``/status`` of the server being read (None: that one is gone; the
        stream notices too, and says why)."""
        try:
            client, run = self._connect()
            return await _status(client, run) if run == self.run else None
        except ExomonadError:
            return None

    async def items(self) -> AsyncGenerator[Item, None]:
        """Everything the server says, forever (see the module doc)."""
        while True:
            try:
                async for item in self._session():
                    yield item
            except ExomonadError as exc:
                yield Down(str(exc))
            await asyncio.sleep(self.retry)

    async def _session(self) -> AsyncIterator[Item]:
        """One connection: a snapshot, then the stream until it ends (:class:`_Lost`)."""
        client, run = self._connect()
        resume, self.run = run == self.run, run
        snap = await _status(client, run)
        yield snap
        if not resume:
            self.last_seq = max(0, int(snap.doc.get("seq", 0)) - self.backlog)
        async for item in _stream(client, self.last_seq):
            if isinstance(item, BaseEvent):
                self.last_seq = item.seq
            yield item


async def _status(client: ServerClient, run: int) -> Snapshot:
    doc: dict[str, Any] = await asyncio.to_thread(client.call, "GET", "/status")
    return Snapshot(doc, run)


async def _stream(client: ServerClient, since: int) -> AsyncIterator[BaseEvent | Gap]:
    """The events and gaps after ``since`` (``hello`` skipped), read in a daemon thread;
    :class:`_Lost` when the stream ends."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[BaseEvent | Gap | _Lost] = asyncio.Queue()
    stop = threading.Event()

    def put(item: BaseEvent | Gap | _Lost) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the loop is closed: nobody reads any more
            stop.set()

    def read() -> None:
        try:
            with client.events(since=since) as stream:
                for msg in stream:
                    if stop.is_set():
                        return
                    if msg.event != "hello":
                        put(parse_event(msg.data))
            put(_Lost("the server ended the event stream"))
        except (ExomonadError, ValidationError) as exc:
            put(_Lost(str(exc)))
        except Exception as exc:  # anything else, too, is said: never a silent stall
            put(_Lost(f"reading the events failed: {type(exc).__name__}: {exc}"))

    threading.Thread(target=read, name="exomonad-events", daemon=True).start()
    try:
        while True:
            item = await queue.get()
            if isinstance(item, _Lost):
                raise item
            yield item
    finally:
        stop.set()
