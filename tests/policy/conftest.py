"""Fixtures for policy tests: policy sources, a writer that always bumps the mtime, a
live server for trying the gate as a worker."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.policy.test_state_tree_live import QUICK_ESCALATIONS, Live, served
from tests.support.tmux import TmuxServer

PolicyWriter = Callable[[str], Path]


def policy_source(name: str, *, allow: bool = True, extra: str = "") -> str:
    """A tiny valid policy: a rule that allows (or denies) everything, naming itself."""
    verdict = "Allow" if allow else "Deny"
    expect = "allow" if allow else "deny"
    return f'''from __future__ import annotations

from exomonad.policy import Action, Allow, Context, Decision, Deny, Policy, Role


def rule(action: Action, ctx: Context) -> Decision | None:
    del action, ctx
    return {verdict}("{name}")


policy = Policy(roles={{"dev": Role()}}, rules=[rule], name="{name}")
examples = [("ls", "dev", "{expect}")]
{extra}
'''


def sha(text: str) -> str:
    """sha256 hex of ``text``."""
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    """An empty ``.exomonad`` dir inside a project dir."""
    path = tmp_path / "project" / ".exomonad"
    path.mkdir(parents=True)
    return path


@pytest.fixture
def write_policy(state_dir: Path) -> PolicyWriter:
    """Write ``.exomonad/policy.py`` and move its mtime forward by a whole second, so
    even a filesystem with coarse timestamps sees a change."""
    target = state_dir / "policy.py"
    clock = [1_700_000_000]

    def write(text: str) -> Path:
        target.write_text(text)
        clock[0] += 1
        os.utime(target, ns=(clock[0] * 10**9, clock[0] * 10**9))
        return target

    return write


@pytest.fixture(autouse=True)
def _no_state_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EXOMONAD_DIR", raising=False)


@pytest.fixture(scope="session")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One mypy cache for the whole session (the first run is the slow one)."""
    return tmp_path_factory.mktemp("mypy-cache")


@pytest.fixture
def live(tmp_path: Path, tmux_server: TmuxServer) -> Iterator[Live]:
    """The live server, escalations answered at once (no one approves them here)."""
    with served(tmp_path, tmux_server, QUICK_ESCALATIONS) as running:
        yield running
