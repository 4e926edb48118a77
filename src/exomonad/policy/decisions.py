"""Decisions: :class:`Allow`, :class:`Deny`, :class:`Escalate`, and how they combine.

Strictness, least to most: ``Allow`` < ``Escalate(to="tl")`` < ``Escalate(to="human")`` <
``Deny``. A tool call that does several things gets the strictest verdict of its actions.

>>> strictest([Allow(), Escalate("tl", "push"), Allow()])
Escalate(to='tl', reason='push')
>>> label(Deny("no")), label(Escalate("human")), parse_label("tl")
('deny', 'human', Escalate(to='tl', reason=''))
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "Allow",
    "Decision",
    "DecisionLabel",
    "Deny",
    "Escalate",
    "EscalateTo",
    "decision_to_dict",
    "label",
    "parse_label",
    "severity",
    "strictest",
]

EscalateTo = Literal["tl", "human"]
#: The four outcomes as short strings (used in examples, the audit log and the CLI).
DecisionLabel = Literal["allow", "tl", "human", "deny"]


@dataclass(frozen=True, slots=True)
class Allow:
    """Let the tool call run."""

    reason: str = ""


@dataclass(frozen=True, slots=True)
class Deny:
    """Block the tool call; ``reason`` is shown to the agent."""

    reason: str = ""


@dataclass(frozen=True, slots=True)
class Escalate:
    """Ask someone: the team lead agent (``"tl"``) or a human (``"human"``)."""

    to: EscalateTo
    reason: str = ""


Decision = Allow | Deny | Escalate

_SEVERITY: dict[DecisionLabel, int] = {"allow": 0, "tl": 1, "human": 2, "deny": 3}


def label(decision: Decision) -> DecisionLabel:
    """``"allow"``, ``"tl"``, ``"human"`` or ``"deny"``."""
    if isinstance(decision, Allow):
        return "allow"
    if isinstance(decision, Deny):
        return "deny"
    return decision.to


def parse_label(text: str) -> Decision:
    """The decision named by ``text`` (``allow``, ``deny``, ``tl``, ``human``, ``ask``...)."""
    key = text.strip().lower().replace("escalate:", "").replace("escalate(", "").rstrip(")")
    if key in ("allow", "allowed"):
        return Allow()
    if key in ("deny", "denied"):
        return Deny()
    if key in ("tl", "lead", "ask", "escalate"):
        return Escalate("tl")
    if key == "human":
        return Escalate("human")
    raise ValueError(f"not a decision: {text!r} (use allow, deny, tl or human)")


def severity(decision: Decision) -> int:
    """0 (allow) to 3 (deny)."""
    return _SEVERITY[label(decision)]


def strictest(decisions: Iterable[Decision]) -> Decision:
    """The strictest decision; the first one wins ties. ``Allow()`` if there are none."""
    best: Decision | None = None
    for decision in decisions:
        if best is None or severity(decision) > severity(best):
            best = decision
    return best if best is not None else Allow("no effect")


def decision_to_dict(decision: Decision) -> dict[str, Any]:
    """``{"decision": "allow"|"deny"|"escalate", "to"?: ..., "reason": ...}``."""
    if isinstance(decision, Escalate):
        return {"decision": "escalate", "to": decision.to, "reason": decision.reason}
    return {"decision": label(decision), "reason": decision.reason}
