"""``exomonad relay``: run a headless lead and feed it its inbox."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from exomonad.bridge.relay import run_relay
from exomonad.cli.common import ConfigDirOpt, handle_errors
from exomonad.state import find_state_dir
from exomonad.teams import get_dialect

__all__ = ["register"]


@handle_errors
def relay(
    command: Annotated[list[str], typer.Argument(help="The lead's command, after --.")],
    team: Annotated[str, typer.Option(help="The team whose lead inbox is relayed.")],
    member: Annotated[
        str | None, typer.Option(help="Whose inbox (default: the team's lead).")
    ] = None,
    state_dir: Annotated[Path | None, typer.Option(help="Project state dir.")] = None,
    dialect: Annotated[str | None, typer.Option(help="Claude Code dialect.")] = None,
    config_dir: ConfigDirOpt = None,
) -> None:
    """Run a headless lead (claude -p --input-format stream-json ...) and feed it new
    inbox messages as stream-json user turns, each exactly once.

    Example: exomonad relay --team my-team -- claude -p --input-format stream-json
    --output-format stream-json --verbose
    """
    code = run_relay(
        command, team=team, member=member, state_dir=state_dir or find_state_dir(create=True),
        root=config_dir, dialect=get_dialect(dialect),
    )  # fmt: skip
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    """Add ``relay`` to the top-level app."""
    app.command("relay", context_settings={"allow_interspersed_args": False})(relay)
