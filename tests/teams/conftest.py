"""Shared fixtures for the ``exomonad.teams`` unit tests: an isolated config root and a team."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest

from exomonad.teams.atomic import dump_json
from exomonad.teams.config import create_team
from exomonad.teams.dialects import DIALECTS, Dialect
from exomonad.teams.lock import LockSettings
from exomonad.teams.lockwait import Release
from exomonad.teams.mailbox import Mailbox
from exomonad.teams.paths import TeamPaths

#: A lock budget of a few milliseconds, for tests that expect a LockError quickly.
TINY_LOCK = LockSettings(retries=3, min_timeout=0.001, max_timeout=0.002)

#: Environment variables that change where and how the library writes.
_ENV_VARS = ("CLAUDE_CONFIG_DIR", "CLAUDE_CODE_TASK_LIST_ID", "EXOMONAD_CLAUDE_DIALECT")


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees the developer's CLAUDE_CONFIG_DIR, task list id or dialect choice."""
    for var in _ENV_VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An empty Claude config root."""
    path = tmp_path / "claude"
    path.mkdir()
    return path


@pytest.fixture
def team(root: Path) -> TeamPaths:
    """A freshly created team ``alpha`` (config.json with the lead, empty ``inboxes/``)."""
    paths = TeamPaths("alpha", root)
    create_team(paths, description="unit tests", lead_session_id="sess-1")
    return paths


@pytest.fixture(params=sorted(DIALECTS))
def dialect(request: pytest.FixtureRequest) -> Dialect:
    """Each Claude Code dialect in turn."""
    name: str = request.param
    return DIALECTS[name]


MailboxFactory = Callable[..., Mailbox]


@pytest.fixture
def make_mailbox(team: TeamPaths) -> MailboxFactory:
    """Build a non-durable (fast) mailbox on ``team``; keyword arguments override."""

    def make(**kwargs: Any) -> Mailbox:
        kwargs.setdefault("durable", False)
        return Mailbox(team, **kwargs)

    return make


def read_config(paths: TeamPaths) -> dict[str, Any]:
    """The raw ``config.json`` of ``paths``."""
    data: dict[str, Any] = orjson.loads(paths.config_file.read_bytes())
    return data


def write_config(paths: TeamPaths, data: dict[str, Any]) -> None:
    """Replace ``config.json`` with ``data`` written the way Claude Code writes it."""
    paths.config_dir.mkdir(parents=True, exist_ok=True)
    paths.config_file.write_bytes(dump_json(data))


def add_member(paths: TeamPaths, member: dict[str, Any]) -> None:
    """Append a raw member (as Claude Code would) to the team's config."""
    data = read_config(paths)
    data["members"].append(member)
    write_config(paths, data)


def leftovers(directory: Path) -> list[str]:
    """Temp files and lock dirs a writer should not leave behind in ``directory``."""
    return sorted(p.name for p in directory.iterdir() if ".tmp." in p.name or p.suffix == ".lock")


@dataclass
class Woken:
    """What each :meth:`Release.wait` returned (True: woken by a release), in order."""

    results: list[bool] = field(default_factory=list)
    #: Set once a wait has begun.
    waiting: threading.Event = field(default_factory=threading.Event)
    #: How many waits have begun.
    began: int = 0


@pytest.fixture
def woken(monkeypatch: pytest.MonkeyPatch) -> Woken:
    """Every :meth:`Release.wait` of the test recorded."""
    return record_release_waits(monkeypatch)


def record_release_waits(monkeypatch: pytest.MonkeyPatch) -> Woken:
    """Record what every :meth:`Release.wait` returns from now on (until the test ends)."""
    seen = Woken()
    real = Release.wait

    def recording(self: Release, timeout: float) -> bool:
        seen.began += 1
        seen.waiting.set()
        answer = real(self, timeout)
        seen.results.append(answer)
        return answer

    monkeypatch.setattr(Release, "wait", recording)
    return seen
