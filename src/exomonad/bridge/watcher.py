"""The inbox watcher: inotify on the teams' ``inboxes/`` directories → delivery passes.

Claude Code writes an inbox either in place (2.1.112: ``IN_CLOSE_WRITE``) or through a
temp file and a rename (2.1.330 and ExoMonad: ``IN_MOVED_TO``); both are watched. New
teams (a directory under ``teams/``), a lazily created ``inboxes/``, and changes to a
team's ``config.json`` (members added, panes bound) are watched too. There is no polling
loop on the primary path: the only timer retries members whose messages are pending
behind an unbound or dead pane.

Each synthetic member (``backendType == "exomonad"``) has one worker task; events mark it
dirty, and the worker runs :meth:`Deliverer.run_pass` in a thread, so a slow pane never
holds up the others and events arriving during a pass coalesce into one more pass.

Symlinks: ``teams/``, a team directory or an ``inboxes/`` directory that is a symlink (or
lies below one) is not watched (``IN_DONT_FOLLOW`` too); it is logged once and listed in
:attr:`WatcherStats.refused` (``/health``), and other teams carry on. inotify only
schedules passes: every read and write of a pass goes through the mailbox, which walks
the directories again without following symlinks, so a link swapped in later is refused
there (and counted as a failed pass).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asyncinotify import Event, Inotify, Mask

from exomonad.bridge.delivery import Deliverer, PassResult, SpoolBox
from exomonad.bridge.ledger import Ledger
from exomonad.bridge.render import render
from exomonad.errors import ExomonadError, SymlinkedDirectoryError
from exomonad.panes.contract import TextSink
from exomonad.teams.config import load_config, load_config_in
from exomonad.teams.dialects import Dialect
from exomonad.teams.dirs import SafeDir
from exomonad.teams.mailbox import Mailbox
from exomonad.teams.models import TeamConfig
from exomonad.teams.paths import TeamPaths, config_root, sanitize_path_name

__all__ = ["InboxWatcher", "MemberSelector", "PassObserver", "WatcherStats", "synthetic_members"]

#: Which members a watcher serves, and where: member name → pane (None: not bound yet).
MemberSelector = Callable[[TeamConfig], dict[str, str | None]]
#: Told of every delivery pass: team, member, pane (None: unbound) and what it did.
PassObserver = Callable[[str, str, str | None, PassResult], None]


def synthetic_members(config: TeamConfig) -> dict[str, str | None]:
    """The default selector: ExoMonad's synthetic members and their bound panes."""
    return {m.name: m.pane for m in config.members if m.synthetic}


log = logging.getLogger("exomonad.bridge")

_FILE_EVENTS = Mask.CLOSE_WRITE | Mask.MOVED_TO
_DIR_EVENTS = Mask.CREATE | Mask.MOVED_TO
#: Added to every watch: the watched path must be a directory, and not a symlink to one.
_NO_LINK = Mask.ONLYDIR | Mask.DONT_FOLLOW
_Key = tuple[str, str]


@dataclass
class WatcherStats:
    """Counters for ``/health`` and benchmarks."""

    passes: int = 0
    delivered: int = 0
    failed_passes: int = 0
    possible_duplicates: int = 0
    pending: dict[str, int] = field(default_factory=dict)
    #: symlinked directory → why it is not watched (see the module docstring)
    refused: dict[str, str] = field(default_factory=dict)


@dataclass
class _Team:
    paths: TeamPaths
    deliverer: Deliverer
    #: inbox file stem → (member name, pane or None)
    members: dict[str, tuple[str, str | None]] = field(default_factory=dict)


