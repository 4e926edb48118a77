"""Fixtures for pane tests: both typing methods and the zellij stand-in.

The tmux server and reader fixtures are shared: see ``tests/support/tmux.py``.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from exomonad.panes import ZellijBackend
from exomonad.panes.tmux import TypingMethod

ZELLIJ_STANDIN = Path(__file__).parents[1] / "bin" / "zellij"


@pytest.fixture(params=["paste-buffer", "send-keys"])
def method(request: pytest.FixtureRequest) -> TypingMethod:
    """Both tmux typing methods."""
    value: TypingMethod = request.param
    return value


@dataclass
class ZellijStandIn:
    """The recording ``tests/bin/zellij`` and its log / state files."""

    executable: Path
    log: Path
    state: Path

    def calls(self) -> list[list[str]]:
        """argv of every invocation so far (without the program name)."""
        if not self.log.exists():
            return []
        return [json.loads(line)["argv"] for line in self.log.read_text("utf-8").splitlines()]

    def clear(self) -> None:
        """Forget the recorded calls."""
        self.log.unlink(missing_ok=True)

    def load(self) -> dict[str, Any]:
        """The simulated session state."""
        state: dict[str, Any] = json.loads(self.state.read_text("utf-8"))
        return state

    def save(self, state: dict[str, Any]) -> None:
        """Replace the simulated session state."""
        self.state.write_text(json.dumps(state), "utf-8")

    def backend(self, **kw: Any) -> ZellijBackend:
        """A backend using the stand-in, with private lock and spool dirs."""
        kw.setdefault("executable", str(self.executable))
        kw.setdefault("lock_dir", self.log.parent / "locks")
        kw.setdefault("spool_dir", self.log.parent / "spool")
        kw.setdefault("enter_delay", 0.0)
        return ZellijBackend(**kw)


@pytest.fixture
def zellij(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ZellijStandIn:
    """The zellij stand-in with a fresh session: one live pane, ``terminal_1``."""
    assert os.access(ZELLIJ_STANDIN, os.X_OK), f"{ZELLIJ_STANDIN} must be executable"
    log, state = tmp_path / "zellij.jsonl", tmp_path / "zellij-state.json"
    monkeypatch.setenv("EXOMONAD_ZELLIJ_LOG", str(log))
    monkeypatch.setenv("EXOMONAD_ZELLIJ_STATE", str(state))
    monkeypatch.delenv("ZELLIJ_SESSION_NAME", raising=False)
    # The stand-in's `#!/usr/bin/env python3` should find this interpreter first (a
    # pyenv shim on PATH costs ~0.4 s per call).
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    standin = ZellijStandIn(ZELLIJ_STANDIN, log, state)
    standin.save(
        {
            "panes": {"1": {"exited": False, "exit_status": None, "screen": "$ ", "name": None}},
            "next": 2,
            "ignore_enter": False,
        }
    )
    return standin
