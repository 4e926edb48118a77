"""The tools agents call over MCP, as plain functions of (services, caller, arguments).

Each tool has a pydantic model for its arguments (:mod:`exomonad.server.tool_args`: its
JSON schema is what MCP clients see) and returns a JSON-able dict. Errors are
``ExomonadError`` instances with a message meant for the calling agent. Which role sees
which tool is configured in ``[roles.tools]`` (see :mod:`exomonad.server.config`).
"""

from __future__ import annotations

import contextlib
import functools
import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from exomonad import runtimes
from exomonad.errors import (
    CorruptFileError,
    DeliveryError,
    ExomonadError,
    GateError,
    LockError,
    PaneError,
)
from exomonad.policy import Allow, ToolRequest
from exomonad.sandbox import worker_argv
from exomonad.server.events import TaskAction, TaskChanged
from exomonad.server.identity import Identity
from exomonad.server.permissions import Verdict
from exomonad.server.services import Services
from exomonad.server.snapshot import member_pane, member_rows
from exomonad.server.threads import in_thread
from exomonad.server.tool_args import (
    AnswerPermissionArgs,
    Args,
    NoArgs,
    NotifyParentArgs,
    RemoveWorkerArgs,
    SendMessageArgs,
    SpawnWorkersArgs,
    TaskCreateArgs,
    TaskIdArgs,
    TaskListArgs,
    TaskUpdateArgs,
    ToolError,
    WorkerSpec,
)
from exomonad.server.workers import Provisioned, await_mcp, prove_gate, provision, release
from exomonad.teams import Mailbox, load_config, register_synthetic, remove_synthetic
from exomonad.teams.models import Task, now_iso
from exomonad.teams.protocol import could_be_protocol
from exomonad.teams.tasks import TaskStore
from exomonad.util.waiting import WaitTimeout, retry_until

__all__ = ["TOOLS", "Tool", "ToolError", "call_tool"]


def _done(message: str, **data: Any) -> dict[str, Any]:
    return {"ok": True, "message": message, **data}


def notify_parent(svc: Services, who: Identity, a: NotifyParentArgs) -> dict[str, Any]:
    """Report to the parent: its inbox first (locked, verified), its pane as a fallback."""
    team, text = svc.team_of(who), _report(who, a)
    try:
        mid = svc.lead.tell(team, who.parent, sender=who.name, text=text, summary=_summary(who))
    except _NOT_IN_INBOX as exc:  # corrupt: never overwritten
        return _notify_by_pane(svc, who, team, text, exc)
    return _notified(svc, who, mid)


async def notify_parent_on_loop(svc: Services, who: Identity,
                                a: NotifyParentArgs) -> dict[str, Any]:  # fmt: skip
    """:func:`notify_parent` for the event loop: the caller awaits its entry's group write
    (done by the inbox appender, :mod:`exomonad.server.appender`) instead of holding a
    thread of its own; the pane fallback, which types into tmux, runs in a thread."""
    team, text = svc.team_of(who), _report(who, a)
    try:
        mid = await svc.lead.tell_on_loop(team, who.parent, sender=who.name, text=text,
                                          summary=_summary(who))  # fmt: skip
    except _NOT_IN_INBOX as exc:
        return await in_thread(_notify_by_pane, svc, who, team, text, exc)
    return _notified(svc, who, mid)


#: Why a report may go to the parent's pane instead of its inbox.
_NOT_IN_INBOX = (DeliveryError, LockError, CorruptFileError)


def _report(who: Identity, a: NotifyParentArgs) -> str:
    if not a.message.strip():
        raise ToolError("message is empty: say what you did, found or need")
    pr = f" (PR #{a.pr_number})" if a.pr_number is not None else ""
    return f"[from: {who.name}] {a.status}{pr}: {a.message}"


def _summary(who: Identity) -> str:
    return f"Agent update: {who.name}"


def _notified(svc: Services, who: Identity, mid: str) -> dict[str, Any]:
    svc.counters["notify_inbox"] += 1
    return _done(f"delivered to {who.parent}'s inbox", messageId=mid, via="inbox")


