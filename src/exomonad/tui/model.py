"""The status view's state: a ``/status`` snapshot kept current by ``/events``.

Pure: no Textual, no I/O. The feed (:mod:`exomonad.tui.feed`) hands it what the server
said, in order: :class:`Snapshot` (a ``/status`` document, tagged with the server run
it came from), events and gaps (the bus's own classes,
:mod:`exomonad.server.events`), and :class:`Down` when the server cannot be reached.

An event updates the members (presence, last event) only when it is newer than the
snapshot (``seq`` above the snapshot's ``seq``): an older one is already in it, and is
history for the timeline only. What the events do not carry (unread and pending counts,
a new team or member) comes from the next snapshot; :meth:`StatusModel.wants_snapshot`
says when one is due: after such an event, and every ``refresh`` seconds regardless
(files other programs write, such as a Claude teammate's message to the lead, make no
event).

>>> from exomonad.server.events import PresenceChanged
>>> m = StatusModel()
>>> m.feed(Snapshot({"seq": 0, "current_team": "t", "teams": [{"name": "t", "members": [
...     {"name": "w1", "kind": "synthetic", "presence": "active"}]}]}, run=1))
>>> m.feed(PresenceChanged(seq=1, ts=5.0, team="t", member="w1", state="idle", source="hook"))
>>> m.shown().members["w1"].presence, m.shown().members["w1"].last_event
('idle', 5.0)
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from exomonad.policy.approvals import Approval
from exomonad.server.events import (
    BaseEvent,
    Delivery,
    DeliveryFailed,
    EscalationAnswered,
    EscalationOpened,
    Gap,
    MessageIn,
    MessageOut,
    PolicyDecision,
    PresenceChanged,
)

__all__ = [
    "HISTORY",
    "REFRESH",
    "Down",
    "Entry",
    "Member",
    "Pending",
    "Snapshot",
    "StatusModel",
    "Team",
]

#: Timeline entries kept (all teams together).
HISTORY = 1000
#: Seconds between snapshots when no event asks for one sooner.
REFRESH = 5.0


@dataclass(frozen=True)
class Snapshot:
    """A ``/status`` document from server run ``run`` (a number the feed gives each
    server process it connected to: sequence ids restart with every run)."""

    doc: dict[str, Any]
    run: int


@dataclass(frozen=True)
class Down:
    """The server could not be reached (``reason``: what to tell the user)."""

    reason: str


@dataclass
class Member:
    """One row of a team's members table."""

    name: str
    kind: str = "claude"
    runtime: str | None = None
    presence: str | None = None
    pane: str | None = None
    branch: str | None = None
    unread: int = 0
    pending: int = 0
    #: Unix seconds of the member's last event (None: none seen).
    last_event: float | None = None
    #: Its newest pull request, in one line (None: none watched).
    pull_request: str | None = None

    @classmethod
    def from_row(cls, row: dict[str, Any], now: float) -> Member:
        """A member from a ``/status`` row (``lastEventAge`` seconds before ``now``)."""
        age = row.get("lastEventAge")
        return cls(name=str(row["name"]), kind=str(row.get("kind") or "claude"),
                   runtime=row.get("runtime"), presence=row.get("presence"),
                   pane=row.get("pane"), branch=row.get("branch"),
                   unread=int(row.get("unread") or 0), pending=int(row.get("pending") or 0),
                   last_event=None if age is None else now - float(age),
                   pull_request=(row.get("pullRequest") or {}).get("summary"))  # fmt: skip


@dataclass
class Team:
    """One team of the snapshot (``error``: the server could not read it)."""

    name: str
    lead: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
    error: str | None = None


@dataclass(frozen=True)
class Pending:
    """A pending approval: ``agent``'s ``what`` waits for ``addressee``."""

    id: str
    agent: str
    what: str
    addressee: str
    reason: str
    deadline: float | None = None

    @classmethod
    def from_approval(cls, a: Approval) -> Pending:
        """From the approval store's record (what ``/status`` lists)."""
        return cls(a.id, a.agent, _describe(a.action), a.addressee or "human", a.reason,
                   a.deadline)  # fmt: skip


def _describe(action: Any) -> str:
    """The action types of an approval's ``action`` (``GitPush``, ``Shell + Write``)."""
    items = action if isinstance(action, list) else [action]
    kinds = [str(a.get("type", "?")) if isinstance(a, dict) else str(a) for a in items]
    return " + ".join(kinds)


@dataclass(frozen=True)
class Entry:
    """A timeline entry: an event or gap, from server run ``run``."""

    run: int
    item: BaseEvent | Gap


