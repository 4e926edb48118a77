"""Answers to the agents' hooks (every runtime's), computed in the server.

The hook client (``exomonad hook EVENT --runtime R``) posts the hook's stdin JSON here and
prints what comes back, exiting with the code given, so the client stays small and fast.
What differs between runtimes (event names, answer shapes) is asked of the runtime
(:mod:`exomonad.runtimes`).

Events, by ExoMonad's names (each runtime's map onto them): ``session-start``,
``user-prompt-submit`` (Gemini ``before-agent``), ``pre-tool-use`` (``before-tool``),
``post-tool-use`` (``after-tool``), ``stop`` (``after-agent``), ``session-end``.

:func:`hook_request` is the ``/hook`` route's whole answer and never raises: like the
hook client, it escalates a tool-gating hook whose input is above the bounds
(:data:`~exomonad.hookclient.MAX_BODY` bytes, :data:`~exomonad.hookclient.MAX_DEPTH`
levels, a shell command over :data:`MAX_COMMAND` bytes, whose classification would take
seconds), denies one whose input is not a JSON object or whose handling failed, and lets
any other event go ahead with a note.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from exomonad import runtimes
from exomonad.ancestry import other_agent
from exomonad.bridge.registry import Activity, SessionInfo
from exomonad.errors import ExomonadError
from exomonad.hookclient import MAX_BODY, MAX_DEPTH, stdout_line, too_deep
from exomonad.policy import Allow, Deny, Escalate, ToolRequest
from exomonad.policy.hook_output import hook_output
from exomonad.server.github import saw_actions
from exomonad.server.identity import Identity
from exomonad.server.permissions import verdict_output
from exomonad.server.services import Services
from exomonad.teams import remove_all_synthetic
from exomonad.teams.models import now_iso
from exomonad.teams.protocol import IdleNotification, encode

__all__ = [
    "CLAIM_HEADER",
    "MAX_COMMAND",
    "ForeignSessionError",
    "HookAnswer",
    "handle_hook",
    "hook_request",
]

log = logging.getLogger("exomonad.server")

#: Header the shell front (``exomonad-hook``) sets to ``lead`` when the token it sends is
#: ``lead.token``, read for a hook that has none of its own (:func:`hook_request`).
CLAIM_HEADER = "x-exomonad-claim"
#: Longest shell command (``tool_input.command``) classified; a longer one is escalated.
MAX_COMMAND = 256 << 10

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

    def as_text(self, runtime: str) -> str:
        """The answer as the shell front ``exomonad-hook`` reads it: ``exomonad-hook
        CODE``, the stderr line, the stdout line (:func:`~exomonad.hookclient.stdout_line`,
        what the Python client prints), ``end`` (so a cut answer is never taken)."""
        err = " ".join(self.stderr.splitlines())
        return f"exomonad-hook {self.exit_code}\n{err}\n{stdout_line(runtime, self.output)}\nend"


class ForeignSessionError(ExomonadError):
    """A hook names a session another agent's hooks registered."""


def _session(svc: Services, who: Identity, runtime: str, p: dict[str, Any]) -> SessionInfo:
    """The session ``p`` names, registered for ``who`` when new. A session belongs to
    whoever registered it: a hook that names another agent's (found probing: a worker's
    code posted a hook with the lead's ``session_id`` and a pane header, and the lead's
    pane fallback then typed the worker's report into a person's shell) is refused
    (:class:`ForeignSessionError`; a gating hook is denied), also when a tokenless hook
    registered it (a worker once took a Claude teammate's session and locked it out)."""
    sid = str(p.get("session_id") or f"anon-{who.name}")
    known = svc.registry.session(sid)
    pane = p.get("_pane") if isinstance(p.get("_pane"), str) else None
    if known is not None and (known.name, known.role) != (who.name, who.role):
        svc.counters["foreign_session"] += 1
        log.warning("%s (%s) named session %s of %s (%s): refused", who.name, who.role,
                    sid, known.name, known.role)  # fmt: skip
        raise ForeignSessionError(f"session {sid!r} is not {who.name}'s")
    if known is not None:
        if pane and known.pane != pane:
            known.pane = pane
            svc.registry.register(known)
        return known
    info = SessionInfo(sid, runtime, who.name, who.role, who.team or svc.registry.current,
                       p.get("cwd"), pane=pane)  # fmt: skip
    svc.registry.register(info)
    return info


def _transition(svc: Services, who: Identity, info: SessionInfo, activity: Activity) -> bool:
    """``who``'s session is active or idle now: noted as its presence, and recorded in
    the registry; True if the session's activity changed."""
    if who.authenticated:
        svc.presence.note(who.team or info.team, who.name, activity, "hook")
    return svc.registry.transition(info.session_id, activity)


