"""``exomonad task``: Claude Code's shared task list from the command line.

The list lives in ``<config root>/tasks/<list>/`` (``<list>`` is
``$CLAUDE_CODE_TASK_LIST_ID``, else the team name). Claude Code keys task lists by name
alone, so these commands work whether or not the team's ``config.json`` exists: a list
may outlive its team, or be shared by several sessions.

``--json`` prints the task as it is on disk (``list`` prints an array of them); unreadable
task files are skipped by ``list`` with a warning on stderr. Exit codes: 0 ok, 1 a task
rule or file problem, 2 bad usage.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from exomonad.cli.common import (
    ConfigDirOpt,
    JsonOpt,
    console,
    emit,
    err_console,
    handle_errors,
    team_paths,
)
from exomonad.teams.models import Task, TaskStatus
from exomonad.teams.tasks import TaskStore
from exomonad.util.display import shown

__all__ = ["app"]

app = typer.Typer(
    help="Claude Code's shared task list (tasks/<list>/<id>.json).",
    no_args_is_help=True,
)

TeamArg = Annotated[str, typer.Argument(help="Team name (or task list id).")]
IdArg = Annotated[str, typer.Argument(help="Task id, e.g. 3.")]
StatusOpt = Annotated[TaskStatus | None, typer.Option("--status", help="New status.")]
DescriptionOpt = Annotated[str | None, typer.Option("--description", "-d", help="Details.")]
ActiveFormOpt = Annotated[
    str | None, typer.Option("--active-form", help="Spinner text while in progress.")
]

_STATUS_STYLE = {"pending": "yellow", "in_progress": "cyan", "completed": "green"}


def _store(team: str, config_dir: ConfigDirOpt) -> TaskStore:
    return TaskStore(team_paths(team, config_dir))


def _show(task: Task, verb: str) -> None:
    """Print one task for humans."""
    line = shown(f"{verb} #{task.id}: ")
    line.append(shown(task.subject, style="bold"))
    console.print(line)
    rows = [
        ("status", task.status),
        ("owner", task.owner),
        ("active form", task.active_form),
        ("blocks", ", ".join(task.blocks)),
        ("blocked by", ", ".join(task.blocked_by)),
        ("description", task.description),
    ]
    for label, value in rows:
        if value:
            console.print(shown(f"  {label}: {value}"))
    if task.metadata:
        console.print(shown(f"  metadata: {task.metadata}"))


@app.command("create")
@handle_errors
def create(
    team: TeamArg,
    subject: Annotated[str, typer.Argument(help="One-line title.")],
    description: Annotated[str, typer.Option("--description", "-d", help="Details.")] = "",
    blocked_by: Annotated[
        list[str] | None, typer.Option("--blocked-by", help="Id of a blocking task (repeat).")
    ] = None,
    owner: Annotated[str | None, typer.Option("--owner", help="Assign to this member.")] = None,
    active_form: ActiveFormOpt = None,
    config_dir: ConfigDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a pending task with the next id."""
    task = _store(team, config_dir).create(
        subject, description, active_form=active_form, owner=owner, blocked_by=blocked_by or ()
    )
    emit(task.to_json(), as_json, lambda: _show(task, "Created task"))


@app.command("list")
@handle_errors
def list_tasks(
    team: TeamArg,
    status: Annotated[
        TaskStatus | None, typer.Option("--status", help="Only tasks with this status.")
    ] = None,
    config_dir: ConfigDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List tasks by id (unreadable files are skipped with a warning)."""
    store = _store(team, config_dir)
    tasks = [t for t in store.list() if status is None or t.status == status]
    for problem in store.problems:
        err_console.print(shown(f"warning: skipped {problem}", style="yellow"))

    def human() -> None:
        if not tasks:
            console.print(shown(f"No tasks in {store.dir}"))
            return
        table = Table("ID", "Status", "Owner", "Subject", "Blocked by", title=shown(store.dir))
        for t in tasks:  # each field as its writer wrote it: escapes shown, no markup
            table.add_row(
                shown(t.id),
                shown(t.status, style=_STATUS_STYLE.get(t.status, "")),
                shown(t.owner or ""),
                shown(t.subject),
                shown(", ".join(t.blocked_by)),
            )
        console.print(table)

    emit([t.to_json() for t in tasks], as_json, human)


@app.command("get")
@handle_errors
def get(
    team: TeamArg, task_id: IdArg, config_dir: ConfigDirOpt = None, as_json: JsonOpt = False
) -> None:
    """Show one task."""
    task = _store(team, config_dir).get(task_id)
    emit(task.to_json(), as_json, lambda: _show(task, "Task"))


@app.command("update")
@handle_errors
def update(
    team: TeamArg,
    task_id: IdArg,
    status: StatusOpt = None,
    owner: Annotated[
        str | None, typer.Option("--owner", help='New owner ("" removes the owner).')
    ] = None,
    subject: Annotated[str | None, typer.Option("--subject", help="New title.")] = None,
    description: DescriptionOpt = None,
    active_form: ActiveFormOpt = None,
    config_dir: ConfigDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Change a task's fields (only those given), under the task's lock."""
    if all(v is None for v in (status, owner, subject, description, active_form)):
        err_console.print("[red]error:[/red] nothing to update: give at least one option")
        raise typer.Exit(2)
    store = _store(team, config_dir)
    changes: dict[str, Any] = {
        k: v
        for k, v in (
            ("subject", subject),
            ("description", description),
            ("active_form", active_form),
            ("status", status),
        )
        if v is not None
    }
    if owner is not None:
        changes["owner"] = owner or None
    task = store.update(task_id, **changes)
    emit(task.to_json(), as_json, lambda: _show(task, "Updated task"))


@app.command("claim")
@handle_errors
def claim(
    team: TeamArg,
    task_id: IdArg,
    owner: Annotated[str, typer.Option("--owner", help="Member claiming the task.")],
    config_dir: ConfigDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Claim a task: refused if owned by another, completed, or blocked by an open task."""
    task = _store(team, config_dir).claim(task_id, owner)
    emit(task.to_json(), as_json, lambda: _show(task, f"{owner} claimed task"))


@app.command("delete")
@handle_errors
def delete(
    team: TeamArg, task_id: IdArg, config_dir: ConfigDirOpt = None, as_json: JsonOpt = False
) -> None:
    """Delete a task and remove it from other tasks' blocks/blockedBy."""
    _store(team, config_dir).delete(task_id)
    emit({"deleted": task_id}, as_json, lambda: console.print(shown(f"Deleted task #{task_id}")))
