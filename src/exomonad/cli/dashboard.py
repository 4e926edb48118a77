"""``exomonad dashboard``: the dashboard's address, with a new token, for a person.

The server listens for browsers on 127.0.0.1 only when asked: this command asks it
(over the Unix socket, as the person whose process connects: refused inside an agent's
session), and prints the URL it gets, with a token that exists only in the server's
memory and on this terminal.
"""

from __future__ import annotations

import webbrowser
from typing import Annotated

import typer

from exomonad.cli.common import JsonOpt, StateDirOpt, emit, handle_errors
from exomonad.client import ServerClient
from exomonad.state import find_state_dir

__all__ = ["register"]


@handle_errors
def dashboard(
    port: Annotated[
        int | None,
        typer.Option(
            min=0,
            max=65535,
            help="Listen on this port if not listening yet "
            "(default: \\[dashboard] port, else any free port).",
        ),
    ] = None,
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the URL in the default browser.")
    ] = False,
    state_dir: StateDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print the dashboard's URL (127.0.0.1, with a new one-time token): the server
    opens its loopback listener if it is not open. Only a person gets one (refused
    inside an agent's session)."""
    state = state_dir or find_state_dir()
    client = ServerClient(state)
    if port is None:
        from exomonad.server.config import load_project_config

        port = load_project_config(state).dashboard.port
    data = client.call("POST", "/dashboard/api/open", {"port": port})
    emit(data, as_json, lambda: typer.echo(data["url"]))
    if open_browser:
        webbrowser.open(data["url"])


def register(app: typer.Typer) -> None:
    """Add ``dashboard`` to the top-level app."""
    app.command("dashboard")(dashboard)
