"""`exomonad policy test` and `exomonad policy replay`: recorded calls judged again."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest
from typer.testing import CliRunner

from exomonad.cli.main import app
from exomonad.policy.engine import PolicyEngine
from exomonad.policy.errors import PolicyError
from exomonad.policy.replay import read_jsonl
from exomonad.policy.request import ToolRequest

WT = "/r/.worktrees/w1"
STRICT = """from __future__ import annotations

from exomonad.policy import DEFAULT_POLICY, Forbid, GitPush

policy = DEFAULT_POLICY.replace(
    forbid=(*DEFAULT_POLICY.forbid, Forbid(GitPush, lambda a, ctx: True, reason="no pushes")),
    name="strict")
examples: list[object] = []
"""


def _calls(tmp_path: Path, *calls: Mapping[str, object]) -> Path:
    path = tmp_path / "calls.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in calls))
    return path


def test_policy_test_meets_expectations_or_fails(state: Path, tmp_path: Path) -> None:
    push = {"runtime": "claude", "role": "worker", "agent": "w1", "tool_name": "Bash",
            "tool_input": {"command": "git push origin exo/w1"}, "cwd": WT, "worktree": WT,
            "branch": "exo/w1", "expect": "allow"}  # fmt: skip
    force = {"runtime": "gemini", "role": "worker", "tool_name": "run_shell_command",
             "tool_input": {"command": "git push -f origin main"}, "expect": "deny"}  # fmt: skip
    runner = CliRunner()
    ok = runner.invoke(app, ["policy", "test", str(_calls(tmp_path, push, force)), "--json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout) == []  # nothing changed, nothing to show
    (tmp_path / "strict.py").write_text(STRICT)
    bad = runner.invoke(app, ["policy", "test", str(_calls(tmp_path, push, force)),
                              "--policy", str(tmp_path / "strict.py"), "--json"])  # fmt: skip
    assert bad.exit_code == 1
    [changed] = json.loads(bad.stdout)
    assert (changed["line"], changed["before"], changed["now"]) == (1, "allow", "deny")
    assert "no pushes" in changed["reason"]


def test_policy_replay_shows_what_a_candidate_would_change(state: Path, tmp_path: Path) -> None:
    engine = PolicyEngine.for_project(state)  # the built-in policy, auditing
    for command in ("git push origin exo/w1", "pytest -q", "git push -f origin main"):
        engine.decide(ToolRequest("claude", "worker", "w1", "Bash", {"command": command},
                                  cwd=WT, worktree=WT, branch="exo/w1"))  # fmt: skip
    runner = CliRunner()
    same = runner.invoke(app, ["policy", "replay", "--json"])
    assert same.exit_code == 0, same.output
    assert json.loads(same.stdout) == []  # the same policy: the same decisions
    (tmp_path / "strict.py").write_text(STRICT)
    out = runner.invoke(app, ["policy", "replay", "--policy", str(tmp_path / "strict.py"),
                              "--all", "--json"])  # fmt: skip
    rows = json.loads(out.stdout)
    assert [(r["before"], r["now"], r["changed"]) for r in rows] == [
        ("allow", "deny", True),
        ("allow", "allow", False),
        ("deny", "deny", False),
    ]


def test_a_bad_line_is_an_error_not_a_skip() -> None:
    with pytest.raises(PolicyError, match="line 2"):
        read_jsonl('{"a": 1}\n{broken\n')
