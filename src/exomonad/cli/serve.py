"""``exomonad serve``, ``mcp-stdio`` and ``hook``: the server and its clients (``status``
is in :mod:`exomonad.cli.status`)."""

from __future__ import annotations

import logging
from typing import Annotated

import typer
from rich.logging import RichHandler

from exomonad import runtimes
from exomonad.cli.common import ConfigDirOpt, StateDirOpt, err_console, handle_errors, state_of

__all__ = ["register"]


@handle_errors
def serve(
    state_dir: StateDirOpt = None,
    tmux_socket: Annotated[str | None, typer.Option(help="tmux server (tmux -L).")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False,
    config_dir: ConfigDirOpt = None,
    dashboard_port: Annotated[
        int | None,
        typer.Option(
            min=0,
            max=65535,
            help="Also serve the dashboard on 127.0.0.1:PORT (0: any free port); its URL "
            "with a one-time token is printed here, once (default: \\[dashboard] port).",
        ),
    ] = None,
) -> None:
    """Run the project's server (MCP, hooks, watcher, dashboard) on .exomonad/server.sock."""
    from exomonad.panes import TmuxBackend
    from exomonad.server.app import run_server
    from exomonad.server.services import Services

    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO, format="%(message)s",
        handlers=[RichHandler(console=err_console, show_path=False)],
    )  # fmt: skip
    if not verbose:  # one line per GitHub request otherwise
        logging.getLogger("httpx2").setLevel(logging.WARNING)
    svc = Services(state_of(state_dir), root=config_dir, backend=TmuxBackend(tmux_socket))
    run_server(svc, dashboard_port=dashboard_port,
               announce=lambda url: typer.echo(f"dashboard: {url}"))  # fmt: skip


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

    state = state_of(state_dir)
    run_stdio_bridge(state, session_token(str(state), role), root=config_dir)


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
    app.command("hook")(hook)
