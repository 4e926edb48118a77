"""What ``exomonad teammate`` does once Claude Code has started it in a pane.

1. Parse Claude Code's teammate arguments (``--agent-id --agent-name --team-name
   --agent-color --parent-session-id --lead-verify-key [--agent-type T] [--model M]``
   and permission flags; unknown flags are kept).
2. Route by ``[teammate]`` config: ``claude`` → exec the real Claude Code with the same
   arguments, untouched. Otherwise run the worker command (Gemini CLI by default) on a
   pty this process owns, with a worker token from the project's server in
   ``EXOMONAD_TOKEN`` (its MCP server and hooks then know who it is).
3. Wait until the agent is ready for input, then feed it its inbox (the spawn prompt
   first) exactly once, in order, through the project's delivery ledger and
   :class:`~exomonad.panes.pty.PtyBackend` (the member's pane: the pty's device).
4. Speak the protocol: a ``shutdown_request`` is approved (``shutdown_approved`` with
   ``paneId`` and ``backendType``) and the agent stopped; idle notifications come from
   the agent's AfterAgent/Stop hook through the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from exomonad import runtimes
from exomonad.bridge.ledger import SqliteLedger
from exomonad.bridge.watcher import InboxWatcher
from exomonad.client import ServerClient, ServerError, ServerNotRunningError
from exomonad.errors import ExomonadError, GateError
from exomonad.gitgate import worker_env
from exomonad.panes.pty import PtyBackend
from exomonad.panes.pty_agent import PtyAgent
from exomonad.sandbox import worker_argv
from exomonad.server.config import ProjectConfig, load_project_config
from exomonad.state import adopt_lock_journal
from exomonad.teams import Mailbox, TeamPaths, load_config
from exomonad.teams.models import TeamConfig, message_identity, now_iso
from exomonad.teams.protocol import ShutdownApproved, ShutdownRequest, decode, encode

__all__ = ["TeammateArgs", "parse_teammate_args", "run_teammate"]

_VALUED = {"--agent-id", "--agent-name", "--team-name", "--agent-color", "--parent-session-id",
           "--lead-verify-key", "--agent-type", "--model", "--permission-mode"}  # fmt: skip


@dataclass
class TeammateArgs:
    """Claude Code's teammate command line, parsed."""

    name: str
    team: str
    agent_id: str | None = None
    agent_type: str | None = None
    color: str | None = None
    model: str | None = None
    parent_session_id: str | None = None
    argv: list[str] = field(default_factory=list)


def parse_teammate_args(argv: Sequence[str]) -> TeammateArgs:
    """Parse tolerantly (unknown flags are kept in ``argv`` for the real Claude Code).

    >>> a = parse_teammate_args(["--agent-id", "g@t", "--agent-name", "g", "--team-name", "t",
    ...                          "--dangerously-skip-permissions", "--agent-type", "gemini"])
    >>> (a.name, a.team, a.agent_type)
    ('g', 't', 'gemini')
    """
    values: dict[str, str] = {}
    items = list(argv)
    i = 0
    while i < len(items):
        flag = items[i]
        if flag in _VALUED and i + 1 < len(items):
            values[flag] = items[i + 1]
            i += 2
            continue
        if flag.startswith("--") and "=" in flag and flag.split("=", 1)[0] in _VALUED:
            key, value = flag.split("=", 1)
            values[key] = value
        i += 1
    agent_id = values.get("--agent-id")
    name = values.get("--agent-name") or (agent_id.split("@", 1)[0] if agent_id else None)
    team = values.get("--team-name") or (agent_id.split("@", 1)[1] if agent_id and "@" in agent_id
                                         else None)  # fmt: skip
    if not name or not team:
        raise ExomonadError("exomonad teammate needs --agent-name and --team-name (or --agent-id)")
    return TeammateArgs(name, team, agent_id, values.get("--agent-type"),
                        values.get("--agent-color"), values.get("--model"),
                        values.get("--parent-session-id"), items)  # fmt: skip


