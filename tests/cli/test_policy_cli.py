"""``exomonad policy check|init|explain``, ``recompile``, ``approvals list``,
``approve``, ``deny`` through the real top-level app."""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from exomonad.cli.main import app
from exomonad.policy.actions import MergePR
from exomonad.policy.approvals import ApprovalStore

GOOD = """from __future__ import annotations

from exomonad.policy import Grant, Policy, Role, Shell

policy = Policy(roles={"dev": Role(Grant(Shell))}, name="cli-test")
examples = [("ls", "dev", "allow"), ("gh pr merge 1", "dev", "human")]
"""


def run(*args: str, code: int = 0) -> Result:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == code, (result.stdout, result.stderr)
    return result


def test_check_passes_for_a_good_policy(state: Path) -> None:
    (state / "policy.py").write_text(GOOD)
    out = run("policy", "check").stdout
    assert "load: ok" in out
    assert "type check: ok (mypy --strict)" in out
    assert "examples: 2 passed, 0 failed" in out
    assert out.rstrip().endswith("result: ok")


def test_check_fails_with_exit_1_and_json(state: Path) -> None:
    (state / "policy.py").write_text(GOOD.replace('"human")]', '"allow")]'))
    data = json.loads(run("policy", "check", "--no-type-check", "--json", code=1).stdout)
    assert data["ok"] is False
    assert data["loaded"] is True
    assert [e["passed"] for e in data["examples"]] == [True, False]
    assert data["type_check"]["status"] == "skipped"


def test_recompile_is_an_alias_and_takes_a_path(state: Path, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere.py"
    other.write_text("policy = None\n")
    out = run("recompile", str(other), "--no-type-check", code=1).stdout
    assert "load: FAILED" in out
    assert "must bind `policy = Policy(...)`" in out


def test_check_without_a_project_policy_checks_the_builtin(state: Path) -> None:
    result = run("policy", "check", "--no-type-check")
    assert "checking the built-in policy" in result.stderr
    assert "default.py" in result.stdout
    assert "result: ok" in result.stdout


def test_init_writes_the_template_and_refuses_to_overwrite(state: Path) -> None:
    run("policy", "init")
    text = (state / "policy.py").read_text()
    assert "policy = Policy(" in text
    assert "exists" in run("policy", "init", code=1).stderr
    run("policy", "init", "--force")


def test_explain_shows_actions_and_decision(state: Path) -> None:
    data = json.loads(
        run(
            "policy",
            "explain",
            "--role",
            "dev",
            "--cwd",
            "/repo/wt",
            "--worktree",
            "/repo/wt",
            "--branch",
            "feature/a",
            "--json",
            "--",
            "cd sub && git push origin HEAD && git push -f origin main",
        ).stdout
    )
    assert data["decision"] == "deny"
    assert [a["branch"] for a in data["actions"]] == ["feature/a", "main"]
    human = run(
        "policy",
        "explain",
        "--role",
        "tl",
        "--tool",
        "Read",
        "--input",
        '{"file_path": "/etc/hosts"}',
    ).stdout
    assert "read /etc/hosts" in human
    assert "decision: allow" in human


def test_explain_rejects_a_bad_runtime(state: Path) -> None:
    run("policy", "explain", "--runtime", "aider", "ls", code=2)


def test_approvals_list_approve_deny(state: Path) -> None:
    store = ApprovalStore(state / "approvals.db")
    first = store.create(agent="dev1", role="dev", action=MergePR(3), reason="merge #3")
    second = store.create(agent="dev2", role="dev", action=MergePR(4), reason="merge #4")
    listed = json.loads(run("approvals", "list", "--json").stdout)
    assert [a["id"] for a in listed] == [first.id, second.id]
    assert "merge #3" in run("approvals", "list").stdout
    short = first.id[:6] if not second.id.startswith(first.id[:6]) else first.id  # 16**-6
    run("approve", short, "--by", "alice", code=2)  # nobody names who answered
    out = run("approve", short, "--reason", "fine").stdout
    assert f"{first.id} approved" in out
    data = json.loads(run("deny", second.id, "--reason", "no", "--json").stdout)
    assert (data["state"], data["answer_reason"]) == ("denied", "no")
    assert store.get(first.id).answered_by == f"human:{pwd.getpwuid(os.getuid()).pw_name}"
    assert "already approved" in run("deny", first.id, code=1).stderr
    assert "no approval" in run("approve", "zzzzzzzz", code=1).stderr
    assert "no pending approvals" in run("approvals", "list").stdout
    assert len(json.loads(run("approvals", "list", "--all", "--json").stdout)) == 2


@pytest.mark.parametrize(
    ("wrap", "env", "why"),
    [
        # Measured (issue 10): a worker's shell ran `exomonad approve ID --by alice`.
        ("{cmd}", {"EXOMONAD_TOKEN": "exo_x"}, "runs with EXOMONAD_TOKEN"),
        # The same from below a process that is Gemini CLI, the environment wiped.
        (
            "exec -a gemini bash -c 'env -i EXOMONAD_DIR={state} {cmd}; exit $?'",
            {},
            "is an agent (gemini)",
        ),
    ],
    ids=["agent-token", "agent-parent"],
)
def test_an_agent_cannot_answer_an_approval(
    state: Path, wrap: str, env: dict[str, str], why: str
) -> None:
    store = ApprovalStore(state / "approvals.db")
    pending = store.create(agent="w1", role="worker", action=MergePR(3), reason="merge #3")
    cmd = f"{sys.executable} -m exomonad approve {pending.id}"
    done = subprocess.run(["bash", "-c", wrap.format(cmd=cmd, state=state)],
                          env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "answered by a person" in done.stderr
    assert why in done.stderr
    assert store.get(pending.id).state == "pending"


def test_approvals_list_shows_the_whole_command(state: Path) -> None:
    """Found probing (a fourth round): the list cut a long word with "…", so the end of
    `python3${IFS}-c${IFS}'...shutil.rmtree("../../src")'`, the part a person must see,
    was not shown at 80 columns. Each cell now folds: every character is on screen."""
    tail = 'shutil.rmtree("../../src")'
    command = "python3${IFS}-c${IFS}'import${IFS}shutil;" + "x" * 120 + tail + "'"
    ApprovalStore(state / "approvals.db").create(
        agent="w1", role="worker", action=MergePR(9), reason=f"sudo apt-get install && {command}"
    )
    out = run("approvals", "list").stdout
    assert "…" not in out
    rows = [line.split("│") for line in out.splitlines() if line.count("│") == 8]
    reason = "".join(cells[5].strip() for cells in rows)
    assert reason.endswith(tail + "'"), out
