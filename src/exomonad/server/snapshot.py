"""What the server can say about itself and its teams, as JSON: ``/health``, ``/status``,
and the member rows ``team_status`` and ``exomonad status`` show.

``/status`` is everything ``exomonad status`` (and a dashboard) needs in one call:
per team its members (kind, runtime, presence, pane, worktree and branch, unread and
pending messages, last event), tasks and the ``user`` inbox; pending approvals; the
policy's health; the server's ``/health``; and ``seq``, the last event sequence id
*before* the snapshot was taken: subscribing to ``/events?since=<seq>`` then misses
nothing that changed after it.
"""

from __future__ import annotations

import gc
import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from exomonad.errors import ExomonadError
from exomonad.panes import TmuxBackend
from exomonad.policy.approvals import Approval
from exomonad.server.events import PresenceState
from exomonad.server.identity import Identity
from exomonad.server.presence import iso, merge
from exomonad.server.services import Services
from exomonad.teams import TeamPaths, load_config
from exomonad.teams.groupcommit import commit_stats
from exomonad.teams.models import Member, TeamConfig
from exomonad.teams.presence import InboxDigest, inbox_digest, presence_from, settled_until
from exomonad.teams.tasks import TaskStore

__all__ = [
    "USER_INBOX_LIMIT",
    "Shared",
    "health",
    "member_pane",
    "member_rows",
    "status",
    "team_status_doc",
]

#: Newest entries of a team's ``user`` inbox given in ``/status``.
USER_INBOX_LIMIT = 100


def health(svc: Services, approvals: list[Approval] | None = None) -> dict[str, Any]:
    """The ``/health`` document (open to every caller: no messages in it).

    ``approvals``: the pending approvals if the caller has read them already.
    """
    stats = svc.watcher.stats
    if approvals is None:
        approvals = svc.approvals.list_pending()
    return {
        "status": "ok",
        "version": svc.version,
        "pid": os.getpid(),
        "uptime": round(time.time() - svc.started_at, 3),
        "policy": svc.gatekeeper.engine.health(),
        "approvals_pending": len(approvals),
        "team": svc.registry.current,
        "tmux_socket": svc.backend.socket_name if isinstance(svc.backend, TmuxBackend) else None,
        "watched": svc.watcher.watched(),
        "refused": dict(stats.refused),  # symlinked team directories, not watched
        "services": svc.services.health(),
        "counters": {
            "delivered": stats.delivered,
            "failed": stats.failed_passes,
            "pending": sum(stats.pending.values()),
            "possible_duplicates": stats.possible_duplicates,
            # Found at start, left by a killed ExoMonad: messages it was typing (typed
            # again: possible duplicates) and inbox locks it held (removed).
            "recovered_in_flight": svc.ledger.recovered_in_flight,
            "recovered_locks": len(svc.recovered_locks),
            **dict(svc.counters),
        },
        "ledger": svc.ledger.counts(),
        "inbox_commits": commit_stats(),  # group writes of appends (teams.groupcommit)
        "github": svc.github.health(),
        # Objects left out of full collections (frozen at start), collections so far.
        "gc": {
            "frozen": gc.get_freeze_count(),
            "collections": [g["collections"] for g in gc.get_stats()],
        },
    }


def member_pane(ours: str | None, theirs: str | None) -> str | None:
    """Our pane binding (any backend's id form), else Claude Code's own tmux pane id
    (which may also be "" / "synthetic" / "in-process": no pane)."""
    if ours:
        return ours
    return theirs if theirs and theirs.startswith("%") else None


@dataclass(frozen=True)
class Shared:
    """What every team's member rows need, read once per snapshot (keys hold the team)."""

    #: Worker identities by (name, team).
    workers: dict[tuple[str, str | None], Identity]
    #: Runtimes of the registered sessions by (team, name).
    runtimes: dict[tuple[str | None, str], str]
    #: Each worker's newest pull request by (team, worker).
    prs: dict[tuple[str, str], dict[str, Any]]
    #: The watcher's undelivered messages by ``team/member``.
    pending: dict[str, int]

    @classmethod
    def read(cls, svc: Services) -> Shared:
        """Read them all now."""
        return cls(
            workers={(i.name, i.team): i for i in svc.tokens.identities()},
            runtimes={(s.team, s.name): s.runtime for s in svc.registry.sessions()},
            prs=svc.github.pull_requests(),
            pending=svc.watcher.stats.pending,
        )


class _Fixed(NamedTuple):
    """What a team's config and inboxes say of one member."""

    member: Member
    pane: str | None
    state: PresenceState  # presence read off the inboxes
    inbox_at: float | None  # the time of its newest entry in them (else its joining)


