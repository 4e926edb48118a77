"""``exomonad watch``: run the inbox watcher in the foreground."""

from __future__ import annotations

import asyncio
import logging
import signal
from pathlib import Path
from typing import Annotated

import typer
from rich.logging import RichHandler

from exomonad.bridge.ledger import SqliteLedger
from exomonad.bridge.watcher import InboxWatcher
from exomonad.cli.common import ConfigDirOpt, err_console, handle_errors
from exomonad.panes import get_backend
from exomonad.state import adopt_lock_journal, ensure_state_dir, find_state_dir
from exomonad.teams.dialects import get_dialect

__all__ = ["watch"]


@handle_errors
def watch(
    team: Annotated[
        list[str] | None,
        typer.Option("--team", help="Only this team (repeatable). Default: every team."),
    ] = None,
    backend: Annotated[str, typer.Option(help="Pane backend: tmux or zellij.")] = "tmux",
    tmux_socket: Annotated[
        str | None, typer.Option(help="tmux server socket name (tmux -L).")
    ] = None,
    state_dir: Annotated[
        Path | None,
        typer.Option(help="Project state dir (default: nearest .exomonad/; $EXOMONAD_DIR)."),
    ] = None,
    dialect: Annotated[
        str | None, typer.Option(help="Claude Code dialect for marking messages read.")
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log every pass.")] = False,
    config_dir: ConfigDirOpt = None,
) -> None:
    """Deliver new inbox messages of synthetic members to their panes until stopped.

    Members are bound to panes with
    ``exomonad team add-member TEAM NAME --synthetic --pane TARGET``.
    """
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(message)s",
        handlers=[RichHandler(console=err_console, show_path=False)],
    )
    state = state_dir or find_state_dir(create=True)
    ensure_state_dir(state)
    for lock in adopt_lock_journal(state):
        err_console.print(f"[yellow]removed a lock left by a killed ExoMonad: {lock}[/yellow]")
    ledger = SqliteLedger(state / "ledger.db")
    kwargs = {"socket_name": tmux_socket} if backend == "tmux" and tmux_socket else {}
    sink = get_backend(backend, **kwargs)
    watcher = InboxWatcher(ledger, sink, root=config_dir, teams=team, dialect=get_dialect(dialect))
    if ledger.recovered_in_flight:
        err_console.print(
            f"[yellow]{ledger.recovered_in_flight} message(s) were being typed when the last "
            "watcher stopped; they will be delivered again (possible duplicates).[/yellow]"
        )

    async def main() -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, watcher.request_stop)
        ready = asyncio.Event()
        task = asyncio.create_task(watcher.run(ready))
        await ready.wait()
        teams = ", ".join(team) if team else "all teams"
        err_console.print(f"watching {watcher.teams_dir} ({teams}); ledger {ledger.path}")
        await task

    try:
        asyncio.run(main())
    finally:
        ledger.close()
    s = watcher.stats
    err_console.print(f"stopped: {s.delivered} delivered, {s.failed_passes} failed passes")


def register(app: typer.Typer) -> None:
    """Add ``watch`` to the top-level app."""
    app.command("watch")(watch)
