"""What a worker's worktree shares with the lead's checkout besides branches: the stash
list, the reflogs, the unreachable objects that still hold dropped work.

Found probing as a worker (git 2.39): in the worker's worktree, ``git reflog expire
--expire=now --all`` emptied the lead's stash list (two entries of uncommitted work)
and ``git stash clear`` / ``git stash drop`` remove the lead's entries; ``git gc
--prune=now`` and ``git prune`` then delete what was left of them. All were allowed.
``git rebase <upstream> main`` checks ``main`` out first and rewrites it. Now each is
Unknown (escalated), while a worker's own stash, reflog reads and rebase of its own
branch stay allowed.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow
from tests.policy.worker import bash

DESTRUCTIVE = [
    "git stash clear",
    "git stash drop",
    "git stash drop stash@{1}",
    "git stash drop -q",
    "git reflog expire --expire=now --all",
    "git reflog expire --expire-unreachable=now refs/stash",
    "git reflog delete stash@{0}",
    "git -c gc.reflogExpire=now gc",
    "git gc --prune=now",
    "git gc --prune=all",
    "git prune",
    "git prune --expire=now",
    "git rebase origin/main main",
    "git rebase --onto HEAD~1 HEAD~2 main",
    "git rebase -s ours HEAD main",
    "git rebase --root main",
    "git pull --rebase origin main:main",
    "git notes remove HEAD",
    "git notes add -f -m x HEAD",
    "git notes prune",
    "git notes copy --force HEAD~1 HEAD",
]


@pytest.mark.parametrize("command", DESTRUCTIVE)
def test_a_worker_cannot_destroy_what_the_lead_shares(command: str) -> None:
    assert not isinstance(bash(command), Allow), command


ORDINARY = [
    "git stash",
    "git stash push -m wip",
    "git stash list",
    "git stash show -p",
    "git stash pop",
    "git stash apply",
    "git reflog",
    "git reflog show exo/w1",
    "git gc",
    "git rebase origin/main",
    "git rebase -i HEAD~3",
    "git rebase origin/main exo/w1",
    "git rebase --continue",
    "git rebase --root",
    "git notes add -m x HEAD",
    "git notes show HEAD",
]


@pytest.mark.parametrize("command", ORDINARY)
def test_a_workers_own_stash_reflog_and_rebase_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}  # fmt: skip
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          check=True, timeout=60)  # fmt: skip
    return done.stdout


def _repo(tmp_path: Path) -> Path:
    """A repository at ``tmp_path/p`` on ``main`` with one commit of ``f``."""
    root = tmp_path / "p"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / "f").write_text("a\n")
    _git(root, "add", "f")
    _git(root, "commit", "-qm", "a")
    return root


@pytest.mark.parametrize("command", ["reflog expire --expire=now --all", "stash clear"])
def test_the_real_effect_in_a_worktree_is_the_leads_stash_gone(
    tmp_path: Path, command: str
) -> None:
    """Run for real in a linked worktree: the lead's two stash entries are gone. The
    policy does not allow it."""
    root = _repo(tmp_path)
    for work in ("lead work\n", "more lead work\n"):
        (root / "f").write_text(work)
        _git(root, "stash", "-q")
    assert len(_git(root, "stash", "list").splitlines()) == 2
    _git(root, "worktree", "add", "-q", "-b", "exo/w1", ".worktrees/w1")
    _git(root / ".worktrees" / "w1", *command.split())
    assert _git(root, "stash", "list") == ""  # the lead's uncommitted work: gone
    assert not isinstance(bash(f"git {command}", root=str(root)), Allow)


OTHERS_REFS = [
    "git branch -m exo/w2 hijacked",
    "git branch -M exo/w2 x",
    "git tag main HEAD",
    "git tag origin/main",
    "git branch origin/main HEAD",
    "git branch HEAD",
    "git worktree lock ../w2",
    "git worktree unlock ../w2",
    "git worktree repair ../w2",
]
OWN_REFS = [
    "git branch -m exo/w1 exo/w1-old",
    "git branch -m newname",
    "git branch -m old new",
    "git tag v1.0",
    "git tag -a v1 -m msg",
    "git tag --contains main",
    "git tag -l",
    "git worktree repair",
    "git branch feature/x",
]


@pytest.mark.parametrize("command", OTHERS_REFS)
def test_another_workers_branch_and_names_that_shadow_a_ref_are_not_allowed(
    command: str,
) -> None:
    """Found probing (a third round): ``git branch -m exo/w2 x`` renamed another
    worker's branch under its worktree; ``git tag main HEAD`` made the lead's ``git
    reset --hard main`` take the worker's commit; ``git worktree lock ../w2`` blocked
    another worker's removal."""
    assert not isinstance(bash(command), Allow), command


@pytest.mark.parametrize("command", OWN_REFS)
def test_a_workers_own_branches_and_tags_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command


def test_the_real_effect_a_tag_named_main_is_what_main_means(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    lead = _git(root, "rev-parse", "main").strip()
    _git(root, "worktree", "add", "-q", "-b", "exo/w1", ".worktrees/w1")
    wt = root / ".worktrees" / "w1"
    (wt / "f").write_text("worker\n")
    _git(wt, "commit", "-qam", "worker")
    _git(wt, "tag", "main", "HEAD")
    assert _git(root, "rev-parse", "main").strip() != lead  # the lead's "main": the tag
    assert not isinstance(bash("git tag main HEAD", root=str(root)), Allow)
