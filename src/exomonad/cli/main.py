"""Entry point: ``exomonad <group> <command>``."""

from __future__ import annotations

import inspect

import typer

from exomonad import __version__
from exomonad.cli import (
    dashboard,
    demo,
    doctor,
    inbox,
    init,
    lifecycle,
    notify,
    policy,
    relay,
    serve,
    status,
    task,
    team,
    teammate,
    watch,
)

app = typer.Typer(
    name="exomonad",
    help="Make Gemini CLI and other terminal agents first-class Claude Code teammates.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(team.app, name="team")
app.add_typer(inbox.app, name="inbox")
app.add_typer(task.app, name="task")
watch.register(app)
serve.register(app)
status.register(app)
relay.register(app)
teammate.register(app)
init.register(app)
doctor.register(app)
app.add_typer(policy.app, name="policy")
policy.register(app)
lifecycle.register(app)
notify.register(app)
dashboard.register(app)
demo.register(app)


@app.command()
def version() -> None:
    """Print the ExoMonad version."""
    typer.echo(__version__)


def one_line_summaries(group: typer.Typer) -> None:
    """Give each command of ``group`` (and of its subgroups) a one-line summary for its
    group's list: the first paragraph of its help with the line breaks joined, which
    typer's rich mode would otherwise print as they are in the docstring."""
    for info in group.registered_commands:
        text = info.help if info.help is not None else inspect.getdoc(info.callback) or ""
        if info.short_help is None:
            info.short_help = " ".join(text.split("\n\n")[0].split())
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            one_line_summaries(sub.typer_instance)


one_line_summaries(app)


def main() -> None:
    """Console-script entry point."""
    app()
