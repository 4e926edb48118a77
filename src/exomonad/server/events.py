"""The server's events: what happened in a team, typed, in the order it happened.

Every event has a ``kind`` (the discriminator), the ``team`` it belongs to, the time it
was published (``ts``, Unix seconds) and a sequence id (``seq``, 1, 2, 3... per server
run) given by the :class:`~exomonad.server.bus.EventBus`. On the wire (``GET /events``,
server-sent events) each is one JSON object; :func:`parse_event` turns it back into its
class. The kinds, and where each is published (once, on one code path):

=====================  ==========================================================
``message_in``         the watcher typed an inbox message into a worker's pane
                       (lead → worker: the lead's ``SendMessage``, any writer)
``message_out``        ExoMonad wrote a message into an inbox (a worker's
                       ``notify_parent`` / ``send_message``, idle notifications,
                       permission requests, a spawned worker's task): every
                       :meth:`~exomonad.teams.Mailbox.append` of the server
``delivery``           a delivery pass typed messages into a pane (or consumed
                       them: a ``permission_response``), or the lead's pane got a
                       message its inbox poller had not shown
``delivery_failed``    a pass could not deliver (no pane, dead pane, unreadable
                       inbox); sent again only when the reason or count changes
``presence``           a member became active, idle or terminated
``policy_decision``    the policy judged a tool call (hook, MCP tool, git push)
``escalation``         a decision asked the lead or a person: an approval opened
``escalation_answered``  that approval was approved, denied, expired or timed out
``task``               a task was created, updated or claimed through the tools
``pull_request``       the GitHub poller saw something new on a worker's pull
                       request (a review, a check, a push, ready, merged...)
=====================  ==========================================================

A subscriber that fell behind gets a :class:`Gap` (``kind: "gap"``) saying how many
events it missed; it is never published and has no ``seq``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from exomonad.policy.decisions import DecisionLabel
from exomonad.teams.models import message_identity
from exomonad.teams.protocol import decode
from exomonad.util import sse

__all__ = [
    "MAX_TEXT",
    "BaseEvent",
    "Delivery",
    "DeliveryFailed",
    "EscalationAnswered",
    "EscalationOpened",
    "Event",
    "Gap",
    "MessageIn",
    "MessageOut",
    "PolicyDecision",
    "PresenceChanged",
    "PresenceState",
    "PullRequestEvent",
    "SseMessage",
    "TaskAction",
    "TaskChanged",
    "message_fields",
    "parse_event",
    "parse_sse",
]

#: Longest message text carried in an event (longer text is cut, ``truncated`` set).
MAX_TEXT = 8192

PresenceState = Literal["active", "idle", "terminated"]
TaskAction = Literal["created", "updated", "claimed"]


class BaseEvent(BaseModel):
    """What every event has (see the module doc)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: What happened (each kind is a subclass; see the module doc).
    kind: str
    #: Sequence id, set by the bus when published (0 before).
    seq: int = 0
    #: Unix seconds, set by the bus when published.
    ts: float = 0.0
    #: The team it happened in (the project's current team when the source had none).
    team: str | None = None


class _Message(BaseEvent):
    sender: str
    to: str
    message_id: str
    text: str
    summary: str | None = None
    #: The protocol message type when ``text`` is one (``idle_notification``...).
    protocol: str | None = None
    truncated: bool = False


class MessageIn(_Message):
    """An inbox message the watcher typed into worker ``to``'s pane."""

    kind: Literal["message_in"] = "message_in"
    pane: str | None = None


class MessageOut(_Message):
    """A message ExoMonad wrote into ``to``'s inbox (``via`` ``pane``: typed into the
    recipient's pane because its inbox could not be written)."""

    kind: Literal["message_out"] = "message_out"
    via: Literal["inbox", "pane"] = "inbox"


class Delivery(BaseEvent):
    """Messages delivered to ``member`` in one pass (``consumed``: not typed, e.g. a
    ``permission_response``; ``possible_duplicates``: typed again after a crash)."""

    kind: Literal["delivery"] = "delivery"
    member: str
    pane: str | None = None
    message_ids: list[str] = Field(default_factory=list)
    consumed: int = 0
    possible_duplicates: int = 0


class DeliveryFailed(BaseEvent):
    """A pass for ``member`` stopped at a message it could not deliver; ``pending``
    messages wait (in order) for a later pass."""

    kind: Literal["delivery_failed"] = "delivery_failed"
    member: str
    pane: str | None = None
    reason: str
    pending: int = 0


