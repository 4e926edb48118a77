"""Group commit for inbox appends: the appends that queue meanwhile share one write.

Callers of one process that append to the same inbox line up in its
:class:`InboxQueue`: threads wait in :meth:`~InboxQueue.submit`, an event loop awaits
the future :meth:`~InboxQueue.submit_later` gives. One *leader* writes its own entry
and every entry queued behind it in one locked rewrite, taking newcomers until the write
is prepared (ahead of the lock, :func:`~exomonad.teams.inbox_io.mutate`), or until the
lock is held when it had to be written under it (one lock, one read, one rewrite, one
fsync and one verification for the whole group), then answers each of them. Arrivals
during the write wait for the next group, led by a waiting thread, or by a thread of
this module's pool when only futures wait.
Each caller is answered only after its entry is verified on disk, or with the group's
error: nobody hears "sent" for an entry that is not there.

Claude Code's writers share the lock and give up after ~655 ms of back-off, so the
lock is held no longer than one append holds it, and back-to-back groups leave it free
between them: after a group of several, or with callers already waiting as a group
finishes, the next group waits three times as long as the last one held the lock
(:data:`PAUSE_FACTOR`, :attr:`InboxQueue.free_at`), so under a full team the lock is
ours at most a quarter of the time. A lone caller never waits.
"""

from __future__ import annotations

import copy
import itertools
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from exomonad.errors import DeliveryError

__all__ = [
    "MAX_GROUP",
    "PAUSE_FACTOR",
    "InboxQueue",
    "Pending",
    "commit_stats",
    "free_after",
    "queue_for",
    "record_group",
]

#: Most entries one write carries (the rest wait for the next group).
MAX_GROUP = 64
#: How long the lock stays free between two back-to-back groups, in times the last
#: group held it. At 1 (half the time ours) Claude Code's writers waited p99 150-260 ms
#: beside 16 sessions once the server got faster; at 2, p99 64-78 ms. Once callers on
#: the event loop made groups bigger and faster (a bigger inbox between Claude Code's
#: polls, so every writer holds the lock longer), 2 let their p99 reach 160-220 ms and
#: 3 kept it at 38-83 with more appends/s than 2 (docs/performance.md, issue 14).
PAUSE_FACTOR = 3.0
#: The longest pause between two back-to-back groups, in seconds.
MAX_PAUSE = 0.1


@dataclass(eq=False)
class Pending:
    """One caller's append, waiting in a queue."""

    message_id: str
    entry: dict[str, Any]
    done: bool = False
    error: BaseException | None = None
    seq: int = 0  # arrival order in its queue
    #: Set for a caller that does not wait in a thread (:meth:`InboxQueue.submit_later`):
    #: completed when its group is done.
    future: Future[None] | None = None


#: ``take()`` → the group so far, in arrival order (the leader's own entry always in it);
#: call it again, under the file lock, to add the arrivals since.
Take = Callable[[], list[Pending]]
#: ``write(take)``: write the group ``take`` hands out; returns seconds the lock was held.
Write = Callable[[Take], float]


