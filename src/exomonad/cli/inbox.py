"""``exomonad inbox``: send, read and compact inbox files."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from exomonad.cli.common import ConfigDirOpt, JsonOpt, console, emit, handle_errors, team_paths
from exomonad.teams.dialects import get_dialect
from exomonad.teams.mailbox import Mailbox
from exomonad.teams.paths import TeamPaths
from exomonad.util.display import shown

app = typer.Typer(help="Send, read and compact team inboxes.", no_args_is_help=True)

DialectOpt = Annotated[
    str | None,
    typer.Option(
        "--dialect",
        help="Claude Code version conventions (2.1.112 or 2.1.330; default newest).",
        envvar="EXOMONAD_CLAUDE_DIALECT",
    ),
]


def _mailbox(paths: TeamPaths, dialect: str | None) -> Mailbox:
    return Mailbox(paths, dialect=get_dialect(dialect))


@app.command()
@handle_errors
def send(
    team: str,
    to: str,
    sender: Annotated[str, typer.Option("--from", help="Sender name.")],
    text: Annotated[str, typer.Option("--text", help="Message text.")],
    summary: Annotated[str | None, typer.Option(help="Short summary shown in the UI.")] = None,
    dialect: DialectOpt = None,
    config_dir: ConfigDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Append a message to TO's inbox (members only) and print its messageId."""
    message_id = _mailbox(team_paths(team, config_dir), dialect).send(
        to, sender=sender, text=text, summary=summary
    )
    emit({"messageId": message_id, "to": to}, as_json, lambda: typer.echo(message_id))


@app.command()
@handle_errors
def read(
    team: str,
    member: str,
    unread: Annotated[bool, typer.Option("--unread", help="Only unread entries.")] = False,
    config_dir: ConfigDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print MEMBER's inbox."""
    messages = _mailbox(team_paths(team, config_dir), None).read(member, unread_only=unread)

    def human() -> None:
        table = Table(title=shown(f"inbox of {member} ({len(messages)})"))
        for col in ("time", "from", "read", "summary / text"):
            table.add_column(col, overflow="fold")
        for m in messages:  # each field as its writer wrote it: escapes shown, no markup
            table.add_row(shown(m.timestamp), shown(m.sender), "yes" if m.is_read else "",
                          shown(m.summary or m.text))  # fmt: skip
        console.print(table)

    data = [m.to_json() | {"id": m.identity} for m in messages]
    emit(data, as_json, human)


@app.command()
@handle_errors
def compact(
    team: str,
    member: str,
    max_entries: Annotated[int, typer.Option(help="Keep at most this many entries.")] = 200,
    max_bytes: Annotated[int, typer.Option(help="Keep the file under this size.")] = 256 * 1024,
    config_dir: ConfigDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Archive old *read* entries of MEMBER's inbox (never unread ones)."""
    result = _mailbox(team_paths(team, config_dir), None).compact(
        member, max_entries=max_entries, max_bytes=max_bytes
    )
    data = {
        "kept": result.kept,
        "archived": result.archived,
        "archive": str(result.archive) if result.archive else None,
    }
    emit(data, as_json, lambda: console.print(f"kept {result.kept}, archived {result.archived}"))
