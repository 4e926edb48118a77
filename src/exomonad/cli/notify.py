"""``exomonad notify TEXT``: a worker with no MCP client reaches its lead.

Any terminal agent ExoMonad starts (``worker start --runtime terminal --command aider``,
a plain shell) gets its identity in ``EXOMONAD_TOKEN``; this command sends ``TEXT`` as
that worker's ``notify_parent`` through the project's server (the same tool, role check
and delivery as over MCP: the lead's inbox, verified, its pane as a fallback). Without a
worker's token it refuses: a report must say who it is from.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from exomonad.cli.common import JsonOpt, console, emit, handle_errors
from exomonad.client import ServerClient
from exomonad.errors import ExomonadError
from exomonad.state import find_state_dir
from exomonad.util.display import shown

__all__ = ["register"]


@handle_errors
def notify_cmd(
    text: Annotated[str, typer.Argument(help="What you did, found or need.")],
    failure: Annotated[bool, typer.Option("--failure", help="Report a failure.")] = False,
    pr: Annotated[int | None, typer.Option("--pr", help="A pull request you opened.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Tell your lead something (as the worker EXOMONAD_TOKEN names)."""
    token = os.environ.get("EXOMONAD_TOKEN")
    if not token:
        raise ExomonadError(
            "EXOMONAD_TOKEN is not set: run this inside a worker ExoMonad started "
            "(exomonad worker start, spawn_workers); a report must say who it is from"
        )
    state_env = os.environ.get("EXOMONAD_DIR")
    state = Path(state_env) if state_env else find_state_dir()
    args: dict[str, object] = {"status": "failure" if failure else "success", "message": text}
    if pr is not None:
        args["pr_number"] = pr
    out = ServerClient(state, token=token, timeout=60).tool("notify_parent", args)
    emit(out, as_json, lambda: console.print(shown(out.get("message", "sent"))))


def register(app: typer.Typer) -> None:
    """Add ``notify`` to the top-level app."""
    app.command("notify")(notify_cmd)
