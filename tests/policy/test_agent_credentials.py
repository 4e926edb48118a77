"""The coding agents' own sign-ins are credential stores, as ``~/.ssh`` is.

Found probing as a worker: ``cat ~/.claude/.credentials.json`` (Claude Code's OAuth
tokens), ``cat ~/.codex/auth.json`` (Codex's API key or sign-in) and ``cat
~/.gemini/oauth_creds.json`` were allowed, for the worker and the lead alike, while
network access through package managers needs no question. Each is refused now; the
agents' settings stay readable.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Deny
from tests.policy.test_state_tree_live import Live, served
from tests.policy.worker import bash
from tests.support.tmux import TmuxServer

SIGN_INS = [
    "~/.claude/.credentials.json",
    "~/.codex/auth.json",
    "~/.codex/.credentials.json",
    "~/.gemini/oauth_creds.json",
    "~/.gemini/gemini-credentials.json",
    "~/.gemini/mcp-oauth-tokens.json",
    "~/.gemini/a2a-oauth-tokens.json",
]


@pytest.mark.parametrize("role", ["worker", "tl"])
@pytest.mark.parametrize("path", SIGN_INS)
def test_reading_an_agents_sign_in_is_refused(path: str, role: str) -> None:
    for command in (f"cat {path}", f"cat <{path}", f"cp {path} x",
                    f"cat {path.replace('~', '$HOME')}"):  # fmt: skip
        verdict = bash(command, role=role)
        assert isinstance(verdict, Deny), (command, verdict)
        assert "reading credentials" in verdict.reason


@pytest.mark.parametrize(
    "command", ["cat ~/.codex/config.toml", "cat ~/.gemini/settings.json", "ls ~/.codex"]
)
def test_the_agents_settings_stay_readable(command: str) -> None:
    assert isinstance(bash(command), Allow), bash(command)


@pytest.fixture
def live_home(tmp_path: Path, tmux_server: TmuxServer) -> Iterator[tuple[Live, Path]]:
    """A live server whose ``$HOME`` holds a Codex sign-in."""
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "auth.json").write_text('{"OPENAI_API_KEY": "sk-exo-test-key"}\n')
    with served(tmp_path, tmux_server, home=home) as running:
        yield running, home


def test_a_worker_cannot_read_codexs_sign_in(live_home: tuple[Live, Path]) -> None:
    """The real effect first: from the worktree, with the home the worker shares, the
    command prints the key. Then the real hook client refuses it."""
    live, home = live_home
    token, worktree = live.spawn_worker()
    command = "cat ~/.codex/auth.json"
    read = subprocess.run(["bash", "-c", command], cwd=worktree, env={**live.env},
                          capture_output=True, text=True, timeout=30, check=False)  # fmt: skip
    assert "sk-exo-test-key" in read.stdout, read.stderr
    answer = live.hook(command, token=token, cwd=worktree)
    assert answer["permissionDecision"] == "deny", answer
    assert f"{home}/.codex/auth.json" in answer["permissionDecisionReason"]
