"""Fixtures for the GitHub poller: the loopback stand-in, a clock, and a poller over them
whose deliveries are recorded per recipient."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from exomonad.errors import ExomonadError
from exomonad.github import (
    GitHubClient,
    GitHubConfig,
    GitHubPoller,
    GitHubStore,
    Messages,
    Outbound,
    Owner,
    PrEvent,
)
from exomonad.panes import Spool
from tests.github.scenario import BRANCH, PARENT, REPO, TEAM, WORKER
from tests.support.github_api import GitHubStandIn

OWNER = Owner(TEAM, WORKER, PARENT, BRANCH)


@dataclass
class Clock:
    """Epoch seconds that move only when told."""

    now: float = 1_714_600_000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Rig:
    """A poller over the stand-in; what it delivered, per recipient, in order."""

    api: GitHubStandIn
    tmp: Path
    clock: Clock
    config: GitHubConfig
    targets: list[Owner] = field(default_factory=lambda: [OWNER])
    inbox: dict[str, list[str]] = field(default_factory=dict)
    events: list[PrEvent] = field(default_factory=list)
    #: Called before each delivery; raise to make it fail.
    fail: Callable[[Outbound], None] | None = None
    poller: GitHubPoller | None = None

    def start(self, **config: object) -> GitHubPoller:
        """A new poller (as after a server restart): new client, store reopened."""
        if self.poller is not None:
            self.stop()
        if config:
            self.config = self.config.model_copy(update=config)
        client = GitHubClient(self.api.url, self.api.token, clock=self.clock)
        store = GitHubStore(self.tmp / "ledger.db")
        self.poller = GitHubPoller(
            client,
            store,
            REPO,
            self.config,
            targets=lambda: list(self.targets),
            deliver=self._deliver,
            messages=Messages(Spool(self.tmp / "spool")),
            on_event=self.events.append,
            clock=self.clock,
        )
        return self.poller

    def stop(self) -> None:
        assert self.poller is not None
        self.poller.client.close()
        self.poller.store.close()
        self.poller = None

    def _deliver(self, m: Outbound) -> None:
        if self.fail is not None:
            self.fail(m)
        self.inbox.setdefault(m.recipient, []).append(m.text)

    def worker(self) -> list[str]:
        return self.inbox.get(WORKER, [])

    def parent(self) -> list[str]:
        return self.inbox.get(PARENT, [])


class Refused(ExomonadError):
    """A delivery a test made fail."""


@pytest.fixture
def api() -> Iterator[GitHubStandIn]:
    with GitHubStandIn("ghp_" + secrets.token_hex(18), REPO).serving() as stand_in:
        yield stand_in


@pytest.fixture
def rig(api: GitHubStandIn, tmp_path: Path) -> Iterator[Rig]:
    r = Rig(api, tmp_path, Clock(), GitHubConfig(interval=1.0, review_timeout=0))
    r.start()
    yield r
    if r.poller is not None:
        r.stop()