def _session_start(svc: Services, who: Identity, runtime: str, p: dict[str, Any]) -> HookAnswer:
    info = _session(svc, who, runtime, p)
    if who.team is not None or not runtimes.get(runtime).can_lead or \
            who.role != svc.config.lead.role:  # fmt: skip
        return HookAnswer()
    # The lead. Today's Claude Code makes a session team at start: adopt it if present
    # (else the watcher adopts it when its config.json appears, by leadSessionId).
    session_team = f"session-{info.session_id[:8]}"
    if svc.paths(session_team).config_file.exists():
        svc.lead.adopt(info.session_id, session_team)
        return HookAnswer()
    if svc.dialect.team_create:
        return HookAnswer(
            {
                "hookSpecificOutput": {
                    "hookEventName": "SessionStart",
                    "additionalContext": TEAM_CREATE_CONTEXT,
                }
            }
        )
    return HookAnswer()


def _pre_tool_use(svc: Services, who: Identity, runtime: str, p: dict[str, Any]) -> HookAnswer:
    info = _session(svc, who, runtime, p)
    _transition(svc, who, info, "active")
    tool = p.get("tool_name")
    svc.counters["hook_pre_tool_use"] += 1
    req = ToolRequest.from_hook(
        runtime, p, role=who.role, agent=who.name, team=who.team, worktree=who.worktree,
        branch=who.branch,
    )  # fmt: skip
    mailbox = svc.mailbox(who.team) if who.team else None
    verdict = svc.gatekeeper.check(req, who, mailbox)
    if isinstance(verdict.decision, Allow) and tool == "TeamDelete" and _steers_team(svc, who, p) \
            and svc.registry.current:  # fmt: skip
        # Claude Code refuses to delete a team with active members: clear ours first
        # (the lead's own call, once allowed: a worker's hook once emptied the team).
        removed = remove_all_synthetic(svc.paths(svc.registry.current))
        log.info("TeamDelete: removed synthetic members %s", removed)
    if not isinstance(verdict.decision, Deny):
        saw_actions(svc, who, verdict.actions, req.cwd)  # gh pr create: watch its branch
    return HookAnswer(verdict_output(runtime, verdict, str(p.get("_event") or "")))


def _post_tool_use(svc: Services, who: Identity, runtime: str, p: dict[str, Any]) -> HookAnswer:
    info = _session(svc, who, runtime, p)
    tool, args = p.get("tool_name"), p.get("tool_input") or {}
    team = args.get("team_name") if isinstance(args, dict) else None
    if not _steers_team(svc, who, p):
        return HookAnswer()  # only the lead's team calls move the project's team
    if tool == "TeamCreate" and isinstance(team, str):
        svc.lead.adopt(info.session_id, team)
    elif tool == "TeamDelete":
        gone = team if isinstance(team, str) else info.team
        if gone:
            svc.registry.forget_team(gone)
    return HookAnswer()


def _steers_team(svc: Services, who: Identity, p: dict[str, Any]) -> bool:
    """Whether ``who``'s ``TeamCreate``/``TeamDelete`` may move the project's team: the
    lead's; a tokenless hook's only from a process in no other agent's session (a
    person's, or the lead's own whose claim was not read). A worker's (its token, or its
    code posting with none) never: found probing, one emptied and one moved the team."""
    if who.authenticated:
        return who.role == svc.config.lead.role
    peer = p.get("_peer")
    return not isinstance(peer, int) or other_agent(peer) is None


def _activity(svc: Services, who: Identity, runtime: str, p: dict[str, Any]) -> HookAnswer:
    _transition(svc, who, _session(svc, who, runtime, p), "active")
    return HookAnswer()


def _prompt(svc: Services, who: Identity, runtime: str, p: dict[str, Any]) -> HookAnswer:
    """A prompt: the agent is active, unless it is its own gate probe, which proves its
    gate live and is discarded before the model reads it (:mod:`.gateprobe`)."""
    prompt, runner = p.get("prompt"), runtimes.get(runtime)
    if runner.gate_probe and who.authenticated and isinstance(prompt, str) and \
            svc.gate_probes.seen(who.team, who.name, prompt):  # fmt: skip
        _session(svc, who, runtime, p)
        svc.counters["gate_probes"] += 1
        return HookAnswer(runner.discard_prompt("ExoMonad: gate check passed"))
    return _activity(svc, who, runtime, p)


def _stop(svc: Services, who: Identity, runtime: str, p: dict[str, Any]) -> HookAnswer:
    """Tell the parent once per idle transition (Gemini's AfterAgent fires every turn)."""
    info = _session(svc, who, runtime, p)
    if not _transition(svc, who, info, "idle") or who.team is None:
        return HookAnswer()
    note = IdleNotification(from_=who.name, timestamp=now_iso(), idle_reason="available")
    try:
        svc.mailbox(who.team).send(who.parent, sender=who.name, text=encode(note))
        svc.counters["idle_notifications"] += 1
    except ExomonadError as exc:
        return HookAnswer(stderr=f"exomonad: idle notification not delivered: {exc}")
    return HookAnswer()


