"""The poller as a server service: ``start``, ``stop``, ``health``, and ``watch``.

It is off, and ``health()`` says why, when ``[github] enabled = false``, when
``$GITHUB_TOKEN`` is not set, or when the project's repository is not known
(``[github] repo``, else the ``origin`` remote). Otherwise ``start`` builds the poller
and runs it on a thread of its own: each ``step`` polls, then the thread waits the
delay the step asked for, or until ``stop``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from exomonad.github.config import TOKEN_ENV, GitHubConfig
from exomonad.github.events import Owner, PrEvent
from exomonad.github.poller import GitHubPoller
from exomonad.github.repo import origin_repo

__all__ = ["GitHubService"]

log = logging.getLogger("exomonad.github")

#: Builds the poller for ``repo`` with ``token``, passing each new event to the third
#: argument (the server wires it to its inboxes).
Build = Callable[[str, str, Callable[[PrEvent], None]], GitHubPoller]


class GitHubService:
    """The GitHub poller's service surface (see the module doc).

    Parameters
    ----------
    config:
        The ``[github]`` section.
    project:
        The project's root (its ``origin`` remote names the repository).
    build:
        Makes the poller once the service knows the repository and has a token.
    """

    name = "github"

    def __init__(self, config: GitHubConfig, project: Path, build: Build) -> None:
        self.config = config
        self.project = project
        self._build = build
        self.poller: GitHubPoller | None = None
        self.reason: str | None = "not started"
        #: Called with each new event once it is recorded: the one place an event bus
        #: connects (``svc.github.on_event = bus.publish``).
        self.on_event: Callable[[PrEvent], None] | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()  # watch() from hook threads vs. stop()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start polling, unless the poller is off (then ``reason`` says why)."""
        if self._thread is not None:
            return
        token = self.config.token()
        repo = self.config.repo or origin_repo(self.project) if token else None
        if not self.config.enabled:
            self.reason = "off: [github] enabled = false in .exomonad/config.toml"
        elif token is None:
            self.reason = f"off: ${TOKEN_ENV} is not set in the server's environment"
        elif repo is None:
            self.reason = (
                'off: no GitHub repository (set [github] repo = "owner/name", '
                "or an origin remote on GitHub)"
            )
        else:
            self._launch(repo, token)
            return
        log.info("GitHub poller %s", self.reason)

    def _launch(self, repo: str, token: str) -> None:
        try:
            self.poller = self._build(repo, token, self._emit)
        except Exception as exc:  # the server runs on without it, and says why
            log.exception("GitHub poller not started")
            self.reason = f"off: could not start: {type(exc).__name__}: {exc}"
            return
        self.reason = None
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="exomonad-github", daemon=True)
        self._thread.start()
        log.info("GitHub poller on for %s every %.1fs", repo, self.config.interval)

    def _emit(self, event: PrEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def _run(self) -> None:
        poller = self.poller
        while poller is not None and not self._stop.is_set():
            self._stop.wait(poller.step())

    def stop(self, timeout: float = 30.0) -> None:
        """Stop polling (the current request finishes first) and close the client."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        with self._lock:
            if self.poller is not None:
                self.poller.client.close()
                self.poller.store.close()
                self.poller, self.reason = None, "stopped"

    def watch(self, owner: Owner) -> None:
        """Watch ``owner``'s branch from now on (a worker ran ``gh pr create``)."""
        with self._lock:
            if self.poller is None:
                return
            self.poller.store.watch(owner)
            log.info("watching %s's branch %s for a pull request", owner.worker, owner.branch)

    def health(self) -> dict[str, Any]:
        """``enabled``, why not, and the poller's own health; never the token."""
        out: dict[str, Any] = {
            "enabled": self.poller is not None,
            "reason": self.reason,
            "token": "set" if self.config.token() else "unset",
        }
        if self.poller is not None:
            out.update(self.poller.health())
            out["running"] = self._thread is not None and self._thread.is_alive()
        return out