def _notify_by_pane(
    svc: Services, who: Identity, team: str, text: str, exc: Exception
) -> dict[str, Any]:
    pane = _pane_of(svc, team, who.parent)
    if pane is None:
        raise ToolError(
            f"could not deliver to {who.parent}: {exc}; no pane to fall back to"
        ) from exc
    try:
        svc.backend.deliver(pane, text, sender=who.name)
    except PaneError as pexc:
        raise ToolError(f"inbox failed ({exc}) and pane {pane} failed ({pexc})") from pexc
    svc.counters["notify_pane"] += 1
    svc.feeds.typed_instead(team, who.parent, {"from": who.name, "text": text,
                                               "timestamp": now_iso()})  # fmt: skip
    return _done(f"inbox failed ({exc}); typed into {who.parent}'s pane {pane}", via="pane")


def _pane_of(svc: Services, team: str, member: str) -> str | None:
    m = load_config(svc.paths(team)).member(member)
    return None if m is None else member_pane(m.pane, m.tmux_pane_id)


def send_message(svc: Services, who: Identity, a: SendMessageArgs) -> dict[str, Any]:
    """Message any member of the caller's team; unknown recipients are refused."""
    if not a.text.strip():
        raise ToolError("text is empty")
    if could_be_protocol(a.text):  # e.g. a forged permission_response to oneself
        raise ToolError(
            "send_message carries plain text: protocol messages (permission, "
            "shutdown, plan, task) are sent by Claude Code and ExoMonad only"
        )
    mid = svc.mailbox(svc.team_of(who)).send(a.to, sender=who.name, text=a.text, summary=a.summary)
    svc.counters["send_message"] += 1
    return _done(f"sent to {a.to}", messageId=mid)


def team_status(svc: Services, who: Identity, _: NoArgs) -> dict[str, Any]:
    """Members, their presence and how many messages wait for each."""
    team = svc.team_of(who)
    lead, members = member_rows(svc, team)
    return {"team": team, "lead": lead, "you": who.name, "members": members}


def _tasks(svc: Services, who: Identity) -> TaskStore:
    return TaskStore(svc.paths(svc.team_of(who)))


def task_list(svc: Services, who: Identity, a: TaskListArgs) -> dict[str, Any]:
    """The team's tasks."""
    tasks = [t.to_json() for t in _tasks(svc, who).list() if a.status in (None, t.status)]
    return {"tasks": tasks}


def task_get(svc: Services, who: Identity, a: TaskIdArgs) -> dict[str, Any]:
    """One task."""
    return _tasks(svc, who).get(a.task_id).to_json()


def _changed(svc: Services, who: Identity, action: TaskAction, task: Task) -> dict[str, Any]:
    data = task.to_json()
    svc.bus.publish(TaskChanged(team=svc.team_of(who), action=action, by=who.name, task=data))
    return data


def task_create(svc: Services, who: Identity, a: TaskCreateArgs) -> dict[str, Any]:
    """Create a task (Claude Code's .lock / .highwatermark protocol)."""
    task = _tasks(svc, who).create(a.subject, a.description, blocked_by=a.blocked_by)
    return _changed(svc, who, "created", task)


def task_update(svc: Services, who: Identity, a: TaskUpdateArgs) -> dict[str, Any]:
    """Update a task's status, subject or description: the lead any task, anyone else
    only its own (found probing: a worker completed the lead's task, which unblocked
    the next one for it to claim, and rewrote another worker's description)."""
    changes = a.model_dump(exclude={"task_id"}, exclude_none=True)
    owned_by = None if who.role == svc.config.lead.role else who.name
    task = _tasks(svc, who).update(a.task_id, owned_by=owned_by, **changes)
    return _changed(svc, who, "updated", task)


def task_claim(svc: Services, who: Identity, a: TaskIdArgs) -> dict[str, Any]:
    """Claim a task for the caller (refused if owned, completed or blocked)."""
    return _changed(svc, who, "claimed", _tasks(svc, who).claim(a.task_id, who.name))


