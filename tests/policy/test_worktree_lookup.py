"""What a worker's ``git worktree`` and ``git notes`` reach of what its worktree shares
with the lead's checkout and the other workers' (a round on linked worktrees, git 2.39),
each allowed and run for real in a scratch project first:

- git looks a ``git worktree lock/unlock/move/remove`` argument up by the ending of each
  registered worktree's path before it reads it as a path: from inside w1, ``git
  worktree remove --force w2`` removed worker w2's worktree and ``git worktree move w2
  moved`` moved it into w1's (judged as acting on ``w1/w2``);
- ``cp -r ../w2 fake`` (a copy of w2's ``.git`` file), ``git worktree repair fake`` (w2's
  ``gitdir`` link rewritten to name ``fake``) and ``git worktree remove -f fake`` deleted
  w2's git dir, its index and ``HEAD`` with it;
- ``git notes edit -m y main`` overwrote the lead's note on ``main``, as a forced ``git
  notes add`` (refused) does.

Now each is asked; a worker's own nested worktree, ``git notes append`` and ``add`` of a
new note stay allowed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow
from tests.policy.worker import bash, scratch_worktree
from tests.support.git import GIT_ENV, git

NOT_ALLOWED = [
    "git worktree remove --force w*",  # `w2` made in the worktree: git looks `w2` up
    "git worktree lock w?",
    "git worktree repair fake",
    "git worktree repair -- fake",
    "git worktree repair . fake",
    "git notes edit -m y main",
    "git notes edit main",
    "git notes --ref=commits edit -F msg main",
]

ORDINARY = [
    "git worktree repair",  # the worktree's own link, its `.git` judged by git_home
    "git worktree list",
    "git worktree add sub",
    "git worktree lock sub",
    "git worktree remove sub",
    "git worktree prune",
    "git notes add -m x HEAD",
    "git notes append -m more HEAD",
    "git notes show main",
]


@pytest.mark.parametrize("command", NOT_ALLOWED)
def test_shared_worktree_links_and_notes_are_not_rewritten(command: str) -> None:
    decision = bash(command)
    assert not isinstance(decision, Allow), (command, decision)


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_worktree_and_notes_work_keeps_its_verdict(command: str) -> None:
    decision = bash(command)
    assert isinstance(decision, Allow), (command, decision)


def _project(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The lead's checkout ``tmp_path/p`` on ``main``, worker w1's linked worktree and
    worker w2's, w2 with a file staged: laid out as the policy tests' ``/p``."""
    assert shutil.which("git"), "git is needed for this test"
    root, wt = scratch_worktree(tmp_path)
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("lead\n")
    git(root, "add", "README.md")
    git(root, "commit", "-qm", "lead")
    git(root, "worktree", "add", "-q", "-b", "exo/w1", str(wt))
    w2 = root / ".worktrees" / "w2"
    git(root, "worktree", "add", "-q", "-b", "exo/w2", str(w2))
    (w2 / "work.txt").write_text("w2's staged work\n")
    git(w2, "add", "work.txt")
    return root, wt, w2


def _run(command: str, cwd: Path) -> None:
    done = subprocess.run(["bash", "-c", command], cwd=cwd, timeout=60, capture_output=True,
                          text=True, env={**os.environ, **GIT_ENV}, check=False)  # fmt: skip
    assert done.returncode == 0, (command, done.stderr)


def _judged(command: str, root: Path) -> None:
    decision = bash(command, root=str(root))
    assert not isinstance(decision, Allow), (command, decision)


@pytest.mark.parametrize(
    "command",
    ["git worktree remove --force w2", "git worktree remove -f .worktrees/w2",
     "git worktree remove -f w*"],  # with a directory w2 in w1: bash gives git `w2`
)  # fmt: skip
def test_the_real_effect_a_worktree_named_by_its_ending_is_another_workers(
    tmp_path: Path, command: str
) -> None:
    root, wt, w2 = _project(tmp_path)
    (wt / "w2").mkdir()
    _judged(command, root)  # judged first: once run, w2 is gone and the name finds nothing
    _judged("git worktree move w2 moved", root)
    _judged("git worktree lock w2", root)
    _run(command, wt)
    assert not w2.exists()  # worker w2's checkout, its staged work with it
    assert not (root / ".git" / "worktrees" / "w2").exists()


def test_the_real_effect_a_repaired_link_lets_a_worker_remove_another_workers_git_dir(
    tmp_path: Path,
) -> None:
    root, wt, w2 = _project(tmp_path)
    _run("cp -r ../w2 fake", wt)
    assert isinstance(bash("cp -r ../w2 fake", root=str(root)), Allow)  # a copy: its own
    _judged("git worktree repair fake", root)
    _run("git worktree repair fake", wt)
    assert isinstance(bash("git worktree remove -f fake", root=str(root)), Allow)  # `fake`
    _run("git worktree remove -f fake", wt)
    assert not (root / ".git" / "worktrees" / "w2").exists()  # w2's index and HEAD
    broken = subprocess.run(["git", "-C", str(w2), "status"], capture_output=True,
                            check=False)  # fmt: skip
    assert broken.returncode != 0  # w2's checkout is no repository any more


def test_a_workers_own_nested_worktree_is_its_own(tmp_path: Path) -> None:
    root, wt, _w2 = _project(tmp_path)
    _run("git worktree add -q sub", wt)
    for command in ("git worktree lock sub", "git worktree remove sub"):
        assert isinstance(bash(command, root=str(root)), Allow), command


def test_the_real_effect_notes_edit_replaces_the_leads_note(tmp_path: Path) -> None:
    root, wt, _w2 = _project(tmp_path)
    git(root, "notes", "add", "-m", "the lead's note", "main")
    command = "git notes edit -m overwritten main"
    _run(command, wt)
    assert git(root, "notes", "show", "main") == "overwritten\n"
    _judged(command, root)
