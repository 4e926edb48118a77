"""What each MCP tool takes: a pydantic model per tool (its JSON schema is what MCP
clients see; unknown fields are refused), and the error a tool raises for its caller."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from exomonad.errors import ExomonadError

__all__ = [
    "AnswerPermissionArgs",
    "Args",
    "NoArgs",
    "NotifyParentArgs",
    "RemoveWorkerArgs",
    "SendMessageArgs",
    "SpawnWorkersArgs",
    "TaskCreateArgs",
    "TaskIdArgs",
    "TaskListArgs",
    "TaskUpdateArgs",
    "ToolError",
    "WorkerSpec",
]


class ToolError(ExomonadError):
    """A tool refused or failed; the message is shown to the calling agent."""


class Args(BaseModel):
    """A tool's arguments: unknown fields are refused."""

    model_config = ConfigDict(extra="forbid")


class NotifyParentArgs(Args):
    status: Literal["success", "failure"] = Field(description="How the work went.")
    message: str = Field(description="What you did, found or need. Not empty.")
    pr_number: int | None = Field(default=None, description="Pull request, if you opened one.")


class SendMessageArgs(Args):
    to: str = Field(description="A member of your team (see team_status).")
    text: str = Field(description="The message.")
    summary: str | None = Field(default=None, description="A few words shown in the UI.")


class NoArgs(Args):
    pass


class TaskListArgs(Args):
    status: Literal["pending", "in_progress", "completed"] | None = None


class TaskIdArgs(Args):
    task_id: str


class TaskCreateArgs(Args):
    subject: str
    description: str = ""
    blocked_by: list[str] = Field(default_factory=list)


class TaskUpdateArgs(Args):
    task_id: str
    status: Literal["pending", "in_progress", "completed"] | None = None
    subject: str | None = None
    description: str | None = None


class WorkerSpec(Args):
    name: str = Field(description="Member name for the worker, e.g. gemini-1.")
    task: str | None = Field(
        default=None, description="The first message the worker receives (optional)."
    )
    command: str | None = Field(default=None, description="Command to run (default: config).")
    runtime: str | None = Field(
        default=None,
        description="Agent runtime (gemini, codex, terminal: any program, no hooks; default: "
        "the command's).",
    )


class SpawnWorkersArgs(Args):
    workers: list[WorkerSpec] = Field(min_length=1)


class RemoveWorkerArgs(Args):
    name: str


class AnswerPermissionArgs(Args):
    request_id: str = Field(description="The permission_request's request_id (perm-exo-...).")
    approve: bool
    reason: str = ""
