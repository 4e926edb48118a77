"""Helpers for tests that run a real ``exomonad serve``: wait for it, and mint a worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from exomonad.client import ServerClient
from exomonad.errors import ExomonadError
from exomonad.teams import TeamPaths, create_team
from exomonad.util.waiting import retry_until
from tests.support.git import make_repo


def answers(client: ServerClient) -> bool:
    """Whether the server answers ``/health``."""
    try:
        client.health()
    except ExomonadError:
        return False
    return True


def worker_token(state: Path, team: str = "proj", name: str = "w1",
                 runtime: str = "gemini", pid: int | None = None) -> str:  # fmt: skip
    """Wait until the server of ``state`` answers, let the lead create ``team`` (its
    ``TeamCreate`` hook) and return a worker token for ``name``; with ``pid``, issued to
    that process as its ``exomonad teammate`` (which alone may release it)."""
    retry_until((state / "server.sock").exists, timeout=30, message="server did not start")
    lead = ServerClient.as_lead(state)
    retry_until(lambda: answers(lead), timeout=30, message="server did not answer")
    lead.call("POST", "/hook/post-tool-use?runtime=claude",
              {"session_id": "lead-1", "tool_name": "TeamCreate",
               "tool_input": {"team_name": team}})  # fmt: skip
    ask: dict[str, object] = {"name": name, "team": team, "runtime": runtime}
    if pid is not None:
        ask["pid"] = pid
    token: str = lead.call("POST", "/teammate/token", ask)["token"]
    return token


@dataclass
class ServedProject:
    """A scratch git project with team ``proj`` and a real ``exomonad serve`` on it."""

    state: Path
    env: dict[str, str]  # the server's (no token)
    proc: subprocess.Popen[str]
    worker: str  # a worker token for ``w1`` (gemini)


@contextmanager
def served_project(tmp: Path) -> Iterator[ServedProject]:
    """Run ``exomonad serve`` on a fresh project under ``tmp``; on leaving, stop it and
    assert it exited cleanly (code 0)."""
    root, state = tmp / "claude", tmp / "proj" / ".exomonad"
    make_repo(tmp / "proj")
    state.mkdir(parents=True)
    create_team(TeamPaths("proj", root))
    env = {k: v for k, v in os.environ.items() if k not in ("EXOMONAD_TOKEN", "TMUX", "TMUX_PANE")}
    env.update(CLAUDE_CONFIG_DIR=str(root), EXOMONAD_DIR=str(state),
               EXOMONAD_LOCK_DIR=str(tmp / "locks"),
               EXOMONAD_SPOOL_DIR=str(tmp / "spool"))  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-m", "exomonad", "serve"], env=env,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        yield ServedProject(state, env, proc, worker_token(state))
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