class InboxWatcher:
    """Watch team inboxes and deliver new entries to synthetic members' panes.

    Parameters
    ----------
    ledger, sink:
        Where deliveries are recorded and how text reaches a pane.
    root:
        Claude config root (default ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``).
    teams:
        Only these teams (default: every team under the root, including new ones).
    debounce:
        Seconds to wait after an event before a pass, to coalesce bursts (default 2 ms).
    retry_interval:
        Seconds between retries of members whose messages are pending.
    durable:
        fsync the watcher's own writes (marking entries read). Off by default: the
        ledger, not the inbox file, records what was delivered.
    select, renderer:
        Which members to serve (default :func:`synthetic_members`) and how an entry
        becomes text (default :func:`~exomonad.bridge.render.render`); the lead relay
        serves the lead's own inbox with these.
    intercept:
        Sees each new entry first; True consumes it (see :class:`Deliverer`).
    spool_box:
        Whose spool directory a member's long messages go to (see :class:`Deliverer`).
    on_config:
        Called with every team config read (new team, members changed): the server
        finds the lead's session team this way.
    on_pass:
        Called (on the event loop) after every delivery pass: the server's events.

    A watcher is one of the server's services (:mod:`exomonad.server.service`):
    ``name``, :meth:`run`, :meth:`request_stop`, :meth:`health`.
    """

    name = "watcher"

    def __init__(
        self,
        ledger: Ledger,
        sink: TextSink,
        *,
        root: Path | None = None,
        teams: Iterable[str] | None = None,
        dialect: Dialect | None = None,
        durable: bool = False,
        mark_read: bool = True,
        debounce: float = 0.002,
        retry_interval: float = 5.0,
        select: MemberSelector = synthetic_members,
        renderer: Callable[[dict[str, Any]], str] = render,
        intercept: Callable[[dict[str, Any]], bool] | None = None,
        on_config: Callable[[TeamConfig], None] | None = None,
        on_pass: PassObserver | None = None,
        spool_box: SpoolBox | None = None,
    ) -> None:
        self.ledger = ledger
        self.spool_box = spool_box
        self.sink = sink
        self.root = config_root(root)
        self.only = set(teams) if teams is not None else None
        self.dialect = dialect
        self.durable = durable
        self.mark_read = mark_read
        self.debounce = debounce
        self.retry_interval = retry_interval
        self.select = select
        self.renderer = renderer
        self.intercept = intercept
        self.on_config = on_config
        self.on_pass = on_pass
        self.stats = WatcherStats()
        self._teams: dict[str, _Team] = {}  # by inbox dir name
        self._dirty: dict[_Key, asyncio.Event] = {}
        self._workers: dict[_Key, asyncio.Task[None]] = {}
        self._pending: set[_Key] = set()
        self._ino: Inotify | None = None
        self._stop = asyncio.Event()

    @property
    def teams_dir(self) -> Path:
        """``<root>/teams``."""
        return self.root / "teams"

    def watched(self) -> dict[str, list[str]]:
        """Team name → synthetic member names currently served."""
        return {
            t.paths.team: sorted(n for n, _ in t.members.values()) for t in self._teams.values()
        }

    def request_stop(self) -> None:
        """Ask :meth:`run` to return (safe to call from a signal handler)."""
        self._stop.set()

    def health(self) -> dict[str, Any]:
        """Passes, deliveries, what waits, and what is watched or refused."""
        s = self.stats
        return {"teams": len(self._teams), "passes": s.passes, "delivered": s.delivered,
                "failed_passes": s.failed_passes, "pending": dict(s.pending),
                "possible_duplicates": s.possible_duplicates,
                "refused": len(s.refused)}  # fmt: skip

    async def run(self, ready: asyncio.Event | None = None) -> None:
        """Watch until :meth:`request_stop`; sets ``ready`` once the initial scan is queued.

        A symlinked ``teams/`` is reported (:attr:`WatcherStats.refused`), not a crash:
        the watcher then watches nothing until stopped.
        """
        with Inotify() as ino:
            self._ino = ino
            if self._safe(self.teams_dir, create=True):
                ino.add_watch(self.teams_dir, _DIR_EVENTS | _NO_LINK)
                for d in sorted(self.teams_dir.iterdir()):
                    self._watch_team_dir(d)
            reader = asyncio.create_task(self._read_events(ino))
            retry = asyncio.create_task(self._retry_loop())
            if ready is not None:
                ready.set()
            try:
                await self._stop.wait()
            finally:
                tasks = [reader, retry, *self._workers.values()]
                for t in tasks:
                    t.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                self._workers.clear()
                self._ino = None
                for team in self._teams.values():  # leave no delivered entry unmarked
                    await asyncio.to_thread(team.deliverer.flush)

    # -- inotify -----------------------------------------------------------------------

    async def _read_events(self, ino: Inotify) -> None:
        async for event in ino:
            try:
                self._on_event(event)
            except Exception:  # one bad event must never stop the watcher
                log.exception("error handling %s", event)

    def _on_event(self, event: Event) -> None:
        if event.mask & Mask.Q_OVERFLOW:
            log.warning("inotify queue overflow: rescanning every team")
            for d in self.teams_dir.iterdir():
                self._watch_team_dir(d)
            return
        if event.watch is None or event.path is None:
            return
        parent, path = event.watch.path, event.path
        if parent == self.teams_dir:
            self._watch_team_dir(path)
        elif parent.name == "inboxes":
            name = path.name
            team = self._teams.get(parent.parent.name)
            if team is not None and name.endswith(".json") and ".tmp." not in name:
                member = team.members.get(name[: -len(".json")])
                if member is not None:
                    self._schedule((team.paths.team, member[0]))
        elif path.name == "config.json":
            self._load_team(parent)
        elif path.name == "inboxes":
            self._watch_inboxes(path)

    def _safe(self, d: Path, *, create: bool = False) -> bool:
        """True if ``d`` is a directory reached from the root without a symlink; a link is
        logged (once) and recorded in ``stats.refused``."""
        try:
            SafeDir.open(self.root, d, create=create).close()
        except SymlinkedDirectoryError as exc:
            if str(exc.path) not in self.stats.refused:
                log.error("not watching %s: %s", d, exc)
            self.stats.refused[str(exc.path)] = str(exc)
            return False
        except (ExomonadError, OSError):  # missing, removed meanwhile, not a directory
            return False
        self.stats.refused.pop(str(d), None)  # a link replaced by a directory since
        return True

    def _watch_team_dir(self, d: Path) -> None:
        if self._ino is None or not self._safe(d):
            return
        try:
            self._ino.add_watch(d, _FILE_EVENTS | Mask.CREATE | _NO_LINK)
        except OSError:  # removed (or swapped for a link) meanwhile
            return
        self._watch_inboxes(d / "inboxes")
        if (d / "config.json").exists():
            self._load_team(d)

    def _watch_inboxes(self, d: Path) -> None:
        if self._ino is None or not self._safe(d):
            return
        with contextlib.suppress(OSError):
            self._ino.add_watch(d, _FILE_EVENTS | _NO_LINK)
        team = self._teams.get(d.parent.name)
        if team is not None:
            for name, _ in team.members.values():
                self._schedule((team.paths.team, name))

    def _load_team(self, config_dir: Path) -> None:
        """(Re)read a team's config.json: its synthetic members and their panes."""
        only = self.only
        try:
            config = load_config_in(self.root, config_dir, lambda n: only is None or n in only)
            if config is None:  # names no team, or one not watched
                return
            name = config.name
            paths = TeamPaths(name, self.root)
            if paths.config_dir != config_dir:  # the team's own config is another file
                config = load_config(paths)
        except (ExomonadError, OSError) as exc:
            log.warning("skipping %s: %s", config_dir, exc)
            return
        if self.on_config is not None:
            try:
                self.on_config(config)
            except Exception:  # a callback bug must not stop the watcher
                log.exception("on_config callback failed for %s", name)
        key = sanitize_path_name(name)
        team = self._teams.get(key)
        if team is None:
            mailbox = Mailbox(paths, dialect=self.dialect, durable=self.durable)
            deliverer = Deliverer(
                mailbox, self.ledger, self.sink, mark_read=self.mark_read,
                renderer=self.renderer, intercept=self.intercept, spool_box=self.spool_box,
            )  # fmt: skip
            team = self._teams[key] = _Team(paths, deliverer)
            if paths.team_dir != config_dir:
                self._watch_team_dir(paths.team_dir)
        before = team.members
        team.members = {
            sanitize_path_name(name): (name, pane) for name, pane in self.select(config).items()
        }
        for stem, member in team.members.items():
            if before.get(stem) != member:
                self._schedule((name, member[0]))
        for stem, (gone, _) in before.items():
            if stem not in team.members:
                self._drop((name, gone))

    # -- workers -----------------------------------------------------------------------

    def _schedule(self, key: _Key) -> None:
        event = self._dirty.get(key)
        if event is None:
            event = self._dirty[key] = asyncio.Event()
            self._workers[key] = asyncio.create_task(self._worker(key, event))
        event.set()

    def _drop(self, key: _Key) -> None:
        task = self._workers.pop(key, None)
        if task is not None:
            task.cancel()
        self._dirty.pop(key, None)
        self._pending.discard(key)
        self.stats.pending.pop("/".join(key), None)

    async def _worker(self, key: _Key, dirty: asyncio.Event) -> None:
        team_name, member = key
        while True:
            await dirty.wait()
            if self.debounce:
                await asyncio.sleep(self.debounce)
            dirty.clear()
            team = self._teams.get(sanitize_path_name(team_name))
            binding = team.members.get(sanitize_path_name(member)) if team else None
            if team is None or binding is None:
                return
            try:
                result = await asyncio.to_thread(team.deliverer.run_pass, member, binding[1])
            except Exception as exc:
                log.exception("delivery pass for %s/%s failed", team_name, member)
                result = PassResult(error=str(exc), pending=1)
            self._account(key, result)
            if self.on_pass is not None:
                try:
                    self.on_pass(team_name, member, binding[1], result)
                except Exception:  # an observer bug must never stop deliveries
                    log.exception("on_pass callback failed for %s/%s", team_name, member)

    def _account(self, key: _Key, result: PassResult) -> None:
        s = self.stats
        s.passes += 1
        s.delivered += len(result.delivered)
        s.possible_duplicates += result.possible_duplicates
        if result.error:
            s.failed_passes += 1
        if result.pending or result.error:
            self._pending.add(key)
            s.pending["/".join(key)] = result.pending
        else:
            self._pending.discard(key)
            s.pending.pop("/".join(key), None)

    async def _retry_loop(self) -> None:
        """Retry pending members every ``retry_interval``; flush due mark-reads each tick."""
        tick = min(1.0, self.retry_interval)
        since_retry = 0.0
        while True:
            await asyncio.sleep(tick)
            since_retry += tick
            if since_retry >= self.retry_interval:
                since_retry = 0.0
                for key in list(self._pending):
                    self._schedule(key)
            for team in self._teams.values():
                for member in team.deliverer.mark_due():
                    self._schedule((team.paths.team, member))
