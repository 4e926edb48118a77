"""Turn inbox entries into the text typed into a worker's pane.

Plain messages become ``[from <sender>] <text>``. Claude Code's protocol messages (JSON
inside ``text``) become readable instructions, so a non-Claude agent knows what is asked
of it without parsing JSON.

>>> render({"from": "team-lead", "text": "run the tests", "timestamp": "t"})
'[from team-lead] run the tests'
>>> render({"from": "team-lead", "timestamp": "t",
...         "text": '{"type":"shutdown_request","requestId":"shutdown-1@w","from":"team-lead",'
...                 '"reason":"done","timestamp":"t"}'})[:52]
'[from team-lead] Shutdown requested (reason: done). '
"""

from __future__ import annotations

from typing import Any

from exomonad.teams import protocol as p

__all__ = ["render", "render_protocol"]


def render_protocol(msg: p.ProtocolMessage) -> str:
    """A one-paragraph instruction for a protocol message."""
    match msg:
        case p.ShutdownRequest():
            reason = f" (reason: {msg.reason})" if msg.reason else ""
            return (
                f"Shutdown requested{reason}. Finish or save your current step, then stop. "
                f"(request {msg.request_id})"
            )
        case p.TaskAssignment():
            return (
                f"New task #{msg.task_id} assigned to you by {msg.assigned_by}: {msg.subject}\n"
                f"{msg.description}".rstrip()
            )
        case p.TaskCompleted():
            subject = f" ({msg.task_subject})" if msg.task_subject else ""
            by = f" by {msg.from_}" if msg.from_ else ""
            return f"Task #{msg.task_id}{subject} was completed{by}."
        case p.PlanApprovalResponse():
            verdict = "approved" if msg.approved else "rejected"
            feedback = f" Feedback: {msg.feedback}" if msg.feedback else ""
            return f"Your plan was {verdict}.{feedback}"
        case p.PermissionResponse():
            if msg.subtype == "success":
                return f"Permission request {msg.request_id} was granted."
            return f"Permission request {msg.request_id} was denied: {msg.error or 'no reason'}"
        case p.IdleNotification():
            what = f": {msg.summary}" if msg.summary else ""
            return f"{msg.from_} is idle ({msg.idle_reason or 'available'}){what}"
        case p.ShutdownApproved():
            return f"{msg.from_} approved shutdown {msg.request_id}."
        case p.ShutdownRejected():
            return f"{msg.from_} rejected shutdown {msg.request_id}: {msg.reason}"
        case p.PlanApprovalRequest():
            return f"{msg.from_} asks for approval of the plan in {msg.plan_file_path}."
        case p.PermissionRequest():
            return f"{msg.agent_id} asks permission to use {msg.tool_name}: {msg.description}"
        case p.TeammateTerminated():
            return msg.message
    raise AssertionError(f"unhandled protocol message {msg!r}")  # pragma: no cover


def render(entry: dict[str, Any]) -> str:
    """The pane text for one inbox entry."""
    sender = str(entry.get("from", "?"))
    text = str(entry.get("text", ""))
    msg = p.decode(text)
    body = render_protocol(msg) if msg is not None else text
    return f"[from {sender}] {body}"
