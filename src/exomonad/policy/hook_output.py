"""A policy decision as a PreToolUse / BeforeTool hook answer, in each runtime's shape.

Claude Code: ``hookSpecificOutput.permissionDecision`` allow / deny / ask with a reason
(exit 0). Gemini CLI: ``decision`` allow / deny / ask with ``reason`` on stdout (Gemini
does not block on an exit 2 without output, so we never rely on exit codes).

>>> hook_output("gemini", Deny("no"))
{'decision': 'deny', 'reason': 'no'}
"""

from __future__ import annotations

from typing import Any

from exomonad.policy.decisions import Allow, Decision, Deny

__all__ = ["hook_output"]


def hook_output(runtime: str, decision: Decision) -> dict[str, Any]:
    """The hook's stdout JSON for ``decision`` (an Escalate answers ``ask``)."""
    kind = "ask"
    if isinstance(decision, Allow):
        kind = "allow"
    elif isinstance(decision, Deny):
        kind = "deny"
    reason = decision.reason or f"ExoMonad policy: {kind}"
    if runtime == "gemini":
        return {"decision": kind, "reason": reason}
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": kind,
            "permissionDecisionReason": reason,
        }
    }
