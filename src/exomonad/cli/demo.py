"""``exomonad demo``: the main job, end to end, with the real CLIs (see exomonad.demo)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from exomonad.cli.common import JsonOpt, console, emit, handle_errors
from exomonad.demo.run import Options, run_demo

__all__ = ["register"]


@handle_errors
def demo_cmd(
    keep: Annotated[
        bool,
        typer.Option(
            "--keep",
            help="Leave the tmux session and the server "
            "running; print how to attach and how to stop.",
        ),
    ] = False,
    live: Annotated[
        bool,
        typer.Option(
            "--live",
            help="The real models: needs ANTHROPIC_API_KEY, GEMINI_API_KEY and OPENAI_API_KEY.",
        ),
    ] = False,
    timeout: Annotated[float, typer.Option(help="Seconds each hop may take.")] = 90.0,
    as_json: JsonOpt = False,
) -> None:
    """Claude Code 2.1.330 leads a Gemini CLI and a Codex CLI worker (scripted models,
    offline, no key): prints every hop's latency; exits 1 naming a hop that did not
    happen."""
    out = Console(quiet=True) if as_json else console
    result = run_demo(Options(keep=keep, live=live, timeout=timeout), out)
    emit(result.to_json(), as_json, lambda: None)
    if result.code != 0:
        raise typer.Exit(result.code)


def register(app: typer.Typer) -> None:
    """Add ``demo`` to the top-level app."""
    app.command("demo")(demo_cmd)
