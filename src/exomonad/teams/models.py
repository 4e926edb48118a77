"""Typed models of Claude Code's team files.

Every model keeps unknown fields (``extra="allow"``) and dumps only the fields that were
present or set, by their on-disk (camelCase) names, so a load/dump round trip leaves a
file written by any Claude Code version untouched.

>>> m = InboxMessage.model_validate({"from": "a", "text": "hi", "timestamp": "t", "x": 1})
>>> m.sender, m.to_json()
('a', {'from': 'a', 'text': 'hi', 'timestamp': 't', 'x': 1})
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    ValidationError,
    ValidationInfo,
    model_validator,
)

__all__ = [
    "MEMBER_COLORS",
    "SYNTHETIC_BACKEND",
    "InboxMessage",
    "Member",
    "Task",
    "TaskStatus",
    "TeamConfig",
    "WireModel",
    "message_identity",
    "now_iso",
    "now_ms",
]

#: ``backendType`` of members that ExoMonad registers.
SYNTHETIC_BACKEND = "exomonad"
#: The colours Claude Code assigns to teammates.
MEMBER_COLORS = ("red", "blue", "green", "yellow", "purple", "orange", "pink", "cyan")

_WIRE = {"wire": True}

TaskStatus = Literal["pending", "in_progress", "completed"]


def now_ms() -> int:
    """Epoch milliseconds, as Claude Code stores ``createdAt``/``joinedAt``."""
    return int(datetime.now(UTC).timestamp() * 1000)


def now_iso() -> str:
    """ISO 8601 UTC with milliseconds and ``Z``, as in JavaScript's ``toISOString()``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class WireModel(BaseModel):
    """Base for on-disk models: unknown keys kept, camelCase aliases, sparse dumps."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_assignment=True)

    @model_validator(mode="wrap")
    @classmethod
    def _forget_name_collisions(
        cls, data: Any, handler: ModelWrapValidatorHandler[Self], info: ValidationInfo
    ) -> Self:
        """On-disk data: an unknown key equal to a field's Python name does not set it.

        Pydantic records extra keys in ``model_fields_set``; a stray ``message_id`` would
        otherwise make the unset ``messageId`` field appear in dumps as ``null``.
        """
        obj = handler(data)
        if isinstance(data, dict) and (info.context or {}).get("wire"):
            for name, f in type(obj).model_fields.items():
                if f.alias and f.alias != name and name in data and f.alias not in data:
                    obj.__pydantic_fields_set__.discard(name)
        return obj

    def to_json(self) -> dict[str, Any]:
        """The on-disk dict: aliases, only fields that were present or set."""
        return self.model_dump(by_alias=True, exclude_unset=True, mode="json")

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        """Validate an on-disk dict by on-disk names only.

        A stray snake_case key (``agent_type`` next to ``agentType``) stays an unknown
        extra key; it is never read as the field. Python code may still construct models
        by field name (``InboxMessage(sender=...)``).
        """
        return cls.model_validate(data, by_alias=True, by_name=False, context=_WIRE)


class Member(WireModel):
    """One entry of ``config.json``'s ``members``."""

    agent_id: str = Field(alias="agentId")
    name: str
    agent_type: str | None = Field(default=None, alias="agentType")
    joined_at: int | None = Field(default=None, alias="joinedAt")
    tmux_pane_id: str | None = Field(default=None, alias="tmuxPaneId")
    cwd: str | None = None
    subscriptions: list[Any] | None = None
    backend_type: str | None = Field(default=None, alias="backendType")
    model: str | None = None
    color: str | None = None
    prompt: str | None = None
    plan_mode_required: bool | None = Field(default=None, alias="planModeRequired")
    is_active: bool | None = Field(default=None, alias="isActive")
    mode: str | None = None

    @property
    def synthetic(self) -> bool:
        """True for members ExoMonad registered (``backendType == "exomonad"``)."""
        return self.backend_type == SYNTHETIC_BACKEND

    @property
    def pane(self) -> str | None:
        """The pane ExoMonad bound this member to (our ``exomonadPane`` key), if any."""
        pane = (self.model_extra or {}).get("exomonadPane")
        return pane if isinstance(pane, str) and pane else None


class TeamConfig(WireModel):
    """A team's ``config.json``."""

    name: str
    created_at: int | None = Field(default=None, alias="createdAt")
    lead_agent_id: str | None = Field(default=None, alias="leadAgentId")
    lead_session_id: str | None = Field(default=None, alias="leadSessionId")
    description: str | None = None
    lead_process: dict[str, Any] | None = Field(default=None, alias="leadProcess")
    members: list[Member] = Field(default_factory=list)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        """Validate, dropping members Claude Code would drop or we cannot read.

        Claude Code drops members without string ``agentId``/``name``; a member with an
        odd known field (``joinedAt: "soon"``) is left out of this typed view too, rather
        than making the whole team unreadable. The file itself is never changed by this.
        """
        members = []
        for m in data.get("members", []):
            if not (
                isinstance(m, dict)
                and isinstance(m.get("agentId"), str)
                and isinstance(m.get("name"), str)
            ):
                continue
            try:
                Member.from_json(m)
            except ValidationError:
                continue
            members.append(m)
        return cls.model_validate(
            {**data, "members": members}, by_alias=True, by_name=False, context=_WIRE
        )

    @property
    def lead_name(self) -> str:
        """The lead's member name (``team-lead`` unless ``leadAgentId`` says otherwise)."""
        if self.lead_agent_id and "@" in self.lead_agent_id:
            return self.lead_agent_id.split("@", 1)[0]
        return "team-lead"

    def member(self, name: str) -> Member | None:
        """The member called ``name``, if any."""
        return next((m for m in self.members if m.name == name), None)

    def member_names(self) -> set[str]:
        """Names of all members plus the lead."""
        return {m.name for m in self.members} | {self.lead_name}


def message_identity(entry: dict[str, Any]) -> str:
    """The identity of an inbox entry: ``msg_id``, else ``messageId``, else a content hash.

    The hash covers ``from|timestamp|text`` (the triple Claude Code 2.1.330 matches on), so
    it is stable across rewrites, pruning and restarts.

    >>> message_identity({"from": "a", "timestamp": "t", "text": "x"})[:12]
    'sha256:3d510'
    """
    for key in ("msg_id", "messageId"):
        value = entry.get(key)
        if isinstance(value, str) and value:
            return value
    raw = f"{entry.get('from', '')}|{entry.get('timestamp', '')}|{entry.get('text', '')}"
    return "sha256:" + hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


class InboxMessage(WireModel):
    """One inbox entry. ``from`` is a Python keyword, so the field is ``sender``."""

    sender: str = Field(alias="from")
    text: str
    timestamp: str
    read: bool | None = None
    summary: str | None = None
    color: str | None = None
    type: str | None = None
    msg_v: int | None = Field(default=None, alias="msgV")
    msg_id: str | None = None
    message_id: str | None = Field(default=None, alias="messageId")

    @property
    def identity(self) -> str:
        """See :func:`message_identity`."""
        return message_identity(self.to_json())

    @property
    def is_read(self) -> bool:
        """True when the entry carries ``read: true``."""
        return bool(self.read)


class Task(WireModel):
    """A task file ``tasks/<list>/<id>.json``. Keep custom data in ``metadata``."""

    id: str
    subject: str
    description: str = ""
    active_form: str | None = Field(default=None, alias="activeForm")
    owner: str | None = None
    status: TaskStatus = "pending"
    blocks: list[str] = Field(default_factory=list)
    blocked_by: list[str] = Field(default_factory=list, alias="blockedBy")
    metadata: dict[str, Any] | None = None