def _provision(state: Path, args: TeammateArgs, parent: str,
               runtime: str | None = None) -> dict[str, Any]:  # fmt: skip
    """A worker token (and worktree, its gate checked for ``runtime``) from the server."""
    try:
        answer = ServerClient(state, timeout=60).call(
            "POST",
            "/teammate/token",
            {
                "name": args.name,
                "team": args.team,
                "parent": parent,
                "pid": os.getpid(),
                **({"runtime": runtime} if runtime else {}),
            },
        )
    except ServerNotRunningError as exc:
        raise ExomonadError(f"{exc} (a teammate needs it for its MCP tools, hooks and "
                            "policy)") from exc  # fmt: skip
    except ServerError as exc:
        raise ExomonadError(f"the server refused a worker token: {exc}") from exc
    if not isinstance(answer, dict) or not isinstance(answer.get("token"), str):
        raise ExomonadError(f"the server's token answer is malformed: {answer!r}")
    return answer


def _await_mcp(state: Path, token: str, timeout: float) -> None:
    """Hold the task until the agent's MCP client has reached the server (its tools are
    listed); after ``timeout``, go on and say so (the task still arrives)."""
    try:
        answer = ServerClient(state, token=token, timeout=timeout + 30).call(
            "POST", "/teammate/mcp-ready", {"timeout": timeout}
        )
    except ExomonadError as exc:
        answer = {"ready": False, "error": str(exc)}
    if not (isinstance(answer, dict) and answer.get("ready") is True):
        sys.stderr.write(
            f"exomonad teammate: the agent's MCP tools did not come up within "
            f"{timeout:g}s ({answer}); its task is sent anyway\n"
        )


def _prove_gate(state: Path, token: str, runtime: str, deliver: Callable[[str], object],
                timeout: float) -> None:  # fmt: skip
    """Type the server's gate probe into the agent and wait for it to come back through
    the agent's own prompt hook (:mod:`exomonad.server.gateprobe`); GateError if not."""
    client = ServerClient(state, token=token, timeout=timeout + 30)
    probe = client.call("POST", "/teammate/gate-probe")
    if not isinstance(probe, dict) or not isinstance(probe.get("text"), str):
        raise GateError(f"the server's gate probe answer is malformed: {probe!r}")
    try:
        deliver(probe["text"])
    except ExomonadError as exc:
        raise GateError(f"could not type the gate check into the agent: {exc}") from exc
    answer = client.call("POST", "/teammate/gate-live", {"timeout": timeout, "runtime": runtime})
    if not (isinstance(answer, dict) and answer.get("live") is True):
        why = answer.get("error") if isinstance(answer, dict) else None
        raise GateError(str(why or f"the gate check did not come back ({answer!r})"))


def _release(state: Path, token: str) -> str:
    """Give back our token and worktree; what happened to the worktree, in one line."""
    try:
        answer = ServerClient(state, token=token, timeout=60).call("POST", "/teammate/release")
    except ExomonadError as exc:
        return f"could not release the worker ({exc}); its worktree, if any, is kept"
    worktree = answer.get("worktree") if isinstance(answer, dict) else None
    return str(worktree.get("message", "")) if isinstance(worktree, dict) else ""


class _Protocol:
    """Handles protocol messages addressed to the teammate before they are typed."""

    def __init__(self, args: TeammateArgs, agent: PtyAgent, mailbox: Mailbox, lead: str,
                 ledger: SqliteLedger, release: Callable[[], str]):  # fmt: skip
        self.args, self.agent, self.mailbox, self.lead = args, agent, mailbox, lead
        self.ledger = ledger
        self.release = release
        self.stopping = False

    def __call__(self, entry: dict[str, Any]) -> bool:
        text = entry.get("text")
        msg = decode(text) if isinstance(text, str) else None
        if not isinstance(msg, ShutdownRequest):
            return False
        # Consume the request before approving: on shutdown_approved Claude Code 2.1.330
        # kills this pane (and us) at once; a request left in the inbox (ledger: in
        # flight) would be handled again by the next teammate of this name and stop it.
        message_id = message_identity(entry)
        self.ledger.mark_delivered(self.args.team, self.args.name, message_id)
        with contextlib.suppress(ExomonadError):
            self.mailbox.mark_read(self.args.name, [message_id])
        # Stop the agent, then give back its worktree (removed only when nothing is lost)
        # before approving: on the approval the pane goes, and this process with it.
        self.stopping = True
        self.agent.terminate()
        asker = str(entry.get("from") or self.lead)
        outcome = self.release()
        if outcome.startswith(("kept", "could not")):
            note = f"[from: {self.args.name}] shutting down: {outcome}"
            with contextlib.suppress(ExomonadError):
                self.mailbox.send(asker, sender=self.args.name, text=note, check_member=False)
        reply = ShutdownApproved(request_id=msg.request_id, from_=self.args.name,
                                 timestamp=now_iso(), pane_id=os.environ.get("TMUX_PANE"),
                                 backend_type="tmux")  # fmt: skip
        self.mailbox.send(asker, sender=self.args.name, text=encode(reply), check_member=False)
        return True


