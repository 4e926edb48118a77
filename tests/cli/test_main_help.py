"""``exomonad --help`` lists each command with its summary as one wrapped paragraph."""

from __future__ import annotations

import inspect

import typer
from typer.models import CommandInfo
from typer.testing import CliRunner

from exomonad.cli import status
from exomonad.cli.main import app


def test_a_docstring_broken_over_lines_is_listed_as_one_line() -> None:
    """``status``'s summary spans three docstring lines; on a wide terminal the list
    shows it on one line, not broken where the source broke it."""
    doc = inspect.getdoc(status.status) or ""
    first = doc.split("\n\n")[0]
    assert "\n" in first, "the test needs a summary written over several lines"
    result = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    summary = " ".join(first.split())
    assert any(summary in line for line in result.output.splitlines()), result.output


def test_every_listed_summary_is_a_single_line() -> None:
    """No command, in any group, keeps a line break in the summary its group lists."""

    def infos(group: typer.Typer) -> list[CommandInfo]:
        found = list(group.registered_commands)
        for sub in group.registered_groups:
            assert sub.typer_instance is not None
            found += infos(sub.typer_instance)
        return found

    commands = infos(app)
    assert len(commands) > 20
    for info in commands:
        assert info.short_help, info.callback
        assert "\n" not in info.short_help, info.callback
