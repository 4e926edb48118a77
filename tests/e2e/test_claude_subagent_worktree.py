"""The real Claude Code 2.1.330 checks a subagent's worktree out into the main checkout.

Found trying the gate as a worker: in a linked worktree (a worker's), ``Agent
{"isolation": "worktree"}`` made Claude Code run ``git worktree add`` at
``<project>/.claude/worktrees/agent-<id>`` on a new branch, the lead's checkout, while
ExoMonad allowed the call as the runtime's bookkeeping. Here the harm happens for real
(the hook sees only the ``Agent`` call, then the subagent's calls from the new worktree),
and the policy's verdict on that exact hook input is no longer ``Allow``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from exomonad.clis.claude import CLAUDE_330, claude_command, claude_env, prepare_home
from exomonad.policy.decisions import Allow
from exomonad.scripted.anthropic import ScriptedClaude, tool_reply
from tests.e2e.harness import fail_if_missing
from tests.policy.worker import engine_for, request

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


def test_a_workers_isolated_subagent_lands_in_the_leads_checkout(tmp_path: Path) -> None:
    fail_if_missing(CLAUDE_330.install_problem)
    home = prepare_home(tmp_path)
    root = home.workspace

    def git(*args: str) -> str:
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                              cwd=root, check=True, capture_output=True,
                              text=True).stdout  # fmt: skip

    git("init", "-q", "-b", "main")
    (root / "README.md").write_text("lead\n")
    git("add", "README.md")
    git("commit", "-qm", "init")
    wt = root / ".worktrees" / "w1"
    git("worktree", "add", "-q", "-b", "exo/w1", str(wt))
    log, gate = tmp_path / "hook.log", tmp_path / "gate.sh"
    gate.write_text(f"#!/bin/sh\ncat >> {log}\necho >> {log}\n")
    gate.chmod(0o755)
    hook = {"matcher": "*", "hooks": [{"type": "command", "command": str(gate)}]}
    (wt / ".claude").mkdir()
    (wt / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [hook]}}))
    isolated = {"description": "iso", "prompt": "go", "isolation": "worktree",
                "run_in_background": False}  # fmt: skip
    work = tool_reply("Bash", {"command": "echo hi > x.txt"})  # kept: it changed a file
    with ScriptedClaude([tool_reply("Agent", isolated), work, "sub done", "done"]) as model:
        argv = claude_command(CLAUDE_330, prompt="go", permission_mode="bypassPermissions")
        done = subprocess.run(argv, cwd=wt, env=claude_env(home, model.url), timeout=240,
                              capture_output=True, text=True, check=False)  # fmt: skip
    calls = [json.loads(line) for line in log.read_text().split("\n") if line]
    assert [c["tool_name"] for c in calls] == ["Agent", "Bash"], done.stderr[-2000:]
    made = list((root / ".claude" / "worktrees").glob("agent-*/x.txt"))
    assert len(made) == 1, git("worktree", "list")  # in the lead's checkout
    assert "worktree-agent-" in git("branch", "--list")  # a new branch in the shared refs
    assert calls[1]["cwd"] == str(made[0].parent)

    agent = calls[0]
    assert agent["cwd"] == str(wt)
    req = request(agent["tool_name"], agent["tool_input"], str(wt))
    verdict = engine_for(str(root)).decide(req)
    assert not isinstance(verdict, Allow), verdict
