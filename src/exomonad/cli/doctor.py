"""``exomonad doctor``: check this machine and repository; say how to fix what is wrong."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from exomonad.cli.common import JsonOpt, console, emit, handle_errors
from exomonad.doctor import Check, run_checks
from exomonad.state import find_state_dir

__all__ = ["register"]

_MARKS = {"ok": "[green]✓[/green]", "warn": "[yellow]![/yellow]", "fail": "[red]✗[/red]"}


@handle_errors
def doctor(
    path: Annotated[
        Path | None, typer.Argument(help="The repository (default: the project around here).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Check that ExoMonad works here, and print the fix for each problem.

    Checks exomonad on PATH, every hook and MCP command in the project's settings (it
    resolves and runs), that the committed files are portable, the server, the agent
    CLIs, tmux, git and git worktrees. Exits 1 if a check fails (warnings do not)."""
    root = (path or find_state_dir().parent).resolve()
    checks = run_checks(root)
    emit([c.as_dict() for c in checks], as_json, lambda: _print(root, checks))
    if any(c.status == "fail" for c in checks):
        raise typer.Exit(1)


def _print(root: Path, checks: list[Check]) -> None:
    console.print(f"[bold]exomonad doctor[/bold] {escape(str(root))}")
    for c in checks:
        console.print(f"{_MARKS[c.status]} {escape(c.name)}: {escape(c.detail)}")
        if c.fix:
            console.print(f"    fix: [bold]{escape(c.fix)}[/bold]")
    counts = {s: sum(c.status == s for c in checks) for s in ("ok", "warn", "fail")}
    console.print(f"{counts['ok']} ok, {counts['warn']} warnings, {counts['fail']} failed")


def register(app: typer.Typer) -> None:
    """Add ``doctor`` to the top-level app."""
    app.command("doctor")(doctor)
