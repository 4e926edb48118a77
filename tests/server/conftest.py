"""Server fixtures: Services over a temp project with a fake pane backend and a team."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from exomonad.panes import FakePaneBackend
from exomonad.server.config import PolicyConfig, ProjectConfig, WorkersConfig
from exomonad.server.identity import Identity
from exomonad.server.services import Services
from exomonad.teams import TeamPaths, create_team, get_dialect
from tests.support.git import make_repo


@pytest.fixture
def fake() -> FakePaneBackend:
    return FakePaneBackend(echo_timeout=0, submit_timeout=0.01)


@pytest.fixture
def svc(tmp_path: Path, fake: FakePaneBackend) -> Iterator[Services]:
    root = tmp_path / "claude"
    make_repo(tmp_path / "project")  # workers get worktrees of a real repository
    create_team(TeamPaths("proj", root))
    config = ProjectConfig(policy=PolicyConfig(approval_timeout=1.0, popup=False),
                           workers=WorkersConfig(ready_marker=""))  # fmt: skip
    s = Services(tmp_path / "project" / ".exomonad", root=root, backend=fake,
                 dialect=get_dialect("2.1.112"), config=config)  # fmt: skip
    s.registry.set_current("proj")
    yield s
    s.close()


@pytest.fixture
def lead(svc: Services) -> Identity:
    found = svc.identify(svc.tokens.lead_path.read_text().strip())
    assert found.role == "tl"
    return found