def _session_end(svc: Services, who: Identity, runtime: str, p: dict[str, Any]) -> HookAnswer:
    """The session's agent exited: its pane is no longer the agent's (a lead that quit
    leaves its shell there, where the lead's pane fallback would type a report as a
    command line), so the session keeps no pane until a hook of it names one again."""
    info = _session(svc, who, runtime, p)
    if info.pane is not None:
        info.pane = None
        svc.registry.register(info)
    return HookAnswer()


_HANDLERS = {
    "session-start": _session_start,
    "user-prompt-submit": _prompt,
    "pre-tool-use": _pre_tool_use,
    "post-tool-use": _post_tool_use,
    "stop": _stop,
    "session-end": _session_end,
}


def handle_hook(
    svc: Services, who: Identity, event: str, runtime: str, payload: dict[str, Any]
) -> HookAnswer:
    """Answer one hook; unknown events get an empty answer (never a failure)."""
    payload["_event"] = event  # the runtime's own name: some answer in their own shape
    event = runtimes.get(runtime).event(event)
    handler = _HANDLERS.get(event)
    if handler is None:
        return HookAnswer(stderr=f"exomonad: no handler for hook event {event!r}")
    svc.counters["hooks"] += 1
    return handler(svc, who, runtime, payload)


def refuse(event: str, runtime: str, kind: str, why: str) -> HookAnswer:
    """A tool-gating hook denied (``kind="deny"``) or escalated (``"ask"``) because of
    ``why``; any other event answered with no decision and a note."""
    known = runtimes.RUNTIMES.get(runtime)
    if known is not None and not known.gates(event):
        return HookAnswer(stderr=f"exomonad: {why}; hook {event} answered with no decision")
    reason = f"ExoMonad: {why}"
    kind = (known or runtimes.CLAUDE).unattended(kind)
    decision = Deny(reason) if kind == "deny" else Escalate("human", reason)
    shape = (known or runtimes.CLAUDE).name  # a runtime we do not know: deny all the same
    return HookAnswer(hook_output(shape, decision, event), stderr=f"exomonad: {why}")


def _unlinked(svc: Services, who: Identity, event: str, runtime: str) -> str | None:
    """Why a worker's gating hook is refused whatever it asks: its worktree's link to
    the repository was changed (:mod:`exomonad.gitlink`; its git commands would work on
    another repository, the lead's ``main`` included), or None."""
    known = runtimes.RUNTIMES.get(runtime)
    if not who.worktree or (known is not None and not known.gates(event)):
        return None
    path = Path(who.worktree)
    if path.parent != svc.worktrees.base_dir:
        return None  # not a worktree ExoMonad made (workers without one)
    fault = svc.worktrees.fault(path, config=False)
    if fault is None:
        return None
    svc.counters["worktree_unlinked"] += 1
    log.warning("worker %s: worktree %s unlinked: %s", who.name, path, fault)
    return (
        f"worker {who.name}'s worktree is no longer linked to the project as ExoMonad made "
        f"it ({fault}): every call is refused until a person repairs it "
        "(`git worktree repair`, or remove the worker)"
    )


def hook_request(
    svc: Services, event: str, runtime: str, body: bytes | None, token: str | None,
    pane: str | None, peer: int | None = None, lead_claim: bool = False,
) -> HookAnswer:  # fmt: skip
    """Answer one ``/hook`` request (``body`` None: larger than the bound); never raises.

    ``lead_claim``: ``token`` is ``lead.token`` the shell front read for a tokenless hook
    (:meth:`Services.identify_lead_claim`)."""
    try:
        if body is None:
            return refuse(event, runtime, "ask", f"hook input larger than {MAX_BODY} bytes")
        if too_deep(body):
            return refuse(event, runtime, "ask", f"hook input nested deeper than {MAX_DEPTH}")
        try:
            payload = orjson.loads(body or b"{}")
        except orjson.JSONDecodeError as exc:
            return refuse(event, runtime, "deny", f"hook input is not JSON ({exc})")
        if not isinstance(payload, dict):
            return refuse(event, runtime, "deny", "hook input is not a JSON object")
        args = payload.get("tool_input")
        command = args.get("command") if isinstance(args, dict) else None
        if isinstance(command, str) and len(command) > MAX_COMMAND:
            return refuse(event, runtime, "ask", f"shell command longer than {MAX_COMMAND} bytes")
        # What the transport says, never what the input says (it is the agent's text):
        # the pane header, and the peer (-1 when the kernel did not say: no one's).
        payload["_pane"] = pane or None
        payload["_peer"] = peer if peer is not None else -1
        who = svc.identify_lead_claim(token, peer, runtime) if lead_claim else \
            svc.identify(token, peer)  # fmt: skip
        fault = _unlinked(svc, who, event, runtime)
        if fault is not None:
            return refuse(event, runtime, "deny", fault)
        return handle_hook(svc, who, event, runtime, payload)
    except ForeignSessionError as exc:
        return refuse(event, runtime, "deny", str(exc))
    except Exception as exc:
        log.exception("hook %s failed", event)
        return refuse(event, runtime, "deny", f"the server failed on this hook ({exc!r:.200})")