class _Roster(NamedTuple):
    """A team's members as its config and inboxes say, the same while neither changes
    and no active member's idle time comes (a status is read far more often)."""

    config: TeamConfig
    digest: InboxDigest
    since: float
    until: float
    members: tuple[_Fixed, ...]


_rosters: dict[Path, _Roster] = {}


def _roster(paths: TeamPaths, now: float) -> _Roster:
    config, digest = load_config(paths), inbox_digest(paths)
    found = _rosters.get(paths.config_file)
    if (found is not None and found.config is config and found.digest is digest
            and found.since <= now < found.until):  # fmt: skip
        return found
    inbox = presence_from(config, digest, now=datetime.fromtimestamp(now, UTC))
    members = []
    for m in config.members:
        p = inbox[m.name]
        at = p.last_event.timestamp() if p.last_event is not None else None
        members.append(_Fixed(m, member_pane(m.pane, m.tmux_pane_id), p.state.value, at))
    found = _Roster(config, digest, now, settled_until(inbox), tuple(members))
    _rosters[paths.config_file] = found
    return found


def member_rows(
    svc: Services, team: str, shared: Shared | None = None
) -> tuple[str | None, list[dict[str, Any]]]:
    """The team's lead and one row per member (one read of config and inboxes).

    ``kind``: ``synthetic`` (a member ExoMonad added, its pane typed into by the
    watcher), ``teammate`` (a member Claude Code spawned that runs another agent through
    ``exomonad teammate``: it holds a worker token) or ``claude`` (Claude Code's own).
    ``shared``: what all teams need, when the caller reads several (read here if not).
    """
    now = time.time()
    roster = _roster(svc.paths(team), now)
    unread = roster.digest.unread
    shared = shared or Shared.read(svc)
    workers, runtimes, prs, pending = shared.workers, shared.runtimes, shared.prs, shared.pending
    noted = svc.presence.states(team, now)
    rows = []
    for m, pane, state, inbox_at in roster.members:
        held = workers.get((m.name, team))
        seen = merge(noted.get(m.name), state, inbox_at)
        kind = "synthetic" if m.synthetic else "teammate" if held is not None else "claude"
        runtime = ((held.runtime if held else None) or runtimes.get((team, m.name))
                   or (m.agent_type if m.synthetic else "claude"))  # fmt: skip
        row: dict[str, Any] = {
            "name": m.name,
            "agentType": m.agent_type,
            "backend": m.backend_type,
            "kind": kind,
            "runtime": runtime,
            "presence": seen.state,
            "presenceFrom": seen.source,
            "lastEvent": iso(seen.last_event),
            "lastEventAge": None if seen.last_event is None else round(now - seen.last_event, 1),
            "pane": pane,
            "unread": unread.get(m.name, 0),
            "pending": pending.get(f"{team}/{m.name}", 0),
            "worker": held is not None,
        }
        if held is not None:
            row.update(worktree=held.worktree, branch=held.branch)
        if (team, m.name) in prs:  # its newest pull request: state, review, checks
            row["pullRequest"] = prs[(team, m.name)]
        rows.append(row)
    return roster.config.lead_name, rows


def team_status_doc(svc: Services, team: str, shared: Shared | None = None) -> dict[str, Any]:
    """One team for ``/status``: members, tasks and the ``user`` inbox (or its error)."""
    try:
        lead, members = member_rows(svc, team, shared)
        tasks = [t.to_json() for t in TaskStore(svc.paths(team)).list()]
        user = svc.mailbox(team).read_raw("user")[-USER_INBOX_LIMIT:]
    except ExomonadError as exc:  # its config gone, or a file we must not read
        return {"name": team, "current": team == svc.registry.current, "error": str(exc)}
    return {"name": team, "current": team == svc.registry.current, "lead": lead,
            "members": members, "tasks": tasks, "user_inbox": user}  # fmt: skip


def status(svc: Services) -> dict[str, Any]:
    """The ``/status`` document (see the module doc)."""
    seq = svc.bus.last_seq  # first: anything later is in the event stream
    shared = Shared.read(svc)
    teams = [team_status_doc(svc, t, shared) for t in sorted(svc.teams())]
    approvals = svc.approvals.list_pending()
    server = health(svc, approvals)
    return {
        "seq": seq,
        "at": datetime.now(UTC).isoformat(),
        "current_team": svc.registry.current,
        "teams": teams,
        "approvals": [a.to_dict() for a in approvals],
        "policy": server["policy"],
        "server": server,
    }