class _Stats:
    """Group writes of this process (``/health`` shows them as ``inbox_commits``)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.groups = self.entries = self.largest = 0
        self.hold_total = self.hold_max = 0.0

    def record(self, size: int, held: float) -> None:
        with self.lock:
            self.groups += 1
            self.entries += size
            self.largest = max(self.largest, size)
            self.hold_total += held
            self.hold_max = max(self.hold_max, held)

    def snapshot(self) -> dict[str, float | int]:
        with self.lock:
            mean = self.hold_total / self.groups if self.groups else 0.0
            return {
                "groups": self.groups,
                "entries": self.entries,
                "largest": self.largest,
                "hold_max_ms": self.hold_max * 1000,
                "hold_mean_ms": mean * 1000,
                "hold_total_ms": self.hold_total * 1000,
            }


_STATS = _Stats()


def commit_stats() -> dict[str, float | int]:
    """Group writes so far in this process: how many, how many entries they carried, the
    largest, and how long they held the file lock (max, mean and total, ms)."""
    return _STATS.snapshot()


def free_after(held: float, size: int, waiting: bool) -> float:
    """When (monotonic time) the next group may take the lock, after a group of ``size``
    appends held it for ``held`` seconds: :data:`PAUSE_FACTOR` times that later when the
    group had several appends or others ``waiting``; at once (0.0) after a lone append."""
    if size <= 1 and not waiting:  # a lone caller never waits
        return 0.0
    return time.monotonic() + min(held * PAUSE_FACTOR, MAX_PAUSE)


def record_group(size: int, held: float) -> None:
    """Count a group write of ``size`` appends that held the lock ``held`` seconds (a
    group written elsewhere on this process's behalf counts too: :func:`commit_stats`)."""
    _STATS.record(size, held)


class InboxQueue:
    """The appends waiting for one inbox in this process, and who writes them."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._waiting: list[Pending] = []  # arrival order
        self._arrivals = itertools.count()
        self._leading = False
        #: monotonic time before which the next back-to-back group does not start.
        self.free_at = 0.0

    @property
    def queued(self) -> int:
        """How many appends wait here (the group being written included)."""
        with self._cond:
            return len(self._waiting)

    def submit(self, pending: Pending, write: Write) -> None:
        """Return once ``pending`` is written and verified; raise the group's error."""
        with self._cond:
            self._enqueue(pending)
            while self._leading and not pending.done:
                self._cond.wait()
            if not pending.done:
                self._leading = True
        if not pending.done:
            self._lead(pending, write)
        if pending.error is not None:
            raise pending.error

    def submit_later(self, pending: Pending, write: Write) -> Future[None]:
        """Queue ``pending`` and return at once: the future completes once it is written
        and verified, or with the group's error. With no caller waiting in a thread to
        lead its group, a thread of this module's pool writes it (an event loop awaits
        appends this way instead of parking a thread per caller)."""
        # Kept here: once queued, another group may take, answer and drop it (no cycle)
        # before this returns, leaving ``pending.future`` None.
        future: Future[None] = Future()
        future.set_running_or_notify_cancel()  # its waiter may give up, not the write
        pending.future = future
        with self._cond:
            self._enqueue(pending)
            start = not self._leading
            self._leading = True
        if start:
            _leaders().submit(self._lead, pending, write)
        return future

    def _enqueue(self, pending: Pending) -> None:
        pending.seq = next(self._arrivals)
        self._waiting.append(pending)

    def _lead(self, own: Pending, write: Write) -> None:
        group = [own]

        def take() -> list[Pending]:
            with self._cond:
                for p in self._waiting:
                    if len(group) >= MAX_GROUP:
                        break
                    if p not in group:
                        group.append(p)
            group.sort(key=lambda p: p.seq)
            return group

        error: BaseException | None = None
        held = 0.0
        try:
            pause = self.free_at - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            held = write(take)
        except BaseException as exc:  # every caller of the group hears it
            error = exc
        successor: Pending | None = None
        with self._cond:
            self._waiting = [p for p in self._waiting if p not in group]
            for p in group:
                p.error = error if p is own or error is None else _for_follower(error)
                p.done = True
            self.free_at = free_after(held, len(group), bool(self._waiting))
            if self._waiting and all(p.future is not None for p in self._waiting):
                successor = self._waiting[0]  # no thread waits to lead: the pool does
            else:
                self._leading = False
            self._cond.notify_all()
        if error is None:
            record_group(len(group), held)
        for p in group:
            future, p.future = p.future, None  # no cycle through its callbacks
            if future is not None:
                if p.error is None:
                    future.set_result(None)
                else:
                    future.set_exception(p.error)
        if successor is not None:
            # Any caller's write will do: a group is written with the leader's settings.
            _leaders().submit(self._lead, successor, write)


_pool: ThreadPoolExecutor | None = None
_pool_guard = threading.Lock()


def _leaders() -> ThreadPoolExecutor:
    """The threads that lead groups no waiting caller leads (started on first use)."""
    global _pool
    with _pool_guard:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=16, thread_name_prefix="inbox-group")
        return _pool


def _for_follower(error: BaseException) -> BaseException:
    """The group's error for another caller of it: a copy with a traceback of its own,
    caused by the leader's."""
    try:
        mine = copy.copy(error) if isinstance(error, Exception) else None
    except Exception:  # an exception type that cannot be rebuilt from its arguments
        mine = None
    if mine is None:
        mine = DeliveryError(f"the write of this message's group failed: {error!r}")
    mine.__cause__ = error
    return mine


_queues: dict[tuple[Path, bool], InboxQueue] = {}
_queues_guard = threading.Lock()


def queue_for(path: Path, durable: bool) -> InboxQueue:
    """The queue of appends to inbox ``path`` in this process (durable and non-durable
    appends queue apart: a group is written one way)."""
    with _queues_guard:
        queue = _queues.get((path, durable))
        if queue is None:
            queue = _queues[(path, durable)] = InboxQueue()
        return queue
