"""Shared CLI plumbing: the config-dir option, ``--json`` output, errors → exit codes.

Exit codes: 0 ok, 1 failure (an :class:`~exomonad.errors.ExomonadError`), 2 bad usage.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, ParamSpec, TypeVar

import orjson
import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from exomonad.errors import ExomonadError, InvalidNameError
from exomonad.teams.paths import TeamPaths
from exomonad.util.display import shown

__all__ = [
    "ConfigDirOpt",
    "JsonOpt",
    "StateDirOpt",
    "console",
    "emit",
    "err_console",
    "handle_errors",
    "state_of",
    "team_paths",
    "whole_table",
]

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)

ConfigDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--config-dir",
        help="Claude config root (default: $CLAUDE_CONFIG_DIR, else ~/.claude).",
        envvar="CLAUDE_CONFIG_DIR",
        show_envvar=True,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
StateDirOpt = Annotated[
    Path | None,
    typer.Option(help="Project state dir (default: nearest .exomonad/; $EXOMONAD_DIR)."),
]

P = ParamSpec("P")
R = TypeVar("R")


def whole_table(*headers: str, **kwargs: Any) -> Table:
    """A table whose cells fold instead of ending in "…": what a person approves is shown
    to its last character (found probing: a long command's tail, the part that deleted
    the lead's ``src``, was cut from ``approvals list`` at 80 columns)."""
    table = Table(**kwargs)
    for header in headers:
        table.add_column(header, overflow="fold")
    return table


def state_of(state_dir: Path | None) -> Path:
    """``state_dir``, else the nearest ``.exomonad/`` (made in the cwd if none)."""
    from exomonad.state import find_state_dir

    return state_dir or find_state_dir(create=True)


def team_paths(team: str, config_dir: Path | None) -> TeamPaths:
    """Paths for ``team`` under ``config_dir`` (or the environment's default)."""
    return TeamPaths(team, config_dir)


def emit(data: Any, as_json: bool, human: Callable[[], None] | None = None) -> None:
    """Print ``data`` as JSON when asked, else call ``human`` (or print ``data``)."""
    if as_json:
        sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
    elif human is not None:
        human()
    else:
        console.print(data)


def handle_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn ExoMonad errors into a red one-line message and the right exit code."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except InvalidNameError as exc:
            err_console.print(Text.assemble(("error:", "red"), " ", shown(exc)))
            raise typer.Exit(2) from exc
        except ExomonadError as exc:  # it may quote a message, a task, a member's name
            err_console.print(Text.assemble(("error:", "red"), " ", shown(exc)))
            raise typer.Exit(1) from exc

    return wrapper