def _worker_env(state: Path, args: TeammateArgs, worker: dict[str, Any]) -> dict[str, str]:
    """What the worker's environment adds to ours: its identity and git gate."""
    hooks = worker.get("hooks")
    env: dict[str, str] = {}
    extra = worker.get("env")  # what the server checked the gate with (CODEX_HOME)
    if isinstance(extra, dict):
        env.update({str(k): str(v) for k, v in extra.items()})
    env.update(worker_env(token=str(worker["token"]), name=args.name, team=args.team,
                          state_dir=str(state), hooks=hooks if isinstance(hooks, str) else None,
                          inherited=os.environ))  # fmt: skip
    return env


async def _serve(args: TeammateArgs, agent: PtyAgent, watcher: InboxWatcher) -> int:
    ready = asyncio.Event()
    watching = asyncio.create_task(watcher.run(ready))
    try:
        return await asyncio.to_thread(agent.wait)
    finally:
        watcher.request_stop()
        await watching


def run_teammate(argv: Sequence[str], *, state: Path, root: Path | None = None) -> int:
    """Run one teammate (see the module doc); returns its exit code."""
    args = parse_teammate_args(argv)
    config: ProjectConfig = load_project_config(state)
    route = config.teammate.route(args.agent_type, args.name)
    runner = runtimes.get(route.runtime)
    if runner.native_teammate:
        os.execvp(config.teammate.claude, [config.teammate.claude, *args.argv])
    paths = TeamPaths(args.team, root)
    lead = _lead_name(paths)
    worker = _provision(state, args, lead, runner.name)
    token = str(worker["token"])
    cwd = worker.get("worktree") if isinstance(worker.get("worktree"), str) else None
    command = worker_argv(
        shlex.split(route.command or config.workers.command_for(route.runtime)),
        sandbox=config.workers.sandbox,
        worktree=cwd,
        state_dir=state,
        name=args.name,
        branch=worker["branch"] if isinstance(worker.get("branch"), str) else None,
        team=args.team,
    )
    backend = PtyBackend(mirror=True)  # the pane shows the agent; its user can type too
    pane = backend.spawn(command, env=_worker_env(state, args, worker), cwd=cwd or os.getcwd())
    agent = backend.agent(pane)
    marker = route.marker()
    if marker:
        agent.wait_for_text(marker, config.teammate.ready_timeout)
    if runner.waits_for_mcp:
        _await_mcp(state, token, config.teammate.ready_timeout)
    mailbox = Mailbox(paths)
    if runner.gate_probe:
        try:
            _prove_gate(state, token, runner.name, lambda text: backend.deliver(pane, text),
                        config.teammate.ready_timeout)  # fmt: skip
        except GateError as exc:  # no gate, no start: stopped before it reads its task
            agent.terminate()
            kept = _release(state, token)
            note = f"[from: {args.name}] not started: {exc}" + (f" ({kept})" if kept else "")
            with contextlib.suppress(ExomonadError):
                mailbox.send(lead, sender=args.name, text=note, check_member=False)
            agent.restore()
            raise
    adopt_lock_journal(state)
    ledger = SqliteLedger(state / "ledger.db")

    def select(_: TeamConfig) -> dict[str, str | None]:
        return {args.name: pane}  # the agent's pty, e.g. /dev/pts/7

    watcher = InboxWatcher(ledger, backend, root=root, teams=[args.team], select=select,
                           intercept=_Protocol(args, agent, mailbox, lead, ledger,
                                               lambda: _release(state, token)))  # fmt: skip
    try:
        return asyncio.run(_serve(args, agent, watcher))
    finally:
        ledger.close()
        agent.restore()


def _lead_name(paths: TeamPaths) -> str:
    try:
        return load_config(paths).lead_name  # never through a symlinked team dir or file
    except (OSError, ExomonadError):
        return "team-lead"
