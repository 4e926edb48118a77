"""The engine the server calls: ``PolicyEngine.decide(request) -> Decision``.

Synchronous and thread-safe; in steady state a decision is one ``stat`` of the policy
file, a classification and a walk over a few grants (well under a millisecond). Each
decision is written to the audit log if one is configured.

>>> engine = PolicyEngine()
>>> engine.decide(ToolRequest("claude", "dev", "dev1", "Bash", {"command": "rm -rf /"},
...                           cwd="/w"))
Deny(reason='deleting a system, home or project dir: delete -r /')
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from exomonad.policy.actions import Action, action_to_dict
from exomonad.policy.audit import AuditLog, AuditSink
from exomonad.policy.cascade import decide_request
from exomonad.policy.decisions import Decision, label
from exomonad.policy.loader import LoadedPolicy, PolicyStore
from exomonad.policy.request import ToolRequest
from exomonad.state import ensure_state_dir, find_state_dir

__all__ = ["POLICY_FILE_NAME", "Evaluation", "PolicyEngine"]

#: The project policy's file name inside the state dir.
POLICY_FILE_NAME = "policy.py"


@dataclass(frozen=True)
class Evaluation:
    """A decision with its working: the actions, each one's verdict, the policy used."""

    decision: Decision
    actions: tuple[Action, ...]
    verdicts: tuple[tuple[Action, Decision], ...]
    policy_id: str
    latency_ms: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (decision label, reason, actions, policy id, latency)."""
        return {
            "decision": label(self.decision),
            "reason": self.decision.reason,
            "actions": [action_to_dict(a) for a in self.actions],
            "policy_id": self.policy_id,
            "latency_ms": round(self.latency_ms, 3),
        }


class PolicyEngine:
    """Judges tool calls with the store's current policy.

    Parameters
    ----------
    store:
        Where the policy comes from (default: the built-in policy only).
    audit:
        Where decisions are recorded (default: nowhere).
    project_root, state_dir:
        For path rules: the project and its ``.exomonad/`` (agents may not write there).
    """

    def __init__(
        self,
        store: PolicyStore | None = None,
        *,
        audit: AuditSink | None = None,
        project_root: str | Path | None = None,
        state_dir: str | Path | None = None,
    ) -> None:
        self.store = store if store is not None else PolicyStore(None)
        self.audit = audit
        self.state_dir = str(state_dir) if state_dir is not None else None
        if project_root is None and state_dir is not None:
            project_root = Path(state_dir).parent
        self.project_root = str(project_root) if project_root is not None else None

    @classmethod
    def for_project(cls, state_dir: Path | None = None, *, audit: bool = True) -> PolicyEngine:
        """The engine for a project: ``<state>/policy.py``, ``<state>/audit.jsonl``."""
        state = (state_dir or find_state_dir(create=True)).resolve()
        ensure_state_dir(state)
        return cls(
            PolicyStore(state / POLICY_FILE_NAME),
            audit=AuditLog(state / "audit.jsonl") if audit else None,
            state_dir=state,
        )

    def decide(self, request: ToolRequest) -> Decision:
        """The decision for ``request`` (never raises for a bad request or policy bug)."""
        return self.evaluate(request).decision

    def evaluate(self, request: ToolRequest, loaded: LoadedPolicy | None = None) -> Evaluation:
        """Like :meth:`decide`, with the actions and the policy id; decided by ``loaded``
        if given (a policy the caller took from :attr:`store`), else the current one."""
        start = time.perf_counter()
        loaded = loaded or self.store.current()  # held: a reload cannot change it
        decision, actions, verdicts = decide_request(
            loaded.policy, request, project_root=self.project_root, state_dir=self.state_dir
        )
        latency = (time.perf_counter() - start) * 1000
        result = Evaluation(decision, tuple(actions), tuple(verdicts), loaded.policy_id, latency)
        if self.audit is not None:
            self.audit.record(
                {
                    "ts": time.time(),
                    "agent": request.agent,
                    "role": request.role,
                    "runtime": request.runtime,
                    "tool": request.tool_name,
                    "cwd": request.cwd,
                    "worktree": request.worktree,
                    "branch": request.branch,
                    "actions": [action_to_dict(a) for a in actions],
                    "decision": label(decision),
                    "reason": decision.reason,
                    "policy_id": loaded.policy_id,
                    "latency_ms": round(latency, 3),
                }
            )
        return result

    def health(self) -> dict[str, Any]:
        """The store's health (policy id, version, last load error)."""
        return self.store.health()
