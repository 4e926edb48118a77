"""``exomonad up``, ``down`` and ``worker start|list|stop|attach``: a team, for people.

The worker commands speak to the project's server as the lead (``.exomonad/lead.token``,
readable by the project's user and denied to every agent by the policy), through the
same tools the lead's agent calls, so the same checks apply.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from exomonad import runtimes
from exomonad.cli.common import JsonOpt, console, emit, err_console, handle_errors
from exomonad.client import ServerClient
from exomonad.errors import ExomonadError
from exomonad.lifecycle import Report, down, require_tool, up, worktrees_of
from exomonad.server.config import load_project_config
from exomonad.server.identity import TokenStore
from exomonad.state import find_state_dir
from exomonad.util.display import shown
from exomonad.worktrees import WorktreeState

__all__ = ["register", "worker_app"]

worker_app = typer.Typer(help="Start, list, stop and attach to workers.", no_args_is_help=True)
TmuxOpt = Annotated[str | None, typer.Option("--tmux-socket", help="tmux server (tmux -L).")]


def _root() -> Path:
    return find_state_dir().resolve().parent


def _print(report: Report, as_json: bool) -> None:
    def human() -> None:
        for line in report.done:  # they name members and quote the server's answers
            console.print(Text.assemble(("✓", "green"), " ", shown(line)))
        for line in report.warnings:
            err_console.print(Text.assemble(("!", "yellow"), " ", shown(line)))

    emit(report.to_json(), as_json, human)


@handle_errors
def up_cmd(
    tmux_socket: TmuxOpt = None,
    lead: Annotated[str, typer.Option(help="The lead's command.")] = "claude",
    no_lead: Annotated[bool, typer.Option("--no-lead", help="Start no lead window.")] = False,
    status: Annotated[
        bool | None,
        typer.Option(
            "--status/--no-status",
            help="A status pane (`exomonad status --tui`) below the lead "
            "(default: on; config.toml up.status_pane).",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Start the server, the lead (Claude Code, teams on) and a status pane in the
    project's tmux session; wait for /health. Idempotent."""
    report = up(_root(), tmux_socket=tmux_socket, lead=None if no_lead else lead,
                status=status)  # fmt: skip
    _print(report, as_json)
    if not as_json:
        session = report.data["session"]
        sock = f"-L {tmux_socket} " if tmux_socket else ""
        console.print(shown(f"attach: tmux {sock}attach -t {session}"))


@handle_errors
def down_cmd(tmux_socket: TmuxOpt = None, as_json: JsonOpt = False) -> None:
    """Shut workers down (through the protocol), remove our members, stop the server,
    revoke tokens, close the status pane and the windows `up` opened. Worktrees with work
    in them are kept."""
    _print(down(_root(), tmux_socket=tmux_socket), as_json)


def _lead_client(state: Path, timeout: float = 60.0) -> ServerClient:
    token = TokenStore(state).lead_path
    if not token.exists():
        raise ExomonadError("no lead token: is the server running? (`exomonad up`)")
    return ServerClient(state, token=token.read_text().strip(), timeout=timeout)


#: Runtimes that can run as workers, and the command that starts each.
WORKER_RUNTIMES = {r.name: r.worker_command for r in runtimes.RUNTIMES.values()
                   if r.worker_command}  # fmt: skip
PROGRAMS = frozenset(r.program for r in runtimes.RUNTIMES.values() if r.program)


