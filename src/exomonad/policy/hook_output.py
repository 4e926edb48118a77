"""A policy decision as a tool-gating hook's answer, in the runtime's shape.

The shapes live with the runtimes (:meth:`exomonad.runtimes.Runtime.decision_output`);
an ``Escalate`` answers ``ask``, so the runtime asks whoever it asks.

>>> hook_output("gemini", Deny("no"))
{'decision': 'deny', 'reason': 'no'}
"""

from __future__ import annotations

from typing import Any

from exomonad import runtimes
from exomonad.policy.decisions import Allow, Decision, Deny

__all__ = ["hook_output"]


def hook_output(runtime: str, decision: Decision, event: str = "") -> dict[str, Any]:
    """The hook's stdout JSON for ``decision`` in ``runtime``'s shape for hook ``event``
    (the hook client's name for it; :meth:`~exomonad.runtimes.Runtime.answer`)."""
    kind = "ask"
    if isinstance(decision, Allow):
        kind = "allow"
    elif isinstance(decision, Deny):
        kind = "deny"
    reason = decision.reason or f"ExoMonad policy: {kind}"
    return runtimes.get(runtime).answer(event, kind, reason)
