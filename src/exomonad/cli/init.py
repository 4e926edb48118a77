"""``exomonad init``: set a repository up; optionally start its tmux session.

The files it writes name ``exomonad`` / ``exomonad-teammate`` and rely on PATH (they are
committed; see :mod:`exomonad.setup`). When PATH does not lead to the running install,
``init`` still writes them and prints one warning with the fix.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from exomonad.cli.common import JsonOpt, console, emit, err_console, handle_errors
from exomonad.errors import ExomonadError
from exomonad.lifecycle import up
from exomonad.setup import init_project
from exomonad.util.selfexec import EXOMONAD, TEAMMATE, locate, path_fix

__all__ = ["register"]


@handle_errors
def init(
    path: Annotated[Path, typer.Argument(help="The repository (default: here).")] = Path(),
    tmux: Annotated[
        bool, typer.Option(help="Start a tmux session with the server and the lead.")
    ] = False,
    trust_codex_hooks: Annotated[
        bool,
        typer.Option(
            "--trust-codex-hooks",
            help=(
                "Consent: trust ExoMonad's own Codex CLI hooks in your Codex config "
                "($CODEX_HOME/config.toml) for this checkout and each Codex worker's worktree "
                "(Codex skips hooks nobody trusted, and its workers would run ungated: without "
                "this, Codex workers are refused)."
            ),
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Set a repository up for ExoMonad: config, hooks, .mcp.json, Claude Code, Gemini
    CLI and Codex CLI settings, the gemini-worker and codex-worker agents. Safe to run
    again; never clobbers your files.

    The files are meant to be committed: they run `exomonad` and `exomonad-teammate` from
    PATH (a warning says how to fix PATH if it does not lead to this install)."""
    root = path.resolve()
    if not root.is_dir():
        raise ExomonadError(f"{root} is not a directory")
    report = init_project(root, trust_codex_hooks=trust_codex_hooks)
    session = None
    if tmux:
        session = _start_tmux(root)
    warning = path_warning()
    data = {"root": str(root), "files": report.files, "tmux_session": session,
            "warning": warning}  # fmt: skip
    if warning:
        err_console.print(f"[yellow]warning:[/yellow] {escape(warning)}")

    def human() -> None:
        for name, what in report.files.items():
            console.print(f"  {what:9} {name}")
        if session:
            console.print(f"tmux session [bold]{session}[/bold]: tmux attach -t {session}")
        else:
            console.print(
                "next: `exomonad up` (the server and the lead in tmux), or "
                "`exomonad serve` and `claude` yourself"
            )

    emit(data, as_json, human)


def path_warning() -> str | None:
    """One line if PATH does not lead to this install's console scripts, else None."""
    for program in (EXOMONAD, TEAMMATE):
        where = locate(program)
        if where.found is None:
            return (f"`{program}` is not on PATH, so the hooks and MCP servers just written "
                    f"will not start; fix: {path_fix(program)}")  # fmt: skip
        if where.ours is False:
            return (f"`{program}` on PATH is {where.found}, another install than this one; "
                    f"fix: {path_fix(program)}")  # fmt: skip
    return None


def _start_tmux(root: Path) -> str:
    """``--tmux``: what ``exomonad up`` does (server and lead windows, /health)."""
    lead = "claude" if shutil.which("claude") else None
    session: str = up(root, lead=lead).data["session"]
    return session


def register(app: typer.Typer) -> None:
    """Add ``init`` to the top-level app."""
    app.command("init")(init)
