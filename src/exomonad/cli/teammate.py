"""``exomonad teammate``: the command Claude Code runs for each teammate it spawns."""

from __future__ import annotations

import typer

from exomonad.cli.common import handle_errors
from exomonad.state import find_state_dir
from exomonad.teammate.run import run_teammate

__all__ = ["register"]


@handle_errors
def teammate(ctx: typer.Context) -> None:
    """Run a teammate for Claude Code (CLAUDE_CODE_TEAMMATE_COMMAND names a program that
    runs `exomonad teammate "$@"`, e.g. the .exomonad/bin/exomonad-teammate `init` writes).

    Takes Claude Code's teammate arguments (--agent-id, --agent-name, --team-name, ...).
    Routed by [teammate] in .exomonad/config.toml: Claude teammates run the real claude
    unchanged; Gemini teammates run Gemini CLI here, fed their inbox exactly once.
    """
    raise typer.Exit(run_teammate(list(ctx.args), state=find_state_dir(create=True)))


def register(app: typer.Typer) -> None:
    """Add ``teammate`` to the top-level app (every argument passes through)."""
    app.command(
        "teammate",
        context_settings={
            "allow_extra_args": True,
            "ignore_unknown_options": True,
            "help_option_names": [],
        },
    )(teammate)
