"""Root conftest: shared fixture plugins and fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

pytest_plugins = ["tests.support.tmux"]

#: Generated tests draw the same examples on every run of ``make test``: CI fails on a
#: change, never on a draw (the fuzz test once found a lexer crash on a chance input).
#: ``make soak`` explores: fresh random examples each run (``EXOMONAD_HYPOTHESIS=explore``).
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("EXOMONAD_HYPOTHESIS", "repeatable"))


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project state dir (``$EXOMONAD_DIR``) for CLI tests of the policy commands."""
    path = tmp_path / ".exomonad"
    path.mkdir()
    monkeypatch.setenv("EXOMONAD_DIR", str(path))
    monkeypatch.setenv("EXOMONAD_MYPY_CACHE", str(tmp_path / "mypy-cache"))
    return path
