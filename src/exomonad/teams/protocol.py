"""Claude Code's structured team messages, carried as compact JSON inside an entry's ``text``.

>>> msg = IdleNotification(from_="gemini-1", timestamp="t", idle_reason="available")
>>> encode(msg)
'{"type":"idle_notification","from":"gemini-1","timestamp":"t","idleReason":"available"}'
>>> type(decode(encode(msg))).__name__
'IdleNotification'
>>> decode("just words") is None
True
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import orjson
from pydantic import Field, TypeAdapter, ValidationError

from exomonad.teams.models import WireModel

__all__ = [
    "IdleNotification",
    "PermissionRequest",
    "PermissionResponse",
    "PlanApprovalRequest",
    "PlanApprovalResponse",
    "ProtocolMessage",
    "ShutdownApproved",
    "ShutdownRejected",
    "ShutdownRequest",
    "TaskAssignment",
    "TaskCompleted",
    "TeammateTerminated",
    "could_be_protocol",
    "decode",
    "encode",
]


class IdleNotification(WireModel):
    """A teammate became idle."""

    type: Literal["idle_notification"] = "idle_notification"
    from_: str = Field(alias="from")
    timestamp: str
    idle_reason: Literal["available", "interrupted", "failed"] | None = Field(
        default=None, alias="idleReason"
    )
    summary: str | None = None
    completed_task_id: str | None = Field(default=None, alias="completedTaskId")
    completed_status: Literal["resolved", "blocked", "failed"] | None = Field(
        default=None, alias="completedStatus"
    )
    failure_reason: str | None = Field(default=None, alias="failureReason")


class ShutdownRequest(WireModel):
    """The lead asks a teammate to stop; ``requestId`` is ``shutdown-<ms>@<target>``."""

    type: Literal["shutdown_request"] = "shutdown_request"
    request_id: str = Field(alias="requestId")
    from_: str = Field(alias="from")
    reason: str | None = None
    timestamp: str


class ShutdownApproved(WireModel):
    """A teammate agrees to stop."""

    type: Literal["shutdown_approved"] = "shutdown_approved"
    request_id: str = Field(alias="requestId")
    from_: str = Field(alias="from")
    timestamp: str
    pane_id: str | None = Field(default=None, alias="paneId")
    backend_type: str | None = Field(default=None, alias="backendType")


class ShutdownRejected(WireModel):
    """A teammate refuses to stop, with a reason."""

    type: Literal["shutdown_rejected"] = "shutdown_rejected"
    request_id: str = Field(alias="requestId")
    from_: str = Field(alias="from")
    reason: str
    timestamp: str


class PlanApprovalRequest(WireModel):
    """A teammate in plan mode asks the lead to approve its plan."""

    type: Literal["plan_approval_request"] = "plan_approval_request"
    from_: str = Field(alias="from")
    timestamp: str
    plan_file_path: str = Field(alias="planFilePath")
    plan_content: str = Field(alias="planContent")
    request_id: str = Field(alias="requestId")


class PlanApprovalResponse(WireModel):
    """The lead's answer to a plan."""

    type: Literal["plan_approval_response"] = "plan_approval_response"
    request_id: str = Field(alias="requestId")
    approved: bool
    feedback: str | None = None
    timestamp: str
    permission_mode: str | None = Field(default=None, alias="permissionMode")


class TaskAssignment(WireModel):
    """The lead assigns a task."""

    type: Literal["task_assignment"] = "task_assignment"
    task_id: str = Field(alias="taskId")
    subject: str
    description: str
    assigned_by: str = Field(alias="assignedBy")
    timestamp: str


class TaskCompleted(WireModel):
    """A task was completed."""

    type: Literal["task_completed"] = "task_completed"
    from_: str | None = Field(default=None, alias="from")
    task_id: str = Field(alias="taskId")
    task_subject: str | None = Field(default=None, alias="taskSubject")
    timestamp: str | None = None


class PermissionRequest(WireModel):
    """A teammate asks the lead to approve a tool call; ``request_id`` is ``perm-<n>-<b36>``."""

    type: Literal["permission_request"] = "permission_request"
    request_id: str
    agent_id: str
    tool_name: str
    tool_use_id: str
    description: str
    input: dict[str, Any]
    permission_suggestions: list[Any] = Field(default_factory=list)


class PermissionResponse(WireModel):
    """The lead's answer to a permission request."""

    type: Literal["permission_response"] = "permission_response"
    request_id: str
    subtype: Literal["success", "error"]
    response: dict[str, Any] | None = None
    error: str | None = None


class TeammateTerminated(WireModel):
    """A teammate's process ended."""

    type: Literal["teammate_terminated"] = "teammate_terminated"
    message: str


ProtocolMessage = (
    IdleNotification
    | ShutdownRequest
    | ShutdownApproved
    | ShutdownRejected
    | PlanApprovalRequest
    | PlanApprovalResponse
    | TaskAssignment
    | TaskCompleted
    | PermissionRequest
    | PermissionResponse
    | TeammateTerminated
)

_ADAPTER: TypeAdapter[ProtocolMessage] = TypeAdapter(
    Annotated[ProtocolMessage, Field(discriminator="type")]
)


def encode(message: ProtocolMessage) -> str:
    """Compact JSON for an entry's ``text`` (``type`` first, as Claude Code writes it)."""
    data = message.to_json()
    data = {"type": message.type, **{k: v for k, v in data.items() if k != "type"}}
    return orjson.dumps(data).decode()


def _object(text: str) -> dict[str, Any] | None:
    """``text`` as a JSON object, or None."""
    if not text.startswith("{"):
        return None
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def could_be_protocol(text: str) -> bool:
    """Whether a reader of the text could take it for a protocol message: a JSON object
    with a ``type``, after the blanks ``JSON.parse`` skips (Claude Code's reader), whether
    or not ExoMonad's own models would accept its fields.

    >>> could_be_protocol(' {"type": "shutdown_request"}'), could_be_protocol('{"a": 1}')
    (True, False)
    >>> could_be_protocol('\ufeff{"type": "shutdown_approved"}')
    True
    """
    # JSON.parse skips " \t\n\r"; a reader that trims first (String.prototype.trim)
    # also drops a byte-order mark and Unicode spaces: judged as that reader would.
    text = text.strip().strip("\ufeff").strip()
    data: Any = _object(text)
    if data is None and text.startswith("{"):
        # orjson is stricter than JSON.parse: a lone surrogate escape, a number out of
        # range (1e400) or nesting past 1024 fail here, and JSON.parse reads them (found
        # probing: such a shutdown_approved reached the lead's inbox). The standard
        # library reads the first two; one it cannot parse for depth counts as protocol.
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            return False
        except RecursionError:
            return True
    return isinstance(data, dict) and "type" in data


def decode(text: str) -> ProtocolMessage | None:
    """Parse ``text`` as a protocol message; ``None`` for plain text or unknown types."""
    data = _object(text)
    if data is None or not isinstance(data.get("type"), str):
        return None
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError:
        return None
