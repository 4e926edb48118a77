"""A push of ``HEAD`` (or with no refspec) is a push of the worker's own branch only while
its worktree has that branch checked out on disk (and, with no refspec, while the
repository's config gives it no upstream of another name).

Found trying the gate as a worker (linked worktrees, git 2.39), each call allowed and run
for real: ``git branch -m release`` (or ``git checkout -b release``) in the worktree, a
commit, then ``git push origin HEAD``, judged as a push of its own ``exo/w1`` (the
branch its identity names), fast-forwarded the remote's ``release`` to the worker's
commit; ``git push origin HEAD:release`` is asked. Now ``HEAD`` is that branch only
while the worktree's ``HEAD`` file says so; else the push's branch is unknown, asked.
The same line: ``git branch --mov release && ... && git push origin HEAD`` (git's prefix
of ``--move``, not read as one). And where the user's ``push.default`` is ``upstream``:
``git branch -u origin/main`` (allowed: tracking ``main`` is ordinary), a commit, then
``git push`` moved the remote's ``main``; a push without a refspec is now the worker's
own branch only while ``branch.exo/w1.merge`` names it (or nothing).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from exomonad.policy.decisions import Allow
from tests.policy.worker import bash, scratch_worktree
from tests.support.git import GIT_ENV, git


def _project(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The lead's checkout on ``main``, worker w1's worktree on ``exo/w1`` and a bare
    ``origin`` holding ``main`` and ``release``."""
    assert shutil.which("git"), "git is needed for this test"
    root, wt = scratch_worktree(tmp_path)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("lead\n")
    git(root, "add", "README.md")
    git(root, "commit", "-qm", "lead")
    git(root, "remote", "add", "origin", str(remote))
    git(root, "push", "-q", "origin", "main", "main:release")
    git(root, "worktree", "add", "-q", "-b", "exo/w1", str(wt))
    return root, wt, remote


def _run(command: str, cwd: Path) -> None:
    done = subprocess.run(["bash", "-c", command], cwd=cwd, timeout=60, capture_output=True,
                          text=True, env={**os.environ, **GIT_ENV}, check=False)  # fmt: skip
    assert done.returncode == 0, (command, done.stderr)


def _allowed(command: str, root: Path) -> bool:
    return isinstance(bash(command, root=str(root)), Allow)


def test_the_real_effect_a_renamed_head_pushed_moves_the_remotes_branch(tmp_path: Path) -> None:
    root, wt, remote = _project(tmp_path)
    before = git(remote, "rev-parse", "release")
    for command in ("git branch -m release", "git commit -q --allow-empty -m w1"):
        assert _allowed(command, root), command
        _run(command, wt)
    for command in ("git push origin HEAD", "git push -u origin HEAD", "git push"):
        assert not _allowed(command, root), command
    _run("git push -q origin HEAD", wt)
    assert git(remote, "rev-parse", "release") == git(wt, "rev-parse", "HEAD") != before


def test_a_push_of_head_on_its_own_branch_stays_allowed(tmp_path: Path) -> None:
    root, wt, _remote = _project(tmp_path)
    _run("git commit -q --allow-empty -m w1", wt)
    assert _allowed("git push origin HEAD", root)
    assert _allowed("git push -u origin HEAD", root)
    _run("git checkout -q --detach", wt)
    assert not _allowed("git push origin HEAD", root)  # detached: no branch to name
    assert _allowed("git checkout -q exo/w1", root)  # back on its own branch: ordinary
    _run("git checkout -q exo/w1", wt)
    assert _allowed("git push origin HEAD", root)
    _run("git checkout -q -b topic", wt)
    assert not _allowed("git push origin HEAD", root)  # topic: not its own branch
    assert _allowed("git push origin exo/w1", root)  # named: its own


def test_the_same_line_with_an_abbreviated_rename_or_an_upstream_set() -> None:
    for command in ("git branch --mov release && git push origin HEAD",
                    "git branch --mo release; git push",
                    "git branch -u origin/main && git push",
                    "git branch --set-up=origin/main && git push origin"):  # fmt: skip
        assert not isinstance(bash(command), Allow), command


def test_the_real_effect_an_upstream_of_another_name_takes_a_plain_push(tmp_path: Path) -> None:
    root, wt, remote = _project(tmp_path)
    git(root, "config", "push.default", "upstream")  # the user's choice
    git(root, "fetch", "-q", "origin")
    before = git(remote, "rev-parse", "main")
    for command in ("git branch -u origin/main", "git commit -q --allow-empty -m w1"):
        assert _allowed(command, root), command
        _run(command, wt)
    for command in ("git push", "git push origin", "git push -q"):
        assert not _allowed(command, root), command
    assert _allowed("git push origin HEAD", root)  # HEAD: the same name, whatever it tracks
    _run("git push -q", wt)
    assert git(remote, "rev-parse", "main") == git(wt, "rev-parse", "HEAD") != before


def test_a_plain_push_tracking_its_own_name_stays_allowed(tmp_path: Path) -> None:
    root, wt, _remote = _project(tmp_path)
    _run("git commit -q --allow-empty -m w1", wt)
    assert _allowed("git push -u origin exo/w1", root)
    _run("git push -q -u origin exo/w1", wt)
    for command in ("git push", "git push origin", "git pull --rebase"):
        assert _allowed(command, root), command
