"""A worker's gating hook is refused once its worktree's link to the repository was
changed (found probing: ``gunzip -f .git.gz`` made ``.git`` name the lead's repository,
and the worker's next ``git commit`` moved the lead's ``main``; ``tests/test_gitlink.py``
measures that for real)."""

from __future__ import annotations

import orjson
import pytest

from exomonad.server.hooks import hook_request
from exomonad.server.identity import Identity
from exomonad.server.services import Services


@pytest.mark.parametrize("runtime", ["claude", "gemini"])
def test_a_workers_hook_is_refused_once_its_git_link_changed(svc: Services, runtime: str) -> None:
    wt = svc.worktrees.create("w1")
    token = svc.tokens.issue(Identity("w1", "worker", "proj", worktree=str(wt.path),
                                      branch=wt.branch))  # fmt: skip
    tool = "Bash" if runtime == "claude" else "run_shell_command"
    event = "pre-tool-use" if runtime == "claude" else "before-tool"
    body = orjson.dumps({"tool_name": tool, "tool_input": {"command": "ls"},
                         "cwd": str(wt.path)})  # fmt: skip
    before = hook_request(svc, event, runtime, body, token, None)
    assert b"deny" not in orjson.dumps(before.output)
    (wt.path / ".git").write_text(f"gitdir: {svc.worktrees.project_root / '.git'}\n")
    after = hook_request(svc, event, runtime, body, token, None)
    assert b"deny" in orjson.dumps(after.output)
    assert "no longer linked" in after.stderr
    assert svc.counters["worktree_unlinked"] == 1