def spawn_workers(svc: Services, who: Identity, a: SpawnWorkersArgs) -> dict[str, Any]:
    """Open a pane per worker (in its own worktree and branch unless configured off),
    wait until each is ready, register it, send it its task."""
    team = svc.team_of(who)
    paths = svc.paths(team)
    cfg = svc.config.workers
    started: list[tuple[WorkerSpec, Provisioned, str, str]] = []
    for w in a.workers:
        runtime = runtimes.get(w.runtime or cfg.runtime_of(w.command or cfg.command)).name
        worker = provision(svc, w.name, team, parent=who.name, runtime=runtime)
        env = worker.env(svc.state_dir)
        try:
            command = w.command or cfg.command_for(runtime)
            argv = worker_argv(shlex.split(command), sandbox=cfg.sandbox, worktree=worker.cwd,
                               state_dir=svc.state_dir, name=w.name, team=team,
                               branch=worker.identity.branch)  # fmt: skip
            pane = svc.backend.spawn(argv, cwd=worker.cwd or str(svc.state_dir.parent),
                                     env=env, name=w.name, target=cfg.tmux_session)  # fmt: skip
        except ExomonadError:
            release(svc, w.name, team)  # a fresh worktree is clean: removed again
            raise
        started.append((w, worker, pane, runtime))
    spawned, refused = [], []
    for w, worker, pane, runtime in started:  # started together, awaited in turn
        marker = cfg.marker_for(runtime)
        ready = _await_ready(svc, pane, marker) if marker else True
        if ready and runtimes.get(runtime).waits_for_mcp:
            ready = await_mcp(svc, team, w.name, cfg.ready_timeout)
        try:
            prove_gate(svc, team, w.name, runtime, functools.partial(svc.backend.deliver, pane),
                       cfg.ready_timeout)  # fmt: skip
        except GateError as exc:  # no gate, no start: stopped before it reads its task
            with contextlib.suppress(ExomonadError):
                svc.backend.kill(pane)
            release(svc, w.name, team)
            refused.append({"name": w.name, "error": str(exc)})
            continue
        register_synthetic(paths, w.name, agent_type=runtime, pane=pane, cwd=worker.cwd)
        mid = svc.mailbox(team).send(w.name, sender=who.name, text=w.task) if w.task else None
        spawned.append({"name": w.name, "pane": pane, "ready": ready, "taskMessageId": mid,
                        "worktree": worker.identity.worktree,
                        "branch": worker.identity.branch})  # fmt: skip
    if refused and not spawned:
        raise GateError("; ".join(r["error"] for r in refused))
    note = "".join(f"; refused {r['name']}: {r['error']}" for r in refused)
    return _done(f"spawned {len(spawned)} worker(s) in team {team}{note}", workers=spawned,
                 refused=refused)  # fmt: skip


def _await_ready(svc: Services, pane: str, marker: str) -> bool:
    """Wait for the worker's ready marker; False (task still queued) on timeout."""
    try:
        retry_until(lambda: marker in svc.backend.capture(pane).replace("\n", " "),
                    timeout=svc.config.workers.ready_timeout, interval=0.1)  # fmt: skip
    except (WaitTimeout, PaneError):
        return False  # the watcher still delivers (and retries a dead pane)
    return True


def remove_worker(svc: Services, who: Identity, a: RemoveWorkerArgs) -> dict[str, Any]:
    """Close a worker's pane and remove it from the team; its worktree is removed only
    when clean and merged or pushed (else kept, and the answer says where and why)."""
    team = svc.team_of(who)
    pane = _pane_of(svc, team, a.name)
    if not remove_synthetic(svc.paths(team), a.name):
        raise ToolError(f"{a.name!r} is not an ExoMonad worker of team {team!r}")
    if pane is not None and svc.backend.exists(pane):
        svc.backend.kill(pane)
    removal = release(svc, a.name, team)
    note = f"; {removal.message()}" if removal is not None else ""
    return _done(f"removed {a.name}{note}", pane=pane,
                 worktree=removal.to_json() if removal is not None else None)  # fmt: skip


def answer_permission(svc: Services, who: Identity, a: AnswerPermissionArgs) -> dict[str, Any]:
    """Approve or deny a teammate's permission_request (the waiting tool call resumes)."""
    decision = svc.gatekeeper.answer(a.request_id, a.approve, who, a.reason)
    return _done(f"{'approved' if a.approve else 'denied'} {a.request_id}",
                 decision=type(decision).__name__.lower())  # fmt: skip


