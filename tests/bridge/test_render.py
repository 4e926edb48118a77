"""Rendering inbox entries as pane text."""

from __future__ import annotations

import pytest

from exomonad.bridge.render import render
from exomonad.teams import protocol as p


def _entry(text: str, sender: str = "team-lead") -> dict[str, str]:
    return {"from": sender, "text": text, "timestamp": "2026-11-21T00:00:00.000Z"}


def test_plain_text_keeps_content() -> None:
    assert render(_entry("fix `x` && $(y)")) == "[from team-lead] fix `x` && $(y)"


@pytest.mark.parametrize(
    ("msg", "needle"),
    [
        (
            p.ShutdownRequest(
                request_id="shutdown-1@w", from_="team-lead", timestamp="t", reason="all done"
            ),
            "Shutdown requested (reason: all done)",
        ),
        (
            p.TaskAssignment(
                task_id="7",
                subject="Port it",
                description="Use asyncio",
                assigned_by="team-lead",
                timestamp="t",
            ),
            "New task #7 assigned to you by team-lead: Port it\nUse asyncio",
        ),
        (
            p.TaskCompleted(task_id="3", task_subject="lint", from_="w2"),
            "Task #3 (lint) was completed by w2.",
        ),
        (
            p.PlanApprovalResponse(
                request_id="r", approved=False, feedback="smaller", timestamp="t"
            ),
            "Your plan was rejected. Feedback: smaller",
        ),
        (
            p.PermissionResponse(request_id="perm-1-a", subtype="error", error="no"),
            "Permission request perm-1-a was denied: no",
        ),
        (p.PermissionResponse(request_id="perm-1-a", subtype="success"), "was granted"),
        (
            p.IdleNotification(from_="w2", timestamp="t", idle_reason="failed"),
            "w2 is idle (failed)",
        ),
        (p.ShutdownApproved(request_id="r", from_="w2", timestamp="t"), "approved shutdown r"),
        (
            p.ShutdownRejected(request_id="r", from_="w2", reason="busy", timestamp="t"),
            "rejected shutdown r: busy",
        ),
        (
            p.PlanApprovalRequest(
                from_="w2", timestamp="t", plan_file_path="/p.md", plan_content="x", request_id="r"
            ),
            "plan in /p.md",
        ),
        (
            p.PermissionRequest(
                request_id="perm-1-a",
                agent_id="w@t",
                tool_name="Bash",
                tool_use_id="u",
                description="ls",
                input={},
            ),
            "use Bash: ls",
        ),
        (p.TeammateTerminated(message="w2 has shut down"), "w2 has shut down"),
    ],
)
def test_protocol_messages_become_instructions(msg: p.ProtocolMessage, needle: str) -> None:
    out = render(_entry(p.encode(msg)))
    assert out.startswith("[from team-lead] ")
    assert needle in out
    assert '"type"' not in out


def test_unknown_json_is_left_as_text() -> None:
    text = '{"type":"future_thing","x":1}'
    assert render(_entry(text)) == f"[from team-lead] {text}"
