"""``exomonad serve``, ``mcp-stdio``, ``status`` and ``hook``: the server and its clients."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import orjson
import typer
from rich.logging import RichHandler

from exomonad import runtimes
from exomonad.cli.common import ConfigDirOpt, JsonOpt, console, emit, err_console, handle_errors
from exomonad.server.pidfile import read_server_info, server_request
from exomonad.state import find_state_dir

__all__ = ["register"]

StateDirOpt = Annotated[
    Path | None,
    typer.Option(help="Project state dir (default: nearest .exomonad/; $EXOMONAD_DIR)."),
]


def _state(state_dir: Path | None) -> Path:
    return state_dir or find_state_dir(create=True)


@handle_errors
def serve(
    state_dir: StateDirOpt = None,
    tmux_socket: Annotated[str | None, typer.Option(help="tmux server (tmux -L).")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False,
    config_dir: ConfigDirOpt = None,
) -> None:
    """Run the project's server (MCP, hooks, watcher) on .exomonad/server.sock."""
    from exomonad.panes import TmuxBackend
    from exomonad.server.app import run_server
    from exomonad.server.services import Services

    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO, format="%(message)s",
        handlers=[RichHandler(console=err_console, show_path=False)],
    )  # fmt: skip
    svc = Services(_state(state_dir), root=config_dir, backend=TmuxBackend(tmux_socket))
    run_server(svc)


@handle_errors
def mcp_stdio(
    role: Annotated[str, typer.Option(help="Role to ask for (the token decides).")] = "worker",
    name: Annotated[str | None, typer.Option(help="Agent name (informational).")] = None,
    state_dir: StateDirOpt = None,
    config_dir: ConfigDirOpt = None,
) -> None:
    """MCP over stdio: proxy to the running server, or serve embedded if none runs.

    The role comes from the agent's token ($EXOMONAD_TOKEN, issued at spawn); the root
    lead (--role tl) uses .exomonad/lead.token. Without a token: the least role.
    """
    from exomonad.server.stdio_bridge import run_stdio_bridge
    from exomonad.server.stdio_proxy import session_token

    state = _state(state_dir)
    run_stdio_bridge(state, session_token(str(state), role), root=config_dir)


@handle_errors
def status(state_dir: StateDirOpt = None, as_json: JsonOpt = False) -> None:
    """Show whether the project's server runs, its /health, and the workers' worktrees
    (a worktree kept because it holds work says so)."""
    from exomonad.lifecycle import worktrees_of

    state = _state(state_dir)
    worktrees = [w.to_json() for w in worktrees_of(state).list()]
    info = read_server_info(state)
    if info is None or not info.alive:
        emit(
            {"running": False, "worktrees": worktrees},
            as_json,
            lambda: console.print(f"no server running; {len(worktrees)} worker worktree(s)"),
        )
        raise typer.Exit(1)
    _, data = server_request(info.socket, "GET", "/health")
    data = {**data, "worktrees": worktrees}
    emit(data, as_json, lambda: console.print_json(orjson.dumps(data).decode()))


def hook(
    event: Annotated[str, typer.Argument(help="session-start, pre-tool-use, stop, ...")],
    runtime: Annotated[str, typer.Option(help=" or ".join(runtimes.names()))] = "claude",
) -> None:
    """Answer an agent hook (reads its JSON on stdin). Runs on a fast path (no typer)."""
    from exomonad.hookclient import main as hook_main

    raise typer.Exit(hook_main([event, "--runtime", runtime]))


def register(app: typer.Typer) -> None:
    """Add the server commands to the top-level app."""
    app.command("serve")(serve)
    app.command("mcp-stdio")(mcp_stdio)
    app.command("status")(status)
    app.command("hook")(hook)