class StatusModel:
    """What the status view shows (see the module doc).

    Parameters
    ----------
    team:
        The team to show first (None: the server's current team).
    refresh:
        Seconds after which a snapshot is due even without an event asking for one.
    clock:
        Unix seconds now (for the members' last-event ages).
    """

    def __init__(self, team: str | None = None, *, refresh: float = REFRESH,
                 clock: Callable[[], float] = time.time) -> None:  # fmt: skip
        self.team = team
        self.refresh = refresh
        #: When the last snapshot was taken in (``clock`` time).
        self.loaded_at = 0.0
        self.teams: dict[str, Team] = {}
        self.approvals: dict[str, Pending] = {}
        self.policy: dict[str, Any] = {}
        self.server: dict[str, Any] = {}
        self.timeline: deque[Entry] = deque(maxlen=HISTORY)
        #: The server run and sequence id of the snapshot, and of the newest event.
        self.run = 0
        self.snapshot_seq = 0
        self.seq = 0
        #: Whether the server answers; why not (None while connected).
        self.connected = False
        self.problem: str | None = "connecting"
        #: Events since the last snapshot that changed what a snapshot counts.
        self.stale = 0
        self._clock = clock

    # -- what the feed says --------------------------------------------------------
    def feed(self, item: Snapshot | Down | BaseEvent | Gap) -> None:
        """Take one thing the feed said (see the module doc)."""
        if isinstance(item, Snapshot):
            self._load(item)
        elif isinstance(item, Down):
            self.connected, self.problem = False, item.reason
        elif isinstance(item, Gap):
            self.timeline.append(Entry(self.run, item))
            self.stale += 1  # what it missed is in the next snapshot
        else:
            self._event(item)

    def _load(self, snap: Snapshot) -> None:
        doc, now = snap.doc, self._clock()
        self.loaded_at = now
        self.connected, self.problem = True, None
        if snap.run != self.run:  # a new server: sequence ids start again
            self.run, self.seq = snap.run, 0
        self.snapshot_seq = int(doc.get("seq", 0))
        self.teams = {}
        for t in doc.get("teams", []):
            members = {str(r["name"]): Member.from_row(r, now) for r in t.get("members", [])}
            self.teams[t["name"]] = Team(t["name"], t.get("lead"), members, t.get("error"))
        if self.team not in self.teams:
            current = doc.get("current_team")
            self.team = current if current in self.teams else next(iter(self.teams), None)
        self.approvals = {a["id"]: Pending.from_approval(Approval(**a))
                          for a in doc.get("approvals", [])}  # fmt: skip
        self.policy = dict(doc.get("policy") or {})
        self.server = dict(doc.get("server") or {})
        self.stale = 0
        for entry in self.timeline:  # newer than the snapshot: not in it yet
            item = entry.item
            if (
                entry.run == self.run
                and isinstance(item, BaseEvent)
                and item.seq > self.snapshot_seq
            ):
                self._update(item)

    def _event(self, event: BaseEvent) -> None:
        if event.seq <= self.seq:
            return  # replayed twice across a reconnect
        self.seq = event.seq
        self.timeline.append(Entry(self.run, event))
        if event.seq > self.snapshot_seq and self._update(event):
            self.stale += 1

    def _update(self, event: BaseEvent) -> bool:
        """Apply what ``event`` says about members and approvals; whether it changed
        what only a snapshot tells (unread and pending counts, a new team or member)."""
        team = self.teams.get(event.team or "")
        if isinstance(event, PresenceChanged) and team is not None:
            known = event.member in team.members
            member = team.members.setdefault(event.member, Member(event.member))
            member.presence, member.last_event = event.state, event.ts
            return not known
        if isinstance(event, MessageOut | PolicyDecision) and team is not None:
            who = event.sender if isinstance(event, MessageOut) else event.agent
            if who in team.members:
                team.members[who].last_event = event.ts
        elif isinstance(event, EscalationOpened):
            self.approvals[event.approval_id] = Pending(event.approval_id, event.agent,
                                                        event.tool, event.addressee,
                                                        event.reason, event.deadline)  # fmt: skip
        elif isinstance(event, EscalationAnswered):
            self.approvals.pop(event.approval_id, None)
        counted = MessageIn | MessageOut | Delivery | DeliveryFailed
        return team is None or isinstance(event, counted)

    # -- what the view asks --------------------------------------------------------
    def wants_snapshot(self) -> bool:
        """Whether a snapshot is due (see the module doc)."""
        due = self.stale > 0 or self._clock() - self.loaded_at >= self.refresh
        return self.connected and due

    def shown(self) -> Team | None:
        """The team on screen."""
        return self.teams.get(self.team or "")

    def next_team(self) -> str | None:
        """Show the next team (in name order, wrapping); its name."""
        names = sorted(self.teams)
        if names:
            at = names.index(self.team) + 1 if self.team in names else 0
            self.team = names[at % len(names)]
        return self.team

    def entries(self) -> list[BaseEvent | Gap]:
        """The timeline of the team on screen, oldest first (events without a team and
        gaps are everyone's)."""
        return [e.item for e in self.timeline if self.belongs(e.item)]

    def belongs(self, item: BaseEvent | Gap) -> bool:
        """Whether ``item`` shows in the timeline of the team on screen."""
        return isinstance(item, Gap) or item.team in (None, self.team)
