"""Keeping track of the lead: its session team, its restarts, and reaching it at all.

* Today's Claude Code makes a team ``session-<first 8 hex of the session id>`` at start.
  The lead's SessionStart hook registers its session; the team is adopted when the hook
  sees it, or later when the watcher reads a ``config.json`` whose ``leadSessionId`` is
  that session's (the hook may run before the team exists).
* A lead that restarts gets a new session and a new team. ``[lead] follow`` decides what
  happens to our workers in the old team: ``move`` them, ``remove`` them, or ``keep``.
* A 2.1.330 lead whose team has only roster members does not poll its inbox. A worker's
  message still unread after ``[lead] poll_grace`` seconds is typed into the lead's
  pane (known from its SessionStart hook) and removed from the inbox, so a poller that
  starts later does not show it twice.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

from exomonad.errors import ExomonadError
from exomonad.server.events import Delivery
from exomonad.server.service import Passive
from exomonad.teams import load_config, register_synthetic, remove_synthetic
from exomonad.teams.mailbox import new_entry
from exomonad.teams.models import TeamConfig, message_identity

if TYPE_CHECKING:
    from exomonad.server.services import Services

__all__ = ["LeadLink"]

log = logging.getLogger("exomonad.server")


class LeadLink(Passive):
    """The server's view of the lead (see the module doc); a service whose stop cancels
    the pane fallbacks still waiting."""

    name = "lead"

    def __init__(self, svc: Services) -> None:
        super().__init__()
        self.svc = svc
        self._lock = threading.Lock()
        self._timers: set[threading.Timer] = set()
        self.fallbacks = 0

    def health(self) -> dict[str, Any]:
        """The lead's session and pane, and the pane fallbacks waiting and done."""
        lead = self.svc.registry.current_lead(self.svc.config.lead.role)
        with self._lock:
            waiting = len(self._timers)
        return {"team": self.svc.registry.current, "session": lead.session_id if lead else None,
                "pane": lead.pane if lead else None, "fallbacks_waiting": waiting,
                "fallbacks": self.fallbacks}  # fmt: skip

    def on_stop(self) -> None:
        """Cancel the fallbacks still waiting (nothing is typed once the server stops)."""
        with self._lock:
            timers, self._timers = self._timers, set()
        for timer in timers:
            timer.cancel()

    def adopt(self, session_id: str, team: str) -> None:
        """Make ``team`` the lead's (and the project's current) team."""
        svc = self.svc
        with self._lock:
            old = svc.registry.current
            if old == team:
                return
            session = svc.registry.session(session_id)
            if session is not None:
                session.team = team
                svc.registry.register(session)
            svc.registry.set_current(team)
        log.info("lead session %s: team %s (was %s)", session_id, team, old)
        if old is not None and svc.config.lead.follow != "keep":
            self._follow(old, team)

    def _follow(self, old: str, new: str) -> None:
        svc = self.svc
        try:
            members = [m for m in load_config(svc.paths(old)).members if m.synthetic]
        except ExomonadError:
            return  # the old team is gone with its config
        for m in members:
            if svc.config.lead.follow == "move":
                register_synthetic(svc.paths(new), m.name, agent_type=m.agent_type or "worker",
                                   pane=m.pane)  # fmt: skip
            remove_synthetic(svc.paths(old), m.name)
            log.info("worker %s: %s %s → %s", m.name, svc.config.lead.follow, old, new)

    def on_config(self, config: TeamConfig) -> None:
        """Watcher callback: a team whose ``leadSessionId`` is a known lead session."""
        sid = config.lead_session_id
        if sid and self.svc.registry.lead_session(sid, self.svc.config.lead.role) is not None:
            self.adopt(sid, config.name)

    def tell(
        self, team: str, parent: str, *, sender: str, text: str, summary: str, **extra: Any
    ) -> str:
        """Append a message to ``parent``'s inbox (locked, verified) and watch it with
        :meth:`watch_unread`; its message id."""
        mid = self.svc.mailbox(team).send(
            parent, sender=sender, text=text, summary=summary, **extra
        )
        self.watch_unread(team, parent, mid, text)
        return mid

    async def tell_on_loop(self, team: str, parent: str, *, sender: str, text: str,
                           summary: str) -> str:  # fmt: skip
        """:meth:`tell` for the event loop: the entry is written by the inbox appender
        (:class:`~exomonad.server.appender.InboxAppender`) while the caller awaits it."""
        box = self.svc.mailbox(team)
        pending = box.prepare(parent, new_entry(sender, text, summary))
        await self.svc.appender.commit(box, parent, pending)
        mid = box.delivered(parent, pending)
        self.watch_unread(team, parent, mid, text)
        return mid

    def watch_unread(self, team: str, lead: str, message_id: str, text: str) -> None:
        """After ``poll_grace``, type ``text`` into the lead's pane if still unread."""
        grace = self.svc.config.lead.poll_grace
        if grace <= 0 or self.svc.dialect.mark_read != "prune":
            return  # 2.1.112 keeps entries (marked read): nothing to tell from the file
        session = self.svc.registry.current_lead(self.svc.config.lead.role)
        if session is None or not session.pane:
            return  # no pane to fall back to: no timer
        timer = threading.Timer(grace, self._due, args=(team, lead, message_id, text))
        timer.daemon = True
        with self._lock:
            self._timers.add(timer)
        timer.start()

    def _due(self, team: str, lead: str, message_id: str, text: str) -> None:
        with self._lock:
            self._timers.discard(threading.current_thread())
        self._fallback(team, lead, message_id, text)

    def _fallback(self, team: str, lead: str, message_id: str, text: str) -> None:
        svc = self.svc
        mailbox = svc.mailbox(team)
        try:
            unread = any(message_identity(e) == message_id for e in mailbox.read_raw(lead))
        except ExomonadError:
            unread = True
        session = svc.registry.current_lead(svc.config.lead.role)
        if not unread or session is None or not session.pane:
            return
        try:
            svc.backend.deliver(session.pane, text)
            mailbox.mark_read(lead, [message_id])  # prune: no second showing later
            svc.counters["lead_pane_fallback"] += 1
            self.fallbacks += 1
            svc.bus.publish(Delivery(team=team, member=lead, pane=session.pane,
                                     message_ids=[message_id]))  # fmt: skip
        except ExomonadError as exc:
            log.warning("lead pane fallback to %s failed: %s", session.pane, exc)
