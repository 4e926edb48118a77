"""Who is active, idle or gone, read off the team's inbox files.

A member's state comes from the latest entry it sent to anyone:

* ``shutdown_approved`` → TERMINATED (the only way to be terminated);
* ``idle_notification`` → IDLE;
* anything else → ACTIVE, decaying to IDLE after ``idle_after`` seconds without events.

A member that sent nothing counts from its ``joinedAt``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from exomonad.errors import CorruptFileError
from exomonad.teams.atomic import read_json_array
from exomonad.teams.config import load_config
from exomonad.teams.dirs import SafeDir
from exomonad.teams.filecache import FileCache
from exomonad.teams.models import TeamConfig
from exomonad.teams.paths import TeamPaths
from exomonad.teams.protocol import decode

__all__ = [
    "IDLE_AFTER",
    "IMPLIED",
    "InboxDigest",
    "MemberPresence",
    "Presence",
    "inbox_digest",
    "presence_from",
    "settled_until",
    "team_presence",
]

#: Seconds without events after which an active member counts as idle.
IDLE_AFTER = 300.0


class Presence(StrEnum):
    """A member's liveness."""

    ACTIVE = "active"
    IDLE = "idle"
    TERMINATED = "terminated"


#: A member's presence implied by the protocol message it wrote last (anything else it
#: writes: active; an old one: idle).
IMPLIED: dict[str, Presence] = {
    "idle_notification": Presence.IDLE,
    "shutdown_approved": Presence.TERMINATED,
}


class MemberPresence(NamedTuple):
    """A member's presence and the time of the event it was derived from. (A named
    tuple: a team's status builds one per member per call.)"""

    name: str
    state: Presence
    last_event: datetime | None


def _parse_ts(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        ts = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return ts if ts.tzinfo else ts.replace(tzinfo=UTC)


@dataclass
class InboxDigest:
    """What one pass over a team's inboxes tells: each sender's newest entry (time and
    type) and each inbox's unread entries."""

    latest: dict[str, tuple[datetime, str]]
    unread: dict[str, int]


#: Sender → (time, type) of its newest entry in one inbox file.
Events = dict[str, tuple[datetime, str]]
#: Per inbox file, kept per version of it: what it says of each sender, and its unread.
_inbox_cache: FileCache[tuple[Events, int]] = FileCache()
#: Per inboxes directory: the per-file results of its last digest, and that digest.
_digests: dict[Path, tuple[list[tuple[str, tuple[Events, int]]], InboxDigest]] = {}


def inbox_digest(paths: TeamPaths) -> InboxDigest:
    """Read every inbox of the team once (corrupt ones are skipped; a file unchanged
    since the last pass is not read again). While no inbox changed, every caller gets
    the same digest: treat it as read-only."""
    try:
        d = paths.open_dir(paths.inboxes_dir)
    except (FileNotFoundError, NotADirectoryError):
        return InboxDigest({}, {})
    parts: list[tuple[str, tuple[Events, int]]] = []
    with d:
        for name in d.listdir():
            if not name.endswith(".json") or name.startswith("."):
                continue
            found = _inbox_of(d, paths.inboxes_dir / name)
            if found is not None:
                parts.append((name, found))
    last = _digests.get(paths.inboxes_dir)
    if last is not None and _same_parts(last[0], parts):
        return last[1]
    digest = InboxDigest({}, {})
    latest = digest.latest
    for name, (events, unread) in parts:
        digest.unread[name[: -len(".json")]] = unread
        for sender, (when, kind) in events.items():
            if sender not in latest or when >= latest[sender][0]:
                latest[sender] = (when, kind)
    _digests[paths.inboxes_dir] = (parts, digest)
    return digest


def _same_parts(
    old: list[tuple[str, tuple[Events, int]]], new: list[tuple[str, tuple[Events, int]]]
) -> bool:
    # The same files, each read off the same version (what the file cache keeps is one
    # object per version; the old parts are held, so their objects are never reused).
    return len(old) == len(new) and all(
        a[0] == b[0] and a[1] is b[1] for a, b in zip(old, new, strict=True)
    )


def _inbox_of(d: SafeDir, path: Path) -> tuple[Events, int] | None:
    """What one inbox says about each sender, and its unread count (None if it is
    unreadable or corrupt)."""
    try:
        st = d.lstat(path.name)
        cached = _inbox_cache.get(path, st)
        if cached is not None:
            return cached
        entries = read_json_array(path, at=d)
    except (CorruptFileError, OSError):
        return None
    latest: Events = {}
    for e in entries:
        sender, when = e.get("from"), _parse_ts(e.get("timestamp"))
        if not isinstance(sender, str) or when is None:
            continue
        text = e.get("text")
        msg = decode(text) if isinstance(text, str) else None
        kind: str = msg.type if msg is not None else "message"
        if sender not in latest or when >= latest[sender][0]:
            latest[sender] = (when, kind)
    found = (latest, sum(1 for e in entries if not e.get("read")))
    _inbox_cache.put(path, st, found)
    return found


def team_presence(
    paths: TeamPaths,
    *,
    now: datetime | None = None,
    idle_after: float = IDLE_AFTER,
    config: TeamConfig | None = None,
) -> dict[str, MemberPresence]:
    """Presence of every member of the team (corrupt inboxes are skipped, not fatal; a
    symlinked team or ``inboxes/`` directory raises
    :class:`~exomonad.errors.SymlinkedDirectoryError`). ``config``: the team's config,
    if the caller has read it already."""
    return presence_from(config or load_config(paths), inbox_digest(paths), now=now,
                         idle_after=idle_after)  # fmt: skip


@lru_cache(maxsize=1024)
def _joined(ms: int) -> datetime:
    # A member's join time (epoch ms) as a datetime, once: a status reads it per call.
    return datetime.fromtimestamp(ms / 1000, UTC)


def presence_from(
    config: TeamConfig, digest: InboxDigest, *, now: datetime | None = None,
    idle_after: float = IDLE_AFTER,
) -> dict[str, MemberPresence]:  # fmt: skip
    """Presence of every member of ``config`` from an :func:`inbox_digest`."""
    now = now or datetime.now(UTC)
    out: dict[str, MemberPresence] = {}
    for m in config.members:
        event = digest.latest.get(m.name)
        ts: datetime | None
        if event is not None:
            ts, kind = event
        else:
            ts = _joined(m.joined_at) if m.joined_at is not None else None
            kind = "joined"
        if kind in IMPLIED:
            state = IMPLIED[kind]
        elif ts is not None and (now - ts).total_seconds() <= idle_after:
            state = Presence.ACTIVE
        else:
            state = Presence.IDLE
        out[m.name] = MemberPresence(m.name, state, ts)
    return out


def settled_until(presence: dict[str, MemberPresence], idle_after: float = IDLE_AFTER) -> float:
    """Unix time until which :func:`presence_from` (same config and digest, a later
    ``now``) says the same of every member: the first moment an active member's last
    event is ``idle_after`` old (infinity if none is active)."""
    return min(
        (p.last_event.timestamp() + idle_after for p in presence.values()
         if p.state is Presence.ACTIVE and p.last_event is not None),
        default=float("inf"),
    )  # fmt: skip
