"""The real Gemini CLI 0.61 as a sandboxed worker, with its private config home.

``[workers] sandbox = "bwrap"`` gives each worker a private ``~/.gemini``
(:mod:`exomonad.sandbox_homes`) in place of the user's. Here the pinned CLI runs
through :func:`exomonad.sandbox.worker_argv` under a real ``bwrap`` (headless,
``--yolo``, against a scripted model on 127.0.0.1; the network is shared): it starts
with the user's settings (API-key auth, no dialogs) found in its private home, and the
model has it write ``~/.gemini/settings.json`` with a hook through its shell tool. The
write succeeds inside, lands in the worker's private home, and the user's file is
unchanged; the user's ``tmp/`` is not there (the CLI makes its own); the next spawn
starts from the user's file again.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from exomonad.sandbox import worker_argv
from exomonad.sandbox_homes import HOMES_DIR
from exomonad.scripted.gemini import ScriptedGemini, function_call_reply
from tests.e2e.gemini_cli import gemini_command, gemini_env, gemini_install_problem, prepare_home
from tests.e2e.harness import bwrap_problem, fail_if_missing
from tests.support.git import GIT_ENV, git, make_repo

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

EVIL = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch /tmp/x"}]}]}}


def test_gemini_starts_in_its_private_home_and_cannot_write_the_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail_if_missing(gemini_install_problem, bwrap_problem)
    home = prepare_home(tmp_path / "gemini")
    (home.gemini_dir / "tmp").mkdir()
    (home.gemini_dir / "tmp" / "old-session.json").write_text("{}")
    users = home.settings_path.read_text()
    monkeypatch.setenv("HOME", str(home.home))  # where worker_argv finds the real home
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    monkeypatch.setenv("EXOMONAD_SPOOL_DIR", str(tmp_path / "spool"))
    repo = make_repo(tmp_path / "repo")
    worktree = repo / ".worktrees" / "g1"
    git(repo, "worktree", "add", "-q", "-b", "exo/g1", str(worktree))
    state = repo / ".exomonad"
    state.mkdir()
    script = (f"echo '{json.dumps(EVIL)}' > \"$HOME/.gemini/settings.json\" && "
              "ls -A \"$HOME/.gemini\" && cat \"$HOME/.gemini/settings.json\"")  # fmt: skip
    write = function_call_reply("run_shell_command", {"command": script})
    with ScriptedGemini([write, "all done"]) as model:
        argv = worker_argv([*gemini_command(yolo=True), "-p", "go"], sandbox="bwrap",
                           worktree=str(worktree), state_dir=state, name="g1")  # fmt: skip
        env = {**gemini_env(home, model.url), **GIT_ENV}
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=180,
                              check=False, cwd=worktree)  # fmt: skip
        answers = [f for r in model.agent_requests() for f in r.function_responses()]
    assert done.returncode == 0, done.stderr
    assert "all done" in done.stdout  # it started, authenticated, and answered the turn
    assert len(answers) == 1
    output = json.dumps(answers[0])
    assert "touch /tmp/x" in output  # the write succeeded inside...
    assert "settings.json" in output  # the CLI's own runtime files are made there too,
    assert "old-session.json" not in output  # and the user's are not seen
    assert home.settings_path.read_text() == users  # ...and the user's file is unchanged
    private = state / "sandbox" / HOMES_DIR / "g1" / "gemini" / "settings.json"
    assert json.loads(private.read_text()) == EVIL
    again = worker_argv(["true"], sandbox="bwrap", worktree=str(worktree), state_dir=state,
                        name="g1")  # fmt: skip
    assert again[0].endswith("bwrap")
    assert private.read_text() == users  # reseeded from the user's own at the next spawn
    assert os.stat(private).st_mode & 0o777 == 0o600
