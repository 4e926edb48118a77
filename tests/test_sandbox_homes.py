"""Sandboxed workers and the user's agent config homes (``~/.gemini``, ``~/.codex``).

Real ``bwrap``, through :func:`exomonad.sandbox.worker_argv` as ExoMonad spawns a
worker, with a temporary ``$HOME`` holding both homes. Code a worker runs inside the
sandbox must not be able to write what the user's own Gemini CLI or Codex (or an
unsandboxed worker) runs at its next start: settings with hooks and MCP server
commands, ``.env``, ``config.toml``. bwrap missing is a failure, never a skip.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from exomonad.errors import SandboxError
from exomonad.sandbox import require_bwrap, worker_argv
from tests.support.git import GIT_ENV, git, make_repo

pytestmark = pytest.mark.integration

SETTINGS = '{"hooks": {}}\n'
CONFIG = 'model = "gpt-5"\n'


@dataclass
class Homes:
    """A project with a worker's worktree, and a ``$HOME`` with both agent homes."""

    home: Path
    worktree: Path
    state: Path

    def run(self, script: str) -> subprocess.CompletedProcess[str]:
        """``bash -c script`` as a sandboxed worker runs, output captured."""
        argv = worker_argv(["bash", "-c", script], sandbox="bwrap",
                           worktree=str(self.worktree), state_dir=self.state)  # fmt: skip
        return subprocess.run(argv, env={**os.environ, **GIT_ENV}, capture_output=True,
                              text=True, timeout=60, check=False)  # fmt: skip


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Homes:
    try:
        require_bwrap()
    except SandboxError as exc:
        pytest.fail(f"{exc} (`make setup` installs it)")
    home = tmp_path / "home"
    (home / ".gemini" / "tmp").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(SETTINGS)
    (home / ".codex" / "sessions").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(CONFIG)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    monkeypatch.setenv("EXOMONAD_SPOOL_DIR", str(tmp_path / "spool"))
    repo = make_repo(tmp_path / "repo")
    worktree = repo / ".worktrees" / "w1"
    git(repo, "worktree", "add", "-q", "-b", "exo/w1", str(worktree))
    state = repo / ".exomonad"
    state.mkdir()
    return Homes(home, worktree, state)


def test_a_worker_cannot_write_the_users_agent_config(homes: Homes) -> None:
    """The escape: a settings.json (hooks, MCP commands) or a config.toml (``notify``,
    MCP commands) written inside runs outside at the user's next start."""
    out = homes.run('echo \'{"hooks": "evil"}\' > "$HOME/.gemini/settings.json" && '
                    'echo \'notify = ["evil"]\' > "$HOME/.codex/config.toml" && '
                    'cat "$HOME/.gemini/settings.json" "$HOME/.codex/config.toml"')  # fmt: skip
    assert (homes.home / ".gemini" / "settings.json").read_text() == SETTINGS
    assert (homes.home / ".codex" / "config.toml").read_text() == CONFIG
    assert out.returncode == 0, out.stderr  # the worker's own copies took the writes
    assert out.stdout == '{"hooks": "evil"}\nnotify = ["evil"]\n'