@dataclass(frozen=True)
class Tool:
    """A tool: its name, description, argument model and implementation."""

    name: str
    description: str
    args: type[Args]
    fn: Callable[[Services, Identity, Any], dict[str, Any]]


def _tool(fn: Callable[[Services, Identity, Any], dict[str, Any]], args: type[Args]) -> Tool:
    return Tool(fn.__name__, (fn.__doc__ or "").strip(), args, fn)


TOOLS: dict[str, Tool] = {
    t.name: t
    for t in (
        _tool(notify_parent, NotifyParentArgs),
        _tool(send_message, SendMessageArgs),
        _tool(team_status, NoArgs),
        _tool(task_list, TaskListArgs),
        _tool(task_get, TaskIdArgs),
        _tool(task_create, TaskCreateArgs),
        _tool(task_update, TaskUpdateArgs),
        _tool(task_claim, TaskIdArgs),
        _tool(spawn_workers, SpawnWorkersArgs),
        _tool(remove_worker, RemoveWorkerArgs),
        _tool(answer_permission, AnswerPermissionArgs),
    )
}


#: Tools that read a few small files, take no file lock and never wait: the locks they
#: meet are held by other threads for microseconds, a small state file's rewrite or one
#: local SQLite transaction of the GitHub poller (``team_status`` with polling on) at
#: most. The MCP server answers them on its event loop when the policy allows that
#: (:func:`Gatekeeper.loop_policy <exomonad.server.permissions.Gatekeeper.loop_policy>`;
#: ``mcp_app.answer_call``).
LOOP_SAFE = frozenset({"team_status", "task_get", "task_list"})
#: Tools with a form the event loop awaits (what blocks in it runs elsewhere), used
#: when the policy allows that, as for :data:`LOOP_SAFE`.
ON_LOOP: dict[str, Callable[[Services, Identity, Any], Awaitable[dict[str, Any]]]] = {
    "notify_parent": notify_parent_on_loop,
}


def call_tool(svc: Services, who: Identity, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Check the role, validate the arguments, ask the policy (waiting for an answer to
    an escalation), run the tool."""
    tool, args, req = prepare_call(svc, who, name, arguments)
    verdict = svc.gatekeeper.check(req, who, tool_mailbox(svc, who))
    return run_allowed(svc, who, tool, args, verdict)


def prepare_call(svc: Services, who: Identity, name: str,
                 arguments: dict[str, Any]) -> tuple[Tool, Args, ToolRequest]:  # fmt: skip
    """Check the role and validate the arguments: the tool, its arguments and the request
    the policy judges."""
    tool = TOOLS.get(name)
    if tool is None or not svc.config.roles.allows(who.role, name):
        raise ToolError(f"tool {name!r} is not available to role {who.role!r}")
    args = tool.args.model_validate(arguments)
    req = ToolRequest("mcp", role=who.role, agent=who.name, tool_name=name,
                      tool_input=arguments, team=who.team, cwd=who.worktree,
                      worktree=who.worktree, branch=who.branch)  # fmt: skip
    return tool, args, req


def tool_mailbox(svc: Services, who: Identity) -> Mailbox | None:
    """Where an escalation of ``who``'s tool call goes to its lead (None: no team)."""
    return svc.mailbox(who.team) if who.team else None


def run_allowed(svc: Services, who: Identity, tool: Tool, args: Args,
                verdict: Verdict) -> dict[str, Any]:  # fmt: skip
    """Run ``tool`` if the policy's ``verdict`` allows it; refuse it otherwise."""
    admit(svc, tool, verdict)
    return tool.fn(svc, who, args)


def admit(svc: Services, tool: Tool, verdict: Verdict) -> None:
    """Refuse ``tool`` unless the policy's ``verdict`` allows it; count it."""
    if not isinstance(verdict.decision, Allow):
        raise ToolError(f"{tool.name} refused by policy: {verdict.decision.reason}")
    svc.counters[f"tool:{tool.name}"] += 1
