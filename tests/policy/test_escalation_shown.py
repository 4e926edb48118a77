"""What a person (or the lead) is shown when a call escalates is all of the call, and
nothing in it can hide or fake the rest.

Found probing the escalation (a third round, a live server, ``exomonad approve``):

* ``sudo apt-get install ... && rm -rf ../../src`` reached the person as the ``sudo``
  alone (the strictest action's reason; the delete's was dropped), and the popup cut the
  actions at 600 characters; approving it deleted the lead's ``src``.
* ``sudo sh -c 'rm -rf ../../src' $'\\x1b[23Dapt-get install -y jq  \\x1b[31C'``: the
  terminal escape in the reason moved the cursor back over the ``rm`` in ``approvals
  list``; in the popup a hidden-text sequence hid the real lines.
* An unrecognised command's reason was cut at 117 characters (``tmux new-session ...
  make ...; rm -rf ../../src`` showed ``...make dist &&...``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from exomonad.cli.main import app
from exomonad.policy.actions import Shell
from exomonad.policy.approvals import ApprovalStore
from exomonad.policy.cascade import asked
from exomonad.policy.decisions import Allow, Deny, Escalate
from exomonad.policy.request import ToolRequest
from tests.policy.worker import ROOT, WT, bash, decide, engine_for

PACKAGES = " ".join(f"python3-pkg{k:02d}" for k in range(1, 61))
HIDDEN_DELETE = f"sudo apt-get install -y --no-install-recommends {PACKAGES} && rm -rf ../../src"
ESCAPED = "sudo sh -c 'rm -rf ../../src' $'\\x1b[23Dapt-get install -y jq  \\x1b[31C'"
LONG_UNKNOWN = (
    "tmux new-session -d -s build 'make -j8 all && make check && make dist && "
    "make install-strip DESTDIR=/tmp/stage; rm -rf ../../src'"
)


def test_an_escalation_names_every_action_not_allowed() -> None:
    decision = bash(HIDDEN_DELETE)
    assert isinstance(decision, Escalate)
    assert decision.to == "human"
    assert "sudo apt-get" in decision.reason
    assert "delete -r /p/src" in decision.reason


def test_an_escalation_reason_carries_no_terminal_control_and_is_whole() -> None:
    for command in (ESCAPED, "sudo ls $'\\u202e'txt.exe $'\\u200b'"):
        reason = bash(command).reason
        assert reason.isprintable(), reason
    assert "\\x1b[23D" in bash(ESCAPED).reason  # shown, as an escape
    assert "rm -rf ../../src" in bash(LONG_UNKNOWN).reason


def _store(state: Path) -> ApprovalStore:
    state.mkdir(parents=True, exist_ok=True)
    return ApprovalStore(state / "approvals.db")


def test_the_person_sees_the_whole_call_and_no_escape(tmp_path: Path) -> None:
    """``approvals list`` and the popup (``approvals prompt``) show every action and the
    escapes as text: the terminal never receives an ESC from an agent's command."""
    state = tmp_path / ".exomonad"
    store = _store(state)
    ev = engine_for(ROOT).evaluate(ToolRequest("claude", "worker", "w1", "Bash",
                                   {"command": HIDDEN_DELETE}, cwd=WT, worktree=WT,
                                   branch="exo/w1"))  # fmt: skip
    long = store.create(agent="w1", role="worker", action=list(ev.actions),
                        reason=ev.decision.reason, asks=asked(ev.verdicts))  # fmt: skip
    forged = "w1 asks: sudo apt-get install -y jq\x1b[8m\nwhat: nothing\x1b[23D"
    sly = store.create(agent="w1", role="worker", action=[Shell(("sudo", "x\x1b[2J"))],
                       reason=forged)  # fmt: skip
    store.close()
    runner = CliRunner()
    listed = runner.invoke(app, ["approvals", "list", "--state-dir", str(state)])
    assert listed.exit_code == 0, listed.stdout
    assert "\x1b" not in listed.stdout
    assert "\\x1b[8m" in listed.stdout
    shown = runner.invoke(app, ["approvals", "prompt", long.id, "--state-dir", str(state)],
                          input="n\n\n")  # fmt: skip
    assert shown.exit_code == 0, shown.stdout
    assert "  - delete -r /p/src" in shown.stdout
    assert "python3-pkg60" in shown.stdout  # the whole action, not cut at 600 characters
    popped = runner.invoke(app, ["approvals", "prompt", sly.id, "--state-dir", str(state)],
                           input="n\n\n")  # fmt: skip
    assert "\x1b" not in popped.stdout
    assert "\\x1b[8m" in popped.stdout
    assert "\\nwhat: nothing" in popped.stdout  # the faked line is not a line


def test_only_the_lead_reads_the_teams_inboxes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found probing: a worker's ``Read`` (or ``cat``) of the lead's inbox was allowed
    (the lead's policy lets workers read anything): it gave the pending permission
    request's id to quote to the lead, and every message the team sends."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    inbox = tmp_path / "claude" / "teams" / "proj" / "inboxes" / "team-lead.json"
    for decision in (
        decide("Read", {"file_path": str(inbox)}),
        bash(f"cat {inbox}"),
        bash(f"grep -r perm-exo {tmp_path / 'claude'}"),
        decide("read_file", {"absolute_path": str(inbox)}, runtime="gemini"),
    ):
        assert isinstance(decision, Deny), decision
    assert isinstance(decide("Read", {"file_path": str(inbox)}, role="tl"), Allow)
    tasks = tmp_path / "claude" / "tasks" / "proj" / "1.json"
    assert not isinstance(decide("Read", {"file_path": str(tasks)}), Deny)
