"""Everything the server's tools and hooks work with, wired once per process."""

from __future__ import annotations

import logging
import time
from collections import Counter
from pathlib import Path

from exomonad import __version__, runtimes
from exomonad.ancestry import claude_lead_ancestor, other_agent
from exomonad.bridge.ledger import SqliteLedger
from exomonad.bridge.registry import TeamRegistry
from exomonad.bridge.watcher import InboxWatcher
from exomonad.errors import ExomonadError
from exomonad.panes import PaneBackend, TmuxBackend
from exomonad.policy import ApprovalStore, PolicyEngine
from exomonad.server.appender import InboxAppender
from exomonad.server.bus import EventBus
from exomonad.server.config import ProjectConfig, load_project_config
from exomonad.server.feeds import Feeds
from exomonad.server.gateprobe import GateProbes
from exomonad.server.github import github_service
from exomonad.server.identity import Identity, TokenStore
from exomonad.server.leadlink import LeadLink
from exomonad.server.permissions import Gatekeeper
from exomonad.server.presence import PresenceBook
from exomonad.server.service import ServiceHost
from exomonad.setup import keep_searches_out
from exomonad.state import adopt_lock_journal, lock_journal, secure_state_dir
from exomonad.teams import Dialect, Mailbox, TeamPaths, get_dialect
from exomonad.teams.paths import config_root
from exomonad.worktrees import WorktreeManager

__all__ = ["Services"]

log = logging.getLogger("exomonad.server")

#: How many teams' :class:`TeamPaths` :meth:`Services.paths` keeps.
_PATHS_KEPT = 256


