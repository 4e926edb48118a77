"""Presence as the server sees it happen: active, idle, terminated, and since when.

The inbox files tell presence only from what each member last wrote
(:mod:`exomonad.teams.presence`), and a 2.1.330 lead prunes what it read. The server
sees more, as it happens: an agent's hooks (a tool call or a prompt: active; the end of
a turn: idle), every message it writes for an agent (an ``idle_notification``: idle; a
``shutdown_approved``: terminated; anything else: active), a worker's token issued
(active) and released (terminated). :meth:`PresenceBook.note` records each and
publishes a ``presence`` event when the state changes.

Reading (:meth:`PresenceBook.state`) applies the inbox rule's decay: an active member
with nothing noted for ``idle_after`` seconds reads as idle (no event is sent for
that). A member the server has noted nothing about falls back to the inboxes
(:func:`merge`).
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from functools import lru_cache
from typing import NamedTuple

from exomonad.server.bus import EventBus
from exomonad.server.events import PresenceChanged, PresenceState
from exomonad.teams.presence import IDLE_AFTER

__all__ = ["PresenceBook", "Seen", "iso", "merge"]


class Seen(NamedTuple):
    """A member's presence, where it came from, and its last event (Unix seconds).
    (A named tuple: a team's status builds one per member per call.)"""

    state: PresenceState
    last_event: float | None
    source: str


class PresenceBook:
    """Each (team, member)'s last noted state and time (thread-safe)."""

    def __init__(self, bus: EventBus, *, idle_after: float = IDLE_AFTER) -> None:
        self.bus = bus
        self.idle_after = idle_after
        self._lock = threading.Lock()
        self._book: dict[tuple[str, str], tuple[PresenceState, float]] = {}

    def note(self, team: str | None, member: str, state: PresenceState, source: str) -> None:
        """``member`` of ``team`` is in ``state`` now; a change is published."""
        team = team or (self.bus.default_team() if self.bus.default_team else None)
        if team is None:
            return
        now = time.time()
        with self._lock:
            before = self._book.get((team, member))
            self._book[(team, member)] = (state, now)
        previous = before[0] if before is not None else None
        if previous != state:
            self.bus.publish(PresenceChanged(team=team, member=member, state=state,
                                             previous=previous, source=source))  # fmt: skip

    def states(self, team: str, now: float | None = None) -> dict[str, Seen]:
        """What was noted for each member of ``team`` (active decays to idle; one lock
        for all)."""
        with self._lock:
            found = [(m, v) for (t, m), v in self._book.items() if t == team]
        now = time.time() if now is None else now
        return {m: Seen("idle" if state == "active" and now - at > self.idle_after else state,
                        at, "server") for m, (state, at) in found}  # fmt: skip


def merge(seen: Seen | None, state: PresenceState, inbox_at: float | None) -> Seen:
    """The server's view when it has one (its last event the newer of its own and
    ``inbox_at``), else what the inboxes say (``state``, as of ``inbox_at``)."""
    if seen is not None:
        last = max(t for t in (seen.last_event, inbox_at) if t is not None)
        return Seen(seen.state, last, seen.source)
    return Seen(state, inbox_at, "inbox")


def iso(ts: float | None) -> str | None:
    """Unix seconds as ISO 8601 UTC (None stays None)."""
    return None if ts is None else _iso(ts)


@lru_cache(maxsize=1024)
def _iso(ts: float) -> str:
    # A member's last event changes far less often than its status is read.
    return datetime.fromtimestamp(ts, UTC).isoformat()
