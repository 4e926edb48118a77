"""Root conftest: shared fixture plugins and fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["tests.support.tmux"]


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project state dir (``$EXOMONAD_DIR``) for CLI tests of the policy commands."""
    path = tmp_path / ".exomonad"
    path.mkdir()
    monkeypatch.setenv("EXOMONAD_DIR", str(path))
    monkeypatch.setenv("EXOMONAD_MYPY_CACHE", str(tmp_path / "mypy-cache"))
    return path
