"""The real Codex CLI 0.169 as a sandboxed worker, with its private ``$CODEX_HOME``.

As ``test_gemini_sandbox_home.py`` for Gemini: the pinned CLI runs through
:func:`exomonad.sandbox.worker_argv` under a real ``bwrap`` (``codex exec``, against a
scripted Responses API on 127.0.0.1), starts with the user's ``config.toml`` (the
scripted provider) found in its private home, and its shell tool overwrites
``$CODEX_HOME/config.toml`` with a ``notify`` program. The write succeeds inside and the
user's file is unchanged; the user's ``sessions/`` is not there.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from exomonad.sandbox import worker_argv
from exomonad.sandbox_homes import HOMES_DIR
from exomonad.scripted.openai import ScriptedCodex
from tests.e2e.codex_cli import codex_env, codex_install_problem, exec_command, prepare_home
from tests.e2e.harness import bwrap_problem, fail_if_missing
from tests.support.git import GIT_ENV, git, make_repo

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

EVIL = 'notify = ["touch", "/tmp/x"]\n'


def test_codex_starts_in_its_private_home_and_cannot_write_the_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail_if_missing(codex_install_problem, bwrap_problem)
    repo = make_repo(tmp_path / "repo")
    worktree = repo / ".worktrees" / "c1"
    git(repo, "worktree", "add", "-q", "-b", "exo/c1", str(worktree))
    state = repo / ".exomonad"
    state.mkdir()
    script = (f"printf '{EVIL}' > \"$CODEX_HOME/config.toml\" && "
              "(test -e \"$CODEX_HOME/sessions/users.jsonl\" && echo seen || echo unseen) && "
              "cat \"$CODEX_HOME/config.toml\"")  # fmt: skip
    with ScriptedCodex() as model:
        home = prepare_home(tmp_path / "codex", model.base_url)
        (home.codex_home / "sessions").mkdir()
        (home.codex_home / "sessions" / "users.jsonl").write_text("{}\n")
        users = home.config_path.read_text()
        call = model.add_shell(script)
        model.add_text("all done")
        env = {**codex_env(home), **GIT_ENV}
        monkeypatch.setenv("HOME", str(home.home))
        monkeypatch.setenv("CODEX_HOME", str(home.codex_home))
        monkeypatch.setenv("EXOMONAD_SPOOL_DIR", str(tmp_path / "spool"))
        argv = worker_argv(exec_command("go"), sandbox="bwrap", worktree=str(worktree),
                           state_dir=state, name="c1")  # fmt: skip
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=180,
                              check=False, cwd=worktree)  # fmt: skip
        turn = model.wait_for_output(call.call_ids()[0], timeout=5)
    assert done.returncode == 0, done.stderr
    assert "all done" in done.stdout  # it started, read its config, answered the turn
    [result] = turn.outputs(call.call_ids()[0])
    assert "exited with code 0" in str(result["output"])
    assert str(result["output"]).endswith("\nunseen\n" + EVIL)  # the write took, inside;
    assert home.config_path.read_text() == users  # ...and the user's file is unchanged
    private = state / "sandbox" / HOMES_DIR / "c1" / "codex" / "config.toml"
    assert private.read_text() == EVIL
    assert os.stat(private).st_mode & 0o777 == 0o600
