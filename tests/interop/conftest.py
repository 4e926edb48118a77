"""Fixtures for the Node ``proper-lockfile`` interop tests.

Interop is never skipped: without ``node`` or ``tests/interop/node_modules`` the tests
fail and say to run ``make setup``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from exomonad.teams import TeamPaths, create_team
from tests.interop.peers import Peer, SetupMissing, node_binary


@pytest.fixture(scope="session")
def node() -> str:
    """The ``node`` binary, with proper-lockfile 4.1.2 installed; fails loudly if absent."""
    try:
        return node_binary()
    except SetupMissing as exc:
        pytest.fail(f"Node interop peers are not installed: {exc}", pytrace=False)


@pytest.fixture
def team(tmp_path: Path, node: str) -> TeamPaths:
    """A fresh team (2.1.112-style config) under a temporary config root."""
    paths = TeamPaths("interop", tmp_path / "claude")
    create_team(paths)
    return paths


@pytest.fixture
def inbox(team: TeamPaths) -> Path:
    """The lead's inbox path (the file is not created)."""
    return team.inbox("team-lead")


@pytest.fixture
def reap() -> Iterator[list[Peer]]:
    """Peers appended here are killed at teardown if a test left them running."""
    peers: list[Peer] = []
    yield peers
    for p in peers:
        p.kill()