class Services:
    """The server's state: config, tokens, ledger, panes, registry, counters, and its
    background services (:attr:`services`: the event bus, the lead link, the watcher).

    Parameters
    ----------
    state_dir:
        The project's ``.exomonad/``.
    root:
        Claude config root (default ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``).
    backend:
        Pane backend (default tmux on the default server).
    """

    def __init__(
        self,
        state_dir: Path,
        *,
        root: Path | None = None,
        backend: PaneBackend | None = None,
        config: ProjectConfig | None = None,
        dialect: Dialect | None = None,
    ) -> None:
        self.state_dir = secure_state_dir(state_dir)
        keep_searches_out(self.state_dir)  # rg --hidden, ag, fd skip it
        self.recovered_locks = adopt_lock_journal(state_dir)
        self.root = config_root(root)
        self.config = config or load_project_config(state_dir)
        self.dialect = dialect or get_dialect()
        workers = self.config.workers
        self.worktrees = WorktreeManager(state_dir.resolve().parent,
                                         worktree_dir=workers.worktree_dir,
                                         branch_prefix=workers.branch_prefix)  # fmt: skip
        self.tokens = TokenStore(state_dir)
        self.tokens.ensure_lead_token(self.config.lead.name, self.config.lead.role)
        self.ledger = SqliteLedger(state_dir / "ledger.db")
        self.backend: PaneBackend = backend or TmuxBackend()
        self.registry = TeamRegistry(state_dir)
        self.approvals = ApprovalStore(state_dir / "approvals.db")
        #: Background services, started in this order by ``exomonad serve``.
        self.services = ServiceHost()
        self.bus = self.services.register(EventBus(default_team=lambda: self.registry.current))
        self.presence = PresenceBook(self.bus)
        self.feeds = Feeds(self.bus, self.presence)
        self.gatekeeper = Gatekeeper(
            PolicyEngine.for_project(state_dir), self.approvals,
            timeout=self.config.policy.approval_timeout, on_timeout=self.config.policy.on_timeout,
            backend=self.backend, popup=self.config.policy.popup, publish=self.bus.publish,
        )  # fmt: skip
        self.appender = self.services.register(InboxAppender(lock_journal(self.state_dir)))
        self.lead = self.services.register(LeadLink(self))
        self.watcher = self.services.register(InboxWatcher(
            self.ledger, self.backend, root=self.root, dialect=self.dialect,
            intercept=self.gatekeeper.intercept, on_config=self.lead.on_config,
            on_pass=self.feeds.on_pass, spool_box=self.spool_box,
        ))  # fmt: skip
        self.counters: Counter[str] = Counter()
        self.github = self.services.register_blocking(github_service(self))
        self.github.on_event = self.feeds.on_pull_request
        #: (team, name) of each worker whose MCP client has reached this server.
        self.mcp_seen: set[tuple[str | None, str]] = set()
        #: Gate probes in flight (:mod:`exomonad.server.gateprobe`).
        self.gate_probes = GateProbes()
        self._mailboxes: dict[str, Mailbox] = {}
        self._paths: dict[str, TeamPaths] = {}
        self.started_at = time.time()
        self.version = __version__

    def identify(self, token: str | None, peer: int | None = None) -> Identity:
        """The caller behind ``token``; unknown tokens get the least role, anonymously.

        ``peer`` is the connecting process (:mod:`exomonad.server.peer`; None in-process):
        the lead's role counts only from a process in no other agent's session, so a
        worker that read ``lead.token`` is a guest with it.
        """
        found = self.tokens.lookup(token)
        if found is not None and peer is not None and found.role == self.config.lead.role:
            why = other_agent(peer, token)
            if why is not None:
                self.counters["lead_token_refused"] += 1
                log.warning("the lead's token from pid %d is not the lead's: %s", peer, why)
                found = None
        if found is not None:
            return found
        return Identity(name="anonymous", role=self.config.roles.default, authenticated=False)

    def identify_lead_claim(self, token: str | None, peer: int | None,
                            runtime: str) -> Identity:  # fmt: skip
        """The caller of a tokenless hook to which the shell front (``exomonad-hook``)
        added the lead's token, not knowing whose hook it is: the lead only when
        ``runtime`` can lead, ``token`` is the lead's and ``peer`` belongs to the lead's
        own Claude Code session (:func:`exomonad.ancestry.claude_lead_ancestor`, the rule
        the Python client applies to itself before it offers that token); else the least
        role, as the client would have sent no token, counted as ``lead_claim_declined``
        without a warning."""
        known = runtimes.RUNTIMES.get(runtime)
        found = self.tokens.lookup(token) if known is not None and known.can_lead else None
        if found is not None and found.role == self.config.lead.role and peer:
            why = claude_lead_ancestor(peer)
            if why is None:
                return found
            log.debug("a hook from pid %d is not the lead's: %s", peer, why)
        self.counters["lead_claim_declined"] += 1
        return self.identify(None)

    def spool_box(self, team: str, member: str) -> tuple[str, str]:
        """Whose spool directory a long message for ``member`` of ``team`` goes to: the
        team its token names, the one the policy lets it read. A worker the lead's
        restart moved to its new team (``[lead] follow = "move"``) keeps its first."""
        who = self.tokens.find(member, team) or next(
            (i for i in self.tokens.identities() if i.name == member and i.team), None
        )
        return (who.team if who is not None and who.team else team), member

    def team_of(self, who: Identity) -> str:
        """The team ``who`` works in: its own, else the project's current team."""
        team = who.team or self.registry.current
        if team is None:
            raise ExomonadError(
                "no team yet: the lead has not created or joined a team "
                "(start Claude Code with teams enabled, or run `exomonad team create`)"
            )
        return team

    def paths(self, team: str) -> TeamPaths:
        """Paths of ``team`` under this server's config root (one immutable
        :class:`TeamPaths` per team, its derived paths computed once)."""
        paths = self._paths.get(team)
        if paths is None:
            if len(self._paths) >= _PATHS_KEPT:
                self._paths.clear()
            paths = self._paths[team] = TeamPaths(team, self.root)
        return paths

    def mailbox(self, team: str) -> Mailbox:
        """The mailbox of ``team`` in the server's dialect (one per team: its member
        cache and bookkeeping persist across calls)."""
        box = self._mailboxes.get(team)
        if box is None or box.dialect is not self.dialect:
            box = self._mailboxes[team] = Mailbox(
                self.paths(team), dialect=self.dialect,
                on_append=lambda to, entry: self.feeds.on_append(team, to, entry),
            )  # fmt: skip
        return box

    def teams(self) -> set[str]:
        """This project's teams: the lead's (current), those its sessions are in, and
        those its workers hold tokens for."""
        return self.registry.teams() | {i.team for i in self.tokens.identities() if i.team}

    def close(self) -> None:
        """Flush and close what holds files open."""
        self.ledger.close()
        self.approvals.close()