class PresenceChanged(BaseEvent):
    """``member``'s presence changed (``source``: what told the server)."""

    kind: Literal["presence"] = "presence"
    member: str
    state: PresenceState
    previous: PresenceState | None = None
    source: str


class PolicyDecision(BaseEvent):
    """The policy's verdict on one tool call (``decision``: allow, tl, human, deny)."""

    kind: Literal["policy_decision"] = "policy_decision"
    agent: str
    role: str
    runtime: str
    tool: str
    decision: DecisionLabel
    reason: str = ""
    policy_id: str | None = None


class EscalationOpened(BaseEvent):
    """A tool call waits for ``addressee`` (the lead's name, or ``human``)."""

    kind: Literal["escalation"] = "escalation"
    approval_id: str
    agent: str
    tool: str
    addressee: str
    reason: str
    deadline: float | None = None


class EscalationAnswered(BaseEvent):
    """How an escalation ended (``state`` ``timeout``: nobody answered within the wait;
    ``decision``: what the tool call got)."""

    kind: Literal["escalation_answered"] = "escalation_answered"
    approval_id: str
    agent: str
    state: Literal["approved", "denied", "expired", "timeout"]
    by: str | None = None
    reason: str = ""
    decision: DecisionLabel


class TaskChanged(BaseEvent):
    """A task changed through ExoMonad's task tools (the task as it is now)."""

    kind: Literal["task"] = "task"
    action: TaskAction
    by: str
    task: dict[str, Any]


class PullRequestEvent(BaseEvent):
    """Something new on ``worker``'s pull request ``number`` (``event``: the poller's
    kind, e.g. ``approved``, ``ci_status``, ``merged``; ``pr``: all it knows of it)."""

    kind: Literal["pull_request"] = "pull_request"
    event: str
    worker: str
    number: int
    pr: dict[str, Any]


Event = Annotated[
    MessageIn | MessageOut | Delivery | DeliveryFailed | PresenceChanged | PolicyDecision
    | EscalationOpened | EscalationAnswered | TaskChanged | PullRequestEvent,
    Field(discriminator="kind"),
]  # fmt: skip


class Gap(BaseModel):
    """``missed`` events after ``after`` never reached this subscriber (it fell behind,
    or asked to replay from before the oldest event kept)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["gap"] = "gap"
    missed: int
    after: int


_ADAPTER: TypeAdapter[Event | Gap] = TypeAdapter(
    Annotated[Event | Gap, Field(discriminator="kind")]
)


def parse_event(data: bytes | str | dict[str, Any]) -> Event | Gap:
    """An event (or a gap) from its JSON form.

    >>> parse_event('{"kind": "gap", "missed": 3, "after": 7}')
    Gap(kind='gap', missed=3, after=7)
    """
    if isinstance(data, dict):
        return _ADAPTER.validate_python(data)
    return _ADAPTER.validate_json(data)


def message_fields(entry: dict[str, Any]) -> dict[str, Any]:
    """The fields of a message event from an inbox entry (text cut to :data:`MAX_TEXT`).

    >>> message_fields({"from": "a", "text": "hi", "timestamp": "t", "msg_id": "m1"})
    {'sender': 'a', 'message_id': 'm1', 'text': 'hi', 'summary': None, 'protocol': None, \
'truncated': False}
    """
    text = str(entry.get("text", ""))
    msg = decode(text)
    summary = entry.get("summary")
    return {
        "sender": str(entry.get("from", "")),
        "message_id": message_identity(entry),
        "text": text[:MAX_TEXT],
        "summary": summary if isinstance(summary, str) else None,
        "protocol": msg.type if msg is not None else None,
        "truncated": len(text) > MAX_TEXT,
    }


@dataclass(frozen=True)
class SseMessage:
    """One server-sent event as read off the stream."""

    event: str
    data: str
    id: str | None = None


def parse_sse(chunks: Iterable[bytes]) -> Iterator[SseMessage]:
    """Server-sent events from a stream's body as it arrives (read by
    :func:`exomonad.util.sse.parse`); comments and ``retry:`` are skipped.

    >>> list(parse_sse([b"id: 1\\nevent: x\\ndata: {}\\n\\n: ping\\n\\n"]))
    [SseMessage(event='x', data='{}', id='1')]
    """
    for event, data, sid in sse.parse(chunks):
        yield SseMessage(event.decode(), data.decode(), None if sid is None else sid.decode())
