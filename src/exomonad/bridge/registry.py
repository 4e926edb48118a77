"""Which team each agent session belongs to, and the project's current team.

Filled by hooks (SessionStart, TeamCreate/TeamDelete) and by spawning workers; persisted
in ``.exomonad/teams.json`` so a server restart keeps it. Also remembers each session's
activity, so an idle notification is sent once per idle transition, not every turn.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

import orjson

from exomonad.state import write_private

__all__ = ["Activity", "SessionInfo", "TeamRegistry"]

Activity = Literal["active", "idle"]


@dataclass
class SessionInfo:
    """One agent session known to the server."""

    session_id: str
    runtime: str
    name: str
    role: str
    team: str | None = None
    cwd: str | None = None
    activity: Activity = "active"
    pane: str | None = None


@dataclass
class _State:
    current: str | None = None
    sessions: dict[str, SessionInfo] = field(default_factory=dict)


class TeamRegistry:
    """Sessions → teams, the current team, and per-session activity (thread-safe)."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / "teams.json"
        self._lock = threading.Lock()
        self._state = _State()
        if self.path.exists():
            raw = orjson.loads(self.path.read_bytes())
            self._state = _State(
                current=raw.get("current"),
                sessions={k: SessionInfo(**v) for k, v in raw.get("sessions", {}).items()},
            )

    def _save(self) -> None:
        data = {
            "current": self._state.current,
            "sessions": {k: asdict(v) for k, v in self._state.sessions.items()},
        }
        write_private(self.path, orjson.dumps(data, option=orjson.OPT_INDENT_2))

    @property
    def current(self) -> str | None:
        """The project's current team (the lead's), if known."""
        return self._state.current

    def set_current(self, team: str | None) -> None:
        """Make ``team`` the current team (None: no team)."""
        with self._lock:
            self._state.current = team
            self._save()

    def forget_team(self, team: str) -> None:
        """A team was deleted: unset it as current and detach its sessions."""
        with self._lock:
            if self._state.current == team:
                self._state.current = None
            for s in self._state.sessions.values():
                if s.team == team:
                    s.team = None
            self._save()

    def register(self, info: SessionInfo) -> None:
        """Record (or update) a session."""
        with self._lock:
            self._state.sessions[info.session_id] = info
            self._save()

    def session(self, session_id: str) -> SessionInfo | None:
        """The session, if known."""
        with self._lock:
            return self._state.sessions.get(session_id)

    def transition(self, session_id: str, activity: Activity) -> bool:
        """Set a session's activity; True if it changed (unknown sessions: False)."""
        with self._lock:
            s = self._state.sessions.get(session_id)
            if s is None or s.activity == activity:
                return False
            s.activity = activity
            self._save()
            return True

    def sessions(self) -> list[SessionInfo]:
        """Every known session."""
        with self._lock:
            return list(self._state.sessions.values())

    def lead_session(self, session_id: str, lead_role: str) -> SessionInfo | None:
        """The session ``session_id`` if it is a lead's."""
        s = self.session(session_id)
        return s if s is not None and s.role == lead_role else None

    def current_lead(self, lead_role: str) -> SessionInfo | None:
        """The lead session whose team is the current team, if known."""
        with self._lock:
            for s in self._state.sessions.values():
                if s.role == lead_role and s.team == self._state.current:
                    return s
        return None

    def teams(self) -> set[str]:
        """Every team a session is registered in, plus the current one."""
        with self._lock:
            found = {s.team for s in self._state.sessions.values() if s.team}
            if self._state.current:
                found.add(self._state.current)
            return found
