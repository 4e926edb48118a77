"""Judge recorded tool calls again: ``exomonad policy test`` and ``exomonad policy replay``.

Before a new policy goes live, a user checks it against what their agents really did:

* ``test FILE.jsonl``: each line one tool call as a hook sends it (``runtime``, ``role``,
  ``agent``, ``tool_name``, ``tool_input``, optional ``cwd``, ``worktree``, ``branch``,
  ``mcp_context``, ``expect``); every call is classified and judged, and an
  ``expect``\\ ed label that does not come out is a failure;
* ``replay [audit.jsonl]``: each line a decision from the audit log; its recorded typed
  actions are judged again (with the context recorded beside them) and every decision
  that would now differ is shown.

>>> from exomonad.policy.default import DEFAULT_POLICY
>>> [r.now for r in judge_calls(DEFAULT_POLICY, [{"runtime": "claude", "role": "dev",
...     "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}, "expect": "deny"}])]
['deny']
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from exomonad.policy.actions import Action, action_from_dict
from exomonad.policy.cascade import decide_request, judge_all
from exomonad.policy.decisions import label
from exomonad.policy.errors import PolicyError
from exomonad.policy.model import Policy
from exomonad.policy.request import RUNTIMES, Context, Runtime, ToolRequest, mcp_context_of

__all__ = ["Outcome", "judge_audit", "judge_calls", "read_jsonl"]


@dataclass(frozen=True)
class Outcome:
    """One recorded call judged again: what it was (or was expected), what it is now."""

    line: int
    what: str
    before: str | None  # the recorded decision, or the expected one; None: neither
    now: str
    reason: str

    @property
    def changed(self) -> bool:
        """The decision differs from the recorded (or expected) one."""
        return self.before is not None and self.before != self.now

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"line": self.line, "what": self.what, "before": self.before, "now": self.now,
                "reason": self.reason, "changed": self.changed}  # fmt: skip


def _runtime(value: Any) -> Runtime:
    for runtime in RUNTIMES:
        if value == runtime:
            return runtime
    raise ValueError(f"runtime must be one of {', '.join(RUNTIMES)}, not {value!r}")


def _opt(record: Mapping[str, Any], key: str) -> str | None:
    value = record.get(key)
    return value if isinstance(value, str) else None


def judge_calls(policy: Policy, records: Iterable[Mapping[str, Any]], *,
               project_root: str | None = None, state_dir: str | None = None
               ) -> list[Outcome]:  # fmt: skip
    """Classify and judge each recorded call (see the module doc); a record that cannot
    be read is an outcome ``error`` (never skipped)."""
    out = []
    for n, record in enumerate(records, 1):
        try:
            tool_input = record.get("tool_input") or {}
            if not isinstance(tool_input, Mapping):
                raise ValueError("tool_input is not an object")
            req = ToolRequest(_runtime(record.get("runtime", "claude")),
                              str(record.get("role", "dev")), str(record.get("agent", "")),
                              str(record.get("tool_name", "")), tool_input,
                              cwd=_opt(record, "cwd"), worktree=_opt(record, "worktree"),
                              branch=_opt(record, "branch"),
                              mcp_context=mcp_context_of(record))  # fmt: skip
            decision, actions, _ = decide_request(policy, req, project_root=project_root,
                                                  state_dir=state_dir)  # fmt: skip
            what = "; ".join(a.describe() for a in actions) or req.tool_name
            out.append(Outcome(n, what, _opt(record, "expect"), label(decision),
                               decision.reason))  # fmt: skip
        except (ValueError, TypeError) as exc:
            out.append(Outcome(n, repr(dict(record))[:200], _opt(record, "expect"), "error",
                               str(exc)))  # fmt: skip
    return out


def judge_audit(policy: Policy, records: Iterable[Mapping[str, Any]], *,
                 project_root: str | None = None, state_dir: str | None = None
                 ) -> list[Outcome]:  # fmt: skip
    """Judge each audit record's typed actions again with its recorded context."""
    out = []
    for n, record in enumerate(records, 1):
        try:
            actions: list[Action] = [action_from_dict(dict(a)) for a in record["actions"]]
            ctx = Context(role=str(record.get("role", "")), agent=str(record.get("agent", "")),
                          runtime=_runtime(record.get("runtime", "claude")),
                          cwd=_opt(record, "cwd"), worktree=_opt(record, "worktree"),
                          branch=_opt(record, "branch"), project_root=project_root,
                          state_dir=state_dir,
                          protected_branches=tuple(policy.protected_branches))  # fmt: skip
            decision, _ = judge_all(policy, actions, ctx)
            what = "; ".join(a.describe() for a in actions)
            out.append(Outcome(n, what, _opt(record, "decision"), label(decision),
                               decision.reason))  # fmt: skip
        except (KeyError, ValueError, TypeError) as exc:
            out.append(Outcome(n, repr(dict(record))[:200], _opt(record, "decision"), "error",
                               f"unreadable audit record: {exc}"))  # fmt: skip
    return out


def read_jsonl(text: str) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL text (blank lines skipped); a bad line is an error
    naming its number, never silently dropped."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise PolicyError(f"line {n}: not JSON ({exc})") from exc
        if not isinstance(value, dict):
            raise PolicyError(f"line {n}: not a JSON object")
        out.append(value)
    return out
