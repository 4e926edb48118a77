"""``exomonad init``: set a repository up; optionally start its tmux session."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Annotated

import typer

from exomonad.cli.common import JsonOpt, console, emit, handle_errors
from exomonad.errors import ExomonadError
from exomonad.server.config import load_project_config
from exomonad.setup import exomonad_command, init_project

__all__ = ["register"]


@handle_errors
def init(
    path: Annotated[Path, typer.Argument(help="The repository (default: here).")] = Path(),
    tmux: Annotated[
        bool, typer.Option(help="Start a tmux session with the server and the lead.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Set a repository up for ExoMonad: config, hooks, .mcp.json, Claude Code and Gemini
    CLI settings, the gemini-worker agent. Safe to run again; never clobbers your files."""
    root = path.resolve()
    if not root.is_dir():
        raise ExomonadError(f"{root} is not a directory")
    report = init_project(root)
    session = None
    if tmux:
        session = _start_tmux(root)
    data = {"root": str(root), "files": report.files, "tmux_session": session}

    def human() -> None:
        for name, what in report.files.items():
            console.print(f"  {what:9} {name}")
        if session:
            console.print(f"tmux session [bold]{session}[/bold]: tmux attach -t {session}")
        else:
            console.print("next: `exomonad serve` (or `exomonad init --tmux`), then `claude`")

    emit(data, as_json, human)


def _start_tmux(root: Path) -> str:
    if shutil.which("tmux") is None:
        raise ExomonadError("tmux is not installed (apt-get install tmux)")
    session = load_project_config(root / ".exomonad").workers.tmux_session
    exists = subprocess.run(["tmux", "has-session", "-t", f"={session}"], capture_output=True,
                            check=False).returncode == 0  # fmt: skip
    if exists:
        return session
    exo = exomonad_command()
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-n", "server", "-c", str(root),
                    f"{exo} serve"], check=True)  # fmt: skip
    lead = "claude" if shutil.which("claude") else "echo 'install Claude Code, then run claude'; sh"
    subprocess.run(["tmux", "new-window", "-t", session, "-n", "lead", "-c", str(root), lead],
                   check=True)  # fmt: skip
    return session


def register(app: typer.Typer) -> None:
    """Add ``init`` to the top-level app."""
    app.command("init")(init)
