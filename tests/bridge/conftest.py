"""Fixtures for bridge tests: a team with one synthetic member, a ledger, a recording sink."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from exomonad.bridge.ledger import SqliteLedger
from exomonad.errors import PaneError
from exomonad.panes import DeliveryReceipt
from exomonad.teams import Mailbox, TeamPaths, create_team, register_synthetic


@dataclass
class RecordingSink:
    """A TextSink that records what it is given; panes in ``dead`` refuse input."""

    got: list[tuple[str, str]] = field(default_factory=list)
    submits: list[str] = field(default_factory=list)
    dead: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def deliver(self, pane: str, text: str, *, sender: str | None = None,
                to: tuple[str, str] | None = None) -> DeliveryReceipt:  # fmt: skip
        if pane in self.dead:
            raise PaneError(f"pane {pane} is dead")
        with self.lock:
            self.got.append((pane, text))
        now = time.time()
        return DeliveryReceipt(pane=pane, typed=text, spool_path=None, submitted=True,
                               enter_attempts=1, started_at=now, typed_at=now,
                               submitted_at=now)  # fmt: skip

    def submit(self, pane: str) -> None:
        if pane in self.dead:
            raise PaneError(f"pane {pane} is dead")
        with self.lock:
            self.submits.append(pane)

    def exists(self, pane: str) -> bool:
        return pane not in self.dead

    def texts(self, pane: str | None = None) -> list[str]:
        with self.lock:
            return [t for p, t in self.got if pane is None or p == pane]


@pytest.fixture
def team(tmp_path: Path) -> TeamPaths:
    paths = TeamPaths("Bridge Team", tmp_path / "claude")
    create_team(paths)
    register_synthetic(paths, "gemini-1", pane="%1")
    return paths


@pytest.fixture
def mailbox(team: TeamPaths) -> Mailbox:
    return Mailbox(team, durable=False)


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[SqliteLedger]:
    led = SqliteLedger(tmp_path / "state" / "ledger.db")
    yield led
    led.close()


@pytest.fixture
def sink() -> RecordingSink:
    return RecordingSink()
