"""The event bus: publish from any thread, never wait for a reader; read as async iterators.

:meth:`EventBus.publish` stamps an event with the next sequence id and the time, keeps
it in a ring of the last :data:`RING` events, and offers it to every subscriber whose
team filter matches. It takes one short lock and never waits for a subscriber: each
subscriber has its own bounded queue (:data:`QUEUE` events); when it is full the oldest
queued event is dropped and counted, and the subscriber's next read is a
:class:`~exomonad.server.events.Gap` saying how many it missed. So a slow reader (an SSE
client that stopped reading) costs the publishers nothing: not the watcher, not a hook.

A subscriber may start from a sequence id (``since``): the kept events after it are
replayed first, then live ones, with nothing lost or repeated in between (both are
taken under the same lock). Replaying from before the oldest kept event starts with a
gap (counting every event not kept, whatever its team). A ``since`` above the last
sequence id (a client of an earlier server run: ids restart at 1) replays everything
kept.

>>> import asyncio
>>> from exomonad.server.events import PresenceChanged
>>> bus = EventBus()
>>> bus.publish(PresenceChanged(team="t", member="w1", state="idle", source="hook")).seq
1
>>> async def first() -> int:
...     async with bus.subscribe(since=0) as sub:
...         return (await anext(sub)).seq
>>> asyncio.run(first())
1

Environment: ``EXOMONAD_EVENTS_RING`` (events kept for replay, default 4096) and
``EXOMONAD_EVENTS_QUEUE`` (each subscriber's queue, default 1024).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar

from exomonad.server.events import BaseEvent, Gap
from exomonad.server.service import Passive

__all__ = ["QUEUE", "RING", "EventBus", "Subscription"]

E = TypeVar("E", bound=BaseEvent)

#: Events kept for replay.
RING = int(os.environ.get("EXOMONAD_EVENTS_RING", "4096"))
#: Events queued per subscriber before the oldest is dropped.
QUEUE = int(os.environ.get("EXOMONAD_EVENTS_QUEUE", "1024"))


class Subscription:
    """One reader of the bus: an async iterator of events and gaps (see the module doc).

    Made by :meth:`EventBus.subscribe` on the event loop that reads it; close it (or use
    ``async with``) when done.
    """

    def __init__(self, bus: EventBus, team: str | None, replay: list[BaseEvent], queue: int,
                 after: int, missed: int) -> None:  # fmt: skip
        self.team = team
        self._bus = bus
        self._replay = deque(replay)
        self._queue: deque[BaseEvent] = deque()
        self._size = queue
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._wake = asyncio.Event()
        self._waiting = False
        self._closed = False
        #: Last sequence id handed out (where a gap starts).
        self.last = after
        #: Events before the replay that are no longer kept (reported first).
        self._head = Gap(missed=missed, after=after) if missed else None
        self._missed = 0
        #: Events dropped because this subscriber fell behind (gaps included in reads).
        self.dropped = 0

    @property
    def queued(self) -> int:
        """Events waiting to be read."""
        return len(self._replay) + len(self._queue)

    def _offer(self, event: BaseEvent) -> None:
        """Queue ``event`` (called with the bus lock held, from any thread)."""
        if len(self._queue) >= self._size:
            self._queue.popleft()
            self._missed += 1
            self.dropped += 1
            self._bus.dropped += 1
        self._queue.append(event)
        if self._waiting:
            self._notify()

    def _notify(self) -> None:
        if threading.get_ident() == self._thread:
            self._wake.set()
            return
        with contextlib.suppress(RuntimeError):  # its loop is closed: nobody reads any more
            self._loop.call_soon_threadsafe(self._wake.set)

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> BaseEvent | Gap:
        while True:
            with self._bus.lock:
                item = self._take()
                if item is not None:
                    return item
                if self._closed:
                    raise StopAsyncIteration
                self._wake.clear()
                self._waiting = True
            try:
                await self._wake.wait()
            finally:
                self._waiting = False

    def _take(self) -> BaseEvent | Gap | None:
        if self._head is not None:
            gap, self._head = self._head, None
            self._bus.gaps += 1
            return gap
        if self._replay:
            event = self._replay.popleft()
        elif self._missed:
            gap = Gap(missed=self._missed, after=self.last)
            self._missed = 0
            self._bus.gaps += 1
            return gap
        elif self._queue:
            event = self._queue.popleft()
        else:
            return None
        self.last = event.seq
        return event

    def close(self) -> None:
        """Stop reading: the iterator ends once what is queued has been read."""
        with self._bus.lock:
            self._closed = True
            self._bus.forget(self)
            self._notify()

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:  # fmt: skip
        self.close()


class EventBus(Passive):
    """Sequence ids, the replay ring and the subscribers (thread-safe; a service whose
    stop ends every subscription).

    Parameters
    ----------
    ring, queue:
        Events kept for replay; events queued per subscriber.
    default_team:
        The team of an event published without one (the project's current team).
    """

    name = "events"

    def __init__(self, *, ring: int = RING, queue: int = QUEUE,
                 default_team: Callable[[], str | None] | None = None,
                 clock: Callable[[], float] = time.time) -> None:  # fmt: skip
        super().__init__()
        self.lock = threading.Lock()
        self.queue = queue
        self.default_team = default_team
        self._clock = clock
        self._ring: deque[BaseEvent] = deque(maxlen=ring)
        self._subs: list[Subscription] = []
        self._seq = 0
        self._closed = False
        #: Events dropped from subscribers' queues, and gaps reported, since start.
        self.dropped = 0
        self.gaps = 0

    @property
    def last_seq(self) -> int:
        """The sequence id of the newest event (0: none yet)."""
        return self._seq

    @property
    def oldest_seq(self) -> int:
        """The sequence id of the oldest event kept for replay (``last_seq + 1``: none)."""
        with self.lock:
            return self._ring[0].seq if self._ring else self._seq + 1

    def publish(self, event: E) -> E:
        """Stamp ``event`` (sequence id, time, default team), keep it, offer it to every
        matching subscriber; returns the stamped event. Never blocks on a reader."""
        team = event.team
        if team is None and self.default_team is not None:
            team = self.default_team()
        with self.lock:
            self._seq += 1
            stamped = event.model_copy(update={"seq": self._seq, "ts": self._clock(),
                                               "team": team})  # fmt: skip
            self._ring.append(stamped)
            for sub in self._subs:
                if sub.team is None or sub.team == team:
                    sub._offer(stamped)
        return stamped

    def recent(self, since: int = 0, team: str | None = None) -> list[BaseEvent]:
        """Kept events after ``since`` (of ``team``, if given), oldest first."""
        with self.lock:
            return self._after(since, team)

    def _after(self, since: int, team: str | None) -> list[BaseEvent]:
        return [e for e in self._ring if e.seq > since and (team is None or e.team == team)]

    def subscribe(self, *, since: int | None = None, team: str | None = None,
                  queue: int | None = None) -> Subscription:  # fmt: skip
        """A new subscription (on the running event loop): events after ``since``
        (None: only new ones), of ``team`` only if given."""
        with self.lock:
            if since is None or since > self._seq:
                since = self._seq if since is None else 0
            oldest = self._ring[0].seq if self._ring else self._seq + 1
            missed = max(0, oldest - since - 1)
            sub = Subscription(self, team, self._after(since, team), queue or self.queue,
                               after=since, missed=missed)  # fmt: skip
            if self._closed:
                sub._closed = True
            else:
                self._subs.append(sub)
        return sub

    def forget(self, sub: Subscription) -> None:
        """Drop ``sub`` from the subscribers (lock held by the caller)."""
        if sub in self._subs:
            self._subs.remove(sub)

    def on_stop(self) -> None:
        """End every subscription (after what is queued): SSE streams then close."""
        with self.lock:
            self._closed = True
            subs, self._subs = self._subs, []
            for sub in subs:
                sub._closed = True
                sub._notify()

    def health(self) -> dict[str, Any]:
        """Sequence ids, what is kept, subscribers and what they lost."""
        with self.lock:
            subs = [{"team": s.team, "queued": s.queued, "dropped": s.dropped}
                    for s in self._subs]  # fmt: skip
            kept = len(self._ring)
            oldest = self._ring[0].seq if self._ring else self._seq + 1
        return {"last_seq": self._seq, "oldest_seq": oldest, "kept": kept,
                "ring": self._ring.maxlen, "queue": self.queue, "subscribers": subs,
                "dropped": self.dropped, "gaps": self.gaps}  # fmt: skip