@worker_app.command("start")
@handle_errors
def worker_start(
    name: Annotated[str | None, typer.Option(help="Member name (default: <runtime>-N).")] = None,
    task: Annotated[str | None, typer.Option(help="Its first message.")] = None,
    runtime: Annotated[
        str,
        typer.Option(
            help=f"{', '.join(WORKER_RUNTIMES)}, or `terminal` (any program: "
            "needs --command; ungated, see docs/guarantees.md)."
        ),
    ] = "gemini",
    command: Annotated[str | None, typer.Option(help="Command to run instead.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Start a worker in a new tmux window, in its own worktree, registered in the team."""
    state = find_state_dir()
    runtime = runtimes.canonical(runtime)
    if runtime not in runtimes.RUNTIMES or (runtime not in WORKER_RUNTIMES and not command):
        raise typer.BadParameter(f"--runtime {' or '.join(WORKER_RUNTIMES)}, or --runtime "
                                 "terminal with --command")  # fmt: skip
    workers = load_project_config(state).workers
    if command is None:  # the configured worker command for the configured runtime
        command = workers.command_for(runtime)
    argv = shlex.split(command)
    if argv[0] in PROGRAMS:
        require_tool(argv[0])
    client = _lead_client(state, timeout=workers.ready_timeout + 30)  # it waits for ready
    if name is None:
        taken = {m["name"] for m in client.tool("team_status")["members"]}
        name = next(f"{runtime}-{i}" for i in range(1, 1000) if f"{runtime}-{i}" not in taken)
    spec: dict[str, Any] = {
        "name": name,
        "task": task,
        "command": command,
        "runtime": runtime,
    }
    out = client.tool("spawn_workers", {"workers": [{k: v for k, v in spec.items() if v}]})
    [w] = out["workers"]
    emit(
        w,
        as_json,
        lambda: console.print(
            Text.assemble(
                "started ",
                shown(w["name"], style="bold"),
                " in pane ",
                shown(
                    f"{w['pane']}"
                    + (f", worktree {w['worktree']} on {w['branch']}" if w.get("worktree") else "")
                ),
            )
        ),
    )


@worker_app.command("list")
@handle_errors
def worker_list(as_json: JsonOpt = False) -> None:
    """Workers of the current team (presence, pane, worktree, branch) and kept worktrees."""
    state = find_state_dir()
    members: list[dict[str, Any]] = []
    try:
        status = _lead_client(state).tool("team_status")
        members = [m for m in status["members"] if m.get("worker") or m["backend"] == "exomonad"]
    except ExomonadError as exc:
        err_console.print(Text.assemble(("!", "yellow"), " ", shown(exc)))
    live = {m.get("worktree") for m in members}
    kept = [w for w in worktrees_of(state).list() if str(w.path) not in live]
    emit({"workers": members, "kept_worktrees": [w.to_json() for w in kept]}, as_json,
         lambda: _show(members, kept))  # fmt: skip


def _show(members: list[dict[str, Any]], kept: list[WorktreeState]) -> None:
    table = Table("name", "presence", "pane", "branch", "worktree")
    for m in members:
        table.add_row(*(shown(m.get(k) or "-") for k in ("name", "presence", "pane", "branch",
                                                         "worktree")))  # fmt: skip
    console.print(table)
    for w in kept:
        console.print(shown(f"kept worktree {w.path} ({w.branch}): {w.why_kept() or 'removable'}"))


@worker_app.command("stop")
@handle_errors
def worker_stop(name: str, as_json: JsonOpt = False) -> None:
    """Close a worker's pane and remove it; its worktree is kept if it holds work."""
    out = _lead_client(find_state_dir()).tool("remove_worker", {"name": name})
    emit(out, as_json, lambda: console.print(shown(out["message"])))


@worker_app.command("attach")
@handle_errors
def worker_attach(name: str) -> None:
    """Show a worker's pane: switch to it inside tmux, else attach to its session."""
    state = find_state_dir()
    client = _lead_client(state)
    member = next((m for m in client.tool("team_status")["members"] if m["name"] == name), None)
    if member is None or not member.get("pane"):
        raise ExomonadError(f"{name!r} has no pane in the current team")
    pane = str(member["pane"])
    sock = client.health().get("tmux_socket")
    tmux = [require_tool("tmux"), *(["-L", sock] if sock else [])]
    verb = "switch-client" if os.environ.get("TMUX") else "attach-session"
    os.execv(tmux[0], [*tmux, "select-window", "-t", pane, ";", "select-pane", "-t", pane,
                       ";", verb, "-t", pane])  # fmt: skip


def register(app: typer.Typer) -> None:
    """Add ``up``, ``down`` and ``worker`` to the top-level app."""
    app.command("up")(up_cmd)
    app.command("down")(down_cmd)
    app.add_typer(worker_app, name="worker")
