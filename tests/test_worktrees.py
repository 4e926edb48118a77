"""The server's own git in a worker's worktree runs nothing the worker configured
(:class:`exomonad.worktrees.WorktreeManager`).

Found probing from inside the sandbox (a sixth round): a repository the worker made
inside its worktree and committed as a gitlink has a configuration entirely the
worker's. ``git status`` recurses into it, so a clean filter set there ran as the
server, outside the sandbox, when the worker was released (``state``, then ``git
worktree remove``). The same works without a sandbox: the nested repository's config
is a file in the worktree.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from exomonad.worktrees import WorktreeError, WorktreeManager
from tests.support.git import git, make_repo


def _nested_repo_with_a_filter(wt: Path, marker: Path) -> None:
    sub = wt / "sub"
    sub.mkdir()
    git(sub, "init", "-q")
    (sub / "f").write_text("a\n")
    git(sub, "add", "f")
    git(sub, "commit", "-qm", "s")
    git(sub, "config", "filter.x.clean", f"sh -c 'touch {marker}; cat'")
    (sub / ".gitattributes").write_text("* filter=x\n")
    git(wt, "add", "sub")
    git(wt, "commit", "-qm", "a nested repository")
    later = os.stat(sub / "f").st_mtime + 5  # git must read the file again: the filter
    os.utime(sub / "f", (later, later))


def test_a_nested_repositorys_filter_does_not_run_as_the_server(tmp_path: Path) -> None:
    project = make_repo(tmp_path / "project")
    manager = WorktreeManager(project)
    wt = manager.create("w1").path
    marker = tmp_path / "PWNED"
    _nested_repo_with_a_filter(wt, marker)
    subprocess.run(["git", "status", "--porcelain"], cwd=wt, capture_output=True, check=True)
    assert marker.exists()  # the harm: plain git status runs the worker's filter
    marker.unlink()
    later = os.stat(wt / "sub/f").st_mtime + 5
    os.utime(wt / "sub/f", (later, later))

    state = manager.state(wt)
    assert not marker.exists()
    # Not looked into, so not known clean: kept for a person, never removed blind.
    assert any("sub" in entry and "nested" in entry for entry in state.uncommitted)
    assert not state.removable
    removal = manager.remove("w1")
    assert not removal.removed
    assert not marker.exists()
    assert manager.remove("w1", force=True).removed  # a person's choice: gone, unread
    assert not marker.exists()
    assert not wt.exists()


def test_an_untracked_nested_repository_is_uncommitted_work(tmp_path: Path) -> None:
    project = make_repo(tmp_path / "project")
    manager = WorktreeManager(project)
    wt = manager.create("w1").path
    (wt / "other").mkdir()
    git(wt / "other", "init", "-q")
    (wt / "other/x").write_text("x\n")
    state = manager.state(wt)
    assert state.uncommitted == ("other/",)
    assert not state.removable


def test_a_branch_planted_as_a_symbolic_ref_to_main_is_refused(tmp_path: Path) -> None:
    """A sandboxed worker can write the workers' ref directory: ``exo/w3`` planted as
    ``ref: refs/heads/main`` made the next worker's commits move ``main`` (git checks it
    out as an ordinary branch)."""
    project = make_repo(tmp_path / "project")
    manager = WorktreeManager(project)
    manager.create("w1")
    main = git(project, "rev-parse", "main").strip()
    planted = project / ".git/refs/heads/exo/w3"
    planted.write_text("ref: refs/heads/main\n")
    plain = project / ".worktrees/plain"
    git(project, "worktree", "add", "-q", str(plain), "exo/w3")  # git itself takes it
    (plain / "x").write_text("x\n")
    git(plain, "add", "x")
    git(plain, "commit", "-qm", "lands on main")
    assert git(project, "rev-parse", "main").strip() != main  # the harm
    git(project, "worktree", "remove", "--force", str(plain))
    with pytest.raises(WorktreeError, match="symbolic ref to refs/heads/main"):
        manager.create("w3")
    assert not (project / ".worktrees/w3").exists()


def test_a_kept_worktree_whose_link_was_changed_is_not_reused(tmp_path: Path) -> None:
    """Found probing from inside the sandbox: a ``.git`` naming a made-up git dir whose
    ``config.worktree`` is a link to the user's ``~/.gitconfig``; respawning the worker
    reused the worktree, and the gate's ``git config --worktree`` wrote the user's file."""
    project = make_repo(tmp_path / "project")
    manager = WorktreeManager(project)
    wt = manager.create("w1").path
    fake = wt / ".x"
    fake.mkdir()
    (fake / "HEAD").write_text("ref: refs/heads/exo/w1\n")
    (fake / "commondir").write_text(f"{project / '.git'}\n")
    users = tmp_path / "gitconfig"
    users.write_text("[user]\n\tname = person\n")
    (fake / "config.worktree").symlink_to(users)
    (wt / ".git").write_text(f"gitdir: {fake}\n")
    with pytest.raises(WorktreeError, match="not a worktree of"):
        manager.create("w1")
    assert users.read_text() == "[user]\n\tname = person\n"
