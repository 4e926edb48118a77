"""Answers to the agents' hooks (Claude Code and Gemini CLI), computed in the server.

The hook client (``exomonad hook EVENT --runtime R``) posts the hook's stdin JSON here and
prints what comes back, exiting with the code given: all runtime-specific output shapes
live in this module, so the client stays small and fast.

Events, by their Claude Code names (Gemini's map onto them): ``session-start``,
``user-prompt-submit`` (Gemini ``before-agent``), ``pre-tool-use`` (``before-tool``),
``post-tool-use`` (``after-tool``), ``stop`` (``after-agent``), ``session-end``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from exomonad.bridge.registry import SessionInfo
from exomonad.errors import ExomonadError
from exomonad.policy import ToolRequest
from exomonad.server.identity import Identity
from exomonad.server.permissions import verdict_output
from exomonad.server.services import Services
from exomonad.teams import remove_all_synthetic
from exomonad.teams.models import now_iso
from exomonad.teams.protocol import IdleNotification, encode

__all__ = ["EVENT_ALIASES", "HookAnswer", "handle_hook"]

log = logging.getLogger("exomonad.server")

#: Gemini CLI event names → the names used here.
EVENT_ALIASES = {
    "before-agent": "user-prompt-submit",
    "before-tool": "pre-tool-use",
    "after-tool": "post-tool-use",
    "after-agent": "stop",
}

TEAM_CREATE_CONTEXT = (
    "You are the lead of an ExoMonad team. Before delegating, create a team with the "
    "TeamCreate tool; ExoMonad workers (e.g. Gemini CLI) then join it as teammates you can "
    "reach with SendMessage, and they report back to your inbox."
)


@dataclass
class HookAnswer:
    """What the hook client prints (``output`` as JSON), writes to stderr, and exits with."""

    output: dict[str, Any] = field(default_factory=dict)
    exit_code: int = 0
    stderr: str = ""


def _session(svc: Services, who: Identity, runtime: str, p: dict[str, Any]) -> SessionInfo:
    sid = str(p.get("session_id") or f"anon-{who.name}")
    known = svc.registry.session(sid)
    pane = p.get("_pane") if isinstance(p.get("_pane"), str) else None
    if known is not None:
        if pane and known.pane != pane:
            known.pane = pane
            svc.registry.register(known)
        return known
    info = SessionInfo(sid, runtime, who.name, who.role, who.team or svc.registry.current,
                       p.get("cwd"), pane=pane)  # fmt: skip
    svc.registry.register(info)
    return info


def _session_start(svc: Services, who: Identity, runtime: str, p: dict[str, Any]) -> HookAnswer:
    info = _session(svc, who, runtime, p)
    if who.team is not None or runtime != "claude" or who.role != svc.config.lead.role:
        return HookAnswer()
    # The lead. Today's Claude Code makes a session team at start: adopt it if present
    # (else the watcher adopts it when its config.json appears, by leadSessionId).
    session_team = f"session-{info.session_id[:8]}"
    if svc.paths(session_team).config_file.exists():
        svc.lead.adopt(info.session_id, session_team)
        return HookAnswer()
    if svc.dialect.team_create:
        return HookAnswer({"hookSpecificOutput": {"hookEventName": "SessionStart",
                                                  "additionalContext": TEAM_CREATE_CONTEXT}})
    return HookAnswer()


def _pre_tool_use(svc: Services, who: Identity, runtime: str, p: dict[str, Any]) -> HookAnswer:
    info = _session(svc, who, runtime, p)
    svc.registry.transition(info.session_id, "active")
    tool = p.get("tool_name")
    if tool == "TeamDelete" and svc.registry.current:
        # Claude Code refuses to delete a team with active members: clear ours first.
        removed = remove_all_synthetic(svc.paths(svc.registry.current))
        log.info("TeamDelete: removed synthetic members %s", removed)
    svc.counters["hook_pre_tool_use"] += 1
    req = ToolRequest.from_hook(
        "gemini" if runtime == "gemini" else "claude", p,
        role=who.role, agent=who.name, team=who.team, worktree=who.worktree, branch=who.branch,
    )  # fmt: skip
    mailbox = svc.mailbox(who.team) if who.team else None
    verdict = svc.gatekeeper.check(req, who, mailbox)
    return HookAnswer(verdict_output(runtime, verdict))


def _post_tool_use(svc: Services, who: Identity, runtime: str, p: dict[str, Any]) -> HookAnswer:
    info = _session(svc, who, runtime, p)
    tool, args = p.get("tool_name"), p.get("tool_input") or {}
    team = args.get("team_name") if isinstance(args, dict) else None
    if tool == "TeamCreate" and isinstance(team, str):
        svc.lead.adopt(info.session_id, team)
    elif tool == "TeamDelete":
        gone = team if isinstance(team, str) else info.team
        if gone:
            svc.registry.forget_team(gone)
    return HookAnswer()


def _activity(svc: Services, who: Identity, runtime: str, p: dict[str, Any]) -> HookAnswer:
    info = _session(svc, who, runtime, p)
    svc.registry.transition(info.session_id, "active")
    return HookAnswer()


def _stop(svc: Services, who: Identity, runtime: str, p: dict[str, Any]) -> HookAnswer:
    """Tell the parent once per idle transition (Gemini's AfterAgent fires every turn)."""
    info = _session(svc, who, runtime, p)
    if not svc.registry.transition(info.session_id, "idle") or who.team is None:
        return HookAnswer()
    note = IdleNotification(from_=who.name, timestamp=now_iso(), idle_reason="available")
    try:
        svc.mailbox(who.team).send(who.parent, sender=who.name, text=encode(note))
        svc.counters["idle_notifications"] += 1
    except ExomonadError as exc:
        return HookAnswer(stderr=f"exomonad: idle notification not delivered: {exc}")
    return HookAnswer()


def _noop(svc: Services, who: Identity, runtime: str, p: dict[str, Any]) -> HookAnswer:
    return HookAnswer()


_HANDLERS = {
    "session-start": _session_start,
    "user-prompt-submit": _activity,
    "pre-tool-use": _pre_tool_use,
    "post-tool-use": _post_tool_use,
    "stop": _stop,
    "session-end": _noop,
}


def handle_hook(
    svc: Services, who: Identity, event: str, runtime: str, payload: dict[str, Any]
) -> HookAnswer:
    """Answer one hook; unknown events get an empty answer (never a failure)."""
    event = EVENT_ALIASES.get(event, event)
    handler = _HANDLERS.get(event)
    if handler is None:
        return HookAnswer(stderr=f"exomonad: no handler for hook event {event!r}")
    svc.counters["hooks"] += 1
    return handler(svc, who, runtime, payload)
