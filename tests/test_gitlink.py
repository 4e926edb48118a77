"""A worker's worktree whose link to the repository was changed: its hooks are refused
and the server runs no git there (:mod:`exomonad.gitlink`).

Found probing as a worker (a third round), each measured here for real:

* ``.git`` replaced (``gunzip -f .git.gz``, allowed: the policy saw a write of
  ``.git.gz``) by ``gitdir: <project>/.git``: the worker's next ``git commit`` moved the
  lead's ``main`` and replaced the lead's index.
* from inside the sandbox, ``.git`` naming a made-up git dir whose ``config.worktree``
  sets ``core.fsmonitor``: the server's own ``git status`` (removing the worker, ``worker
  list``) ran the worker's command as the server, outside the sandbox.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from exomonad.gitlink import link_fault
from exomonad.worktrees import WorktreeManager
from tests.support.git import git, make_repo


def _project(tmp_path: Path) -> tuple[Path, WorktreeManager, Path]:
    project = make_repo(tmp_path / "project")
    manager = WorktreeManager(project)
    return project, manager, manager.create("w1").path


def test_an_intact_worktree_has_no_fault(tmp_path: Path) -> None:
    project, manager, wt = _project(tmp_path)
    assert manager.fault(wt) is None  # the push gate's core.hooksPath is allowed
    assert link_fault(wt, project / ".git") is None
    state = manager.state(wt)
    assert (state.tampered, state.branch) == (None, "exo/w1")


def test_a_git_file_naming_the_leads_repository_moves_main_and_is_refused(
    tmp_path: Path,
) -> None:
    project, manager, wt = _project(tmp_path)
    lead_main = git(project, "rev-parse", "main").strip()
    (wt / ".git").write_text(f"gitdir: {project / '.git'}\n")
    (wt / "pwn.txt").write_text("from the worker\n")
    git(wt, "add", "-A")
    git(wt, "commit", "-qm", "pwn")
    assert git(project, "rev-parse", "main").strip() != lead_main  # the real harm
    fault = manager.fault(wt)
    assert fault is not None
    assert "not a worktree of" in fault
    state = manager.state(wt)
    assert state.tampered == fault
    assert not state.removable
    assert "git link was changed" in state.why_kept()


def test_the_servers_git_does_not_run_a_workers_fsmonitor(tmp_path: Path) -> None:
    """The made-up git dir of the sandbox escape: plain ``git status`` there runs the
    fsmonitor (the harm); the server's :meth:`state` does not run git at all."""
    project, manager, wt = _project(tmp_path)
    real = Path((wt / ".git").read_text().split(": ", 1)[1].strip())
    fake = wt / ".evil"
    shutil.copytree(real, fake)
    marker = tmp_path / "PWNED"
    (fake / "config.worktree").write_text(f'[core]\n\tfsmonitor = "touch {marker}; false"\n')
    (fake / "commondir").write_text(f"{project / '.git'}\n")
    (wt / ".git").write_text(f"gitdir: {fake}\n")
    git(wt, "status", "--porcelain")
    assert marker.exists()  # git in that worktree runs the worker's program
    marker.unlink()
    state = manager.state(wt)
    assert state.tampered is not None
    assert not marker.exists()


def test_a_config_worktree_with_a_program_in_the_real_git_dir_is_a_fault(
    tmp_path: Path,
) -> None:
    _, manager, wt = _project(tmp_path)
    git(wt, "config", "--worktree", "core.fsmonitor", "touch x")
    fault = manager.fault(wt)
    assert fault is not None
    assert "core.fsmonitor" in fault
    assert manager.fault(wt, config=False) is None  # the hook's cheap check skips it
