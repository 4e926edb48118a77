"""Worker ``w1``'s calls through the real gatekeeper of a scratch project, as the
approval popup's tests make them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from exomonad.policy import ApprovalStore, PolicyEngine, ToolRequest
from exomonad.server.permissions import Gatekeeper
from tests.policy.worker import request, scratch_worktree


@dataclass
class WorkerGate:
    """A project (its ``.exomonad/`` the ``state``), ``w1``'s worktree in it, and a
    gatekeeper on the built-in policy whose approvals wait in ``store``."""

    root: Path
    worktree: Path
    state: Path
    store: ApprovalStore
    gate: Gatekeeper

    def request(self, tool: str, data: dict[str, Any]) -> ToolRequest:
        """``w1``'s call of ``tool`` with ``data`` in its worktree."""
        return request(tool, data, str(self.worktree))


def worker_gate(tmp_path: Path, **options: Any) -> WorkerGate:
    """A :class:`WorkerGate` for the project ``tmp_path/proj``; ``options`` go to the
    :class:`~exomonad.server.permissions.Gatekeeper` (its escalations wait 60 s, then
    are denied)."""
    root, worktree = scratch_worktree(tmp_path, "proj")
    state = root / ".exomonad"
    store = ApprovalStore(state / "approvals.db")
    engine = PolicyEngine.for_project(state, audit=False)
    gate = Gatekeeper(engine, store, timeout=60, on_timeout="deny", **options)
    return WorkerGate(root, worktree, state, store, gate)
