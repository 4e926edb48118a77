"""``exomonad teammate``: the command Claude Code runs for each teammate it spawns.

Also the ``exomonad-teammate`` console script (:func:`main`): Claude Code runs
``CLAUDE_CODE_TEAMMATE_COMMAND`` as one shell-quoted program name, so the value must be
a single word found on PATH.
"""

from __future__ import annotations

import sys

import typer

from exomonad.cli.common import handle_errors
from exomonad.state import find_state_dir
from exomonad.teammate.run import run_teammate

__all__ = ["main", "register"]


def teammate(ctx: typer.Context) -> None:
    """Run a teammate for Claude Code (also the `exomonad-teammate` console script).

    CLAUDE_CODE_TEAMMATE_COMMAND is `exomonad-teammate`: Claude Code runs it as one
    program name, found on PATH.

    Takes Claude Code's teammate arguments (--agent-id, --agent-name, --team-name, ...).
    Routed by [teammate] in .exomonad/config.toml: Claude teammates run the real claude
    unchanged; Gemini teammates run Gemini CLI here, fed their inbox exactly once.
    """
    raise typer.Exit(_run(list(ctx.args)))


@handle_errors
def _run(args: list[str]) -> int:
    return run_teammate(args, state=find_state_dir(create=True))


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


def main() -> None:
    """The ``exomonad-teammate`` console script: ``exomonad teammate`` with ``sys.argv[1:]``."""
    try:
        code = _run(sys.argv[1:])
    except typer.Exit as exc:  # an ExoMonad error, already printed
        code = exc.exit_code
    sys.exit(code)
