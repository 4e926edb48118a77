"""Scratch git repositories for tests: a project with one commit, and a bare remote."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["GIT_ENV", "git", "make_repo"]

#: Identity and config isolation for every git the tests run (no user config read).
GIT_ENV = {
    "GIT_AUTHOR_NAME": "exo-test", "GIT_AUTHOR_EMAIL": "exo@test.invalid",
    "GIT_COMMITTER_NAME": "exo-test", "GIT_COMMITTER_EMAIL": "exo@test.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
}  # fmt: skip


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd``; its stdout (raises on failure, with git's message). This
    install's bin dir is first on PATH, as after `pip install`: a worker's worktree has
    ExoMonad's pre-push gate, which runs `exomonad` from PATH."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    done = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV, "PATH": path}, check=False)  # fmt: skip
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def make_repo(path: Path, *, remote: Path | None = None) -> Path:
    """A repository at ``path`` on ``main`` with one commit (and ``origin`` = a new bare
    repository at ``remote``, with ``main`` pushed, when given)."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("scratch project\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "initial")
    if remote is not None:
        git(remote.parent, "init", "-q", "--bare", "-b", "main", str(remote))
        git(path, "remote", "add", "origin", str(remote))
        git(path, "push", "-q", "origin", "main")
    return path
