"""Claude Code's ``Agent`` (``Task``) tool, called by a worker: a subagent with
``isolation`` is not bookkeeping.

Found trying the gate as a worker, with the real Claude Code 2.1.330 in a linked
worktree (``tests/e2e/test_claude_subagent_worktree.py``): ``Agent {"isolation":
"worktree"}``, allowed as the runtime's own bookkeeping, ran ``git worktree add`` into
the lead's checkout (``<project>/.claude/worktrees/agent-<id>``, on a new branch
``worktree-agent-<id>``). Now a write of that directory: asked of the lead for a
worker, still allowed for the lead; ``"remote"`` (a subagent in a cloud environment,
whose calls no hook here sees) is unknown.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from exomonad.policy.decisions import Allow, Deny
from exomonad.policy.subagents import main_checkout
from tests.policy.worker import decide, scratch_worktree


def _repo(tmp_path: Path) -> tuple[Path, Path]:
    """A project with a commit and worker w1's linked worktree."""
    root, wt = scratch_worktree(tmp_path)
    wt.rmdir()

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root,
                       check=True, capture_output=True)  # fmt: skip

    git("init", "-q", "-b", "main")
    (root / "README.md").write_text("lead\n")
    git("add", "README.md")
    git("commit", "-qm", "init")
    git("worktree", "add", "-q", "-b", "exo/w1", str(wt))
    return root, wt


def test_a_workers_subagent_in_a_worktree_writes_the_leads_checkout(tmp_path: Path) -> None:
    root, wt = _repo(tmp_path)
    assert main_checkout(str(wt / "src")) == str(root.resolve())
    assert main_checkout(str(root)) == str(root.resolve())
    for tool in ("Agent", "Task"):
        isolated = {"description": "d", "prompt": "p", "isolation": "worktree"}
        verdict = decide(tool, isolated, root=str(root))
        assert not isinstance(verdict, Allow), verdict  # it was allowed
        assert f"{root.resolve()}/.claude/worktrees" in verdict.reason
        remote = decide(tool, {**isolated, "isolation": "remote"}, root=str(root))
        assert not isinstance(remote, Allow), remote
        assert not isinstance(remote, Deny), remote
        odd = decide(tool, {**isolated, "isolation": ["worktree"]}, root=str(root))
        assert not isinstance(odd, Allow), odd
    # a worktree whose main checkout cannot be found is still not allowed
    assert not isinstance(decide("Agent", {"prompt": "p", "isolation": "worktree"}), Allow)


def test_a_subagent_without_isolation_and_the_leads_stay_allowed(tmp_path: Path) -> None:
    root, _ = _repo(tmp_path)
    plain = {"description": "d", "prompt": "p", "subagent_type": "general-purpose"}
    assert isinstance(decide("Agent", plain, root=str(root)), Allow)
    assert isinstance(decide("Task", {**plain, "isolation": None}, root=str(root)), Allow)
    lead = decide("Agent", {**plain, "isolation": "worktree"}, role="tl", root=str(root))
    assert isinstance(lead, Allow), lead
