"""``exomonad team``: show a team, add and remove synthetic members."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from exomonad.cli.common import ConfigDirOpt, JsonOpt, console, emit, handle_errors, team_paths
from exomonad.teams.config import (
    create_team,
    list_teams,
    load_config,
    register_synthetic,
    remove_synthetic,
)
from exomonad.teams.presence import team_presence
from exomonad.util.display import shown

app = typer.Typer(help="Inspect teams and manage synthetic members.", no_args_is_help=True)


@app.command("list")
@handle_errors
def list_cmd(config_dir: ConfigDirOpt = None, as_json: JsonOpt = False) -> None:
    """List the teams under the config root."""
    names = list_teams(config_dir)
    listed = Text("\n").join(shown(n) for n in names) if names else "(no teams)"
    emit(names, as_json, lambda: console.print(listed))


@app.command()
@handle_errors
def create(
    team: str,
    description: Annotated[str | None, typer.Option(help="Team description.")] = None,
    config_dir: ConfigDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a team as 2.1.112's TeamCreate does (for headless use and demos)."""
    cfg = create_team(team_paths(team, config_dir), description=description)
    emit(cfg.to_json(), as_json, lambda: console.print(shown(f"created team {team}")))


@app.command()
@handle_errors
def show(team: str, config_dir: ConfigDirOpt = None, as_json: JsonOpt = False) -> None:
    """Show a team's members, their backends, panes and presence."""
    paths = team_paths(team, config_dir)
    cfg = load_config(paths)
    presence = team_presence(paths)

    def human() -> None:
        table = Table(title=shown(f"team {cfg.name}  (lead: {cfg.lead_name})"))
        for col in ("name", "type", "backend", "pane", "presence"):
            table.add_column(col)
        for m in cfg.members:
            pane = m.pane or m.tmux_pane_id or ""
            state = presence[m.name].state.value if m.name in presence else "?"
            table.add_row(*(shown(c) for c in (m.name, m.agent_type or "", m.backend_type or "",
                                               pane, state)))  # fmt: skip
        console.print(table)

    data = cfg.to_json()
    data["presence"] = {k: v.state.value for k, v in presence.items()}
    emit(data, as_json, human)


@app.command("add-member")
@handle_errors
def add_member(
    team: str,
    name: str,
    synthetic: Annotated[
        bool, typer.Option("--synthetic", help="Register as an ExoMonad (synthetic) member.")
    ] = False,
    agent_type: Annotated[str, typer.Option(help="agentType to record.")] = "exomonad-worker",
    pane: Annotated[
        str | None, typer.Option(help="Terminal pane to deliver to (e.g. tmux %3).")
    ] = None,
    color: Annotated[str | None, typer.Option(help="Member colour.")] = None,
    config_dir: ConfigDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Register a synthetic member (idempotent by name)."""
    if not synthetic:
        raise typer.BadParameter(
            "only synthetic members can be added; pass --synthetic "
            "(Claude Code registers its own members itself)"
        )
    member = register_synthetic(
        team_paths(team, config_dir), name, agent_type=agent_type, pane=pane, color=color
    )
    emit(member.to_json(), as_json, lambda: console.print(shown(f"registered {member.agent_id}")))


@app.command("remove-member")
@handle_errors
def remove_member(
    team: str, name: str, config_dir: ConfigDirOpt = None, as_json: JsonOpt = False
) -> None:
    """Remove a synthetic member (Claude Code's own members are refused)."""
    removed = remove_synthetic(team_paths(team, config_dir), name)
    emit(
        {"removed": removed, "name": name},
        as_json,
        lambda: console.print(shown(f"removed {name}" if removed else f"{name} was not a member")),
    )
    if not removed:
        raise typer.Exit(1)
