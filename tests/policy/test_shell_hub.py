"""``hub`` is git for git's commands, and the forge's for its own (found probing: ``hub
push --no-verify origin HEAD:main`` was allowed and moved ``main`` past the pre-push
gate)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Deny, Escalate
from tests.policy.test_state_tree_live import Live
from tests.policy.worker import bash
from tests.support.git import GIT_ENV, git

ASKED = [
    ("hub push --no-verify origin HEAD:main", "git push origin main"),
    ("hub -C . push origin HEAD:main", "git push origin main"),
    ("hub pull-request -m x", "create PR"),
    ("hub api -X PUT repos/o/r/pulls/1/merge", "hub api -X PUT"),
    ("hub api repos/o/r/git/refs/heads/main -F sha=abc", "hub api"),
    ("hub sync", "hub sync"),
    ("hub fork", "hub fork"),
    ("hub delete o/r", "hub delete"),
    ("hub gist create notes.txt", "hub gist"),
    ("hub release create v1", "deploy: hub release create"),
    ("hub checkout main", "git checkout main"),
    ("gh repo sync", "gh repo sync"),
]


@pytest.mark.parametrize(("command", "asked"), ASKED)
def test_hubs_pushes_and_forge_changes_are_asked(command: str, asked: str) -> None:
    verdict = bash(command)
    assert isinstance(verdict, Escalate), verdict
    assert asked in verdict.reason, verdict.reason


@pytest.mark.parametrize(
    "command", ["hub push origin HEAD", "hub status", "hub commit -m x", "hub pr list",
                "hub ci-status", "hub api repos/o/r", "hub browse"],
)  # fmt: skip
def test_hubs_reads_and_the_workers_own_branch_are_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), bash(command)


def test_a_force_push_to_main_through_hub_is_refused() -> None:
    verdict = bash("hub push -f origin HEAD:main")
    assert isinstance(verdict, Deny), verdict


def test_a_worker_cannot_push_to_main_through_hub(live: Live, tmp_path: Path) -> None:
    """The real hook client does not allow it; run anyway, hub really moves the bare
    remote's ``main`` past the pre-push gate: what the verdict stands between."""
    hub = shutil.which("hub")
    assert hub is not None, "hub is missing: `make sysdeps` installs it"
    remote = tmp_path / "remote.git"
    project = live.state.parent
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(project, "remote", "add", "origin", str(remote))
    git(project, "push", "-q", "origin", "main")
    before = git(remote, "rev-parse", "main")
    token, worktree = live.spawn_worker()
    (worktree / "work.txt").write_text("the worker's change\n")
    git(worktree, "add", "work.txt")
    git(worktree, "commit", "-q", "-m", "worker's commit")
    command = "hub push --no-verify origin HEAD:main"
    answer = live.hook(command, token=token, cwd=worktree)
    assert answer["permissionDecision"] != "allow", answer
    assert "git push origin main" in answer["permissionDecisionReason"], answer
    assert git(remote, "rev-parse", "main") == before
    pushed = subprocess.run([hub, *command.split()[1:]], cwd=worktree, capture_output=True,
                            text=True, timeout=60, check=False,
                            env={**live.env, **GIT_ENV, "HOME": str(tmp_path)})  # fmt: skip
    assert pushed.returncode == 0, pushed.stderr
    assert git(remote, "rev-parse", "main") == git(worktree, "rev-parse", "HEAD") != before
