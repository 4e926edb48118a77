"""A here-document inside a command substitution ends where bash ends it.

In ``$( )``, ``"$( )"`` and ``<( )`` bash ends a here-document's body at a line that
starts with the delimiter and holds a ``)`` after it (``E)``, ``E )``, ``E cmd)``), and
reads the rest of that line, and the lines after it, as commands; a ``$( )`` closed
before its here-document's newline (``$(cat <<E)``) takes its body from the lines after
it. Found trying the gate as a worker: the lexer read each body on to a line equal to
the delimiter, so the commands bash ran there were never judged, and each command in
``LEAKS`` printed the lead's token, allowed. Dash reads these otherwise, so they are
asked (a syntax error to the lexer).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Escalate
from exomonad.policy.shell_lex import ShellSyntaxError, lex
from tests.policy.worker import bash, run_bash, scratch_worktree

SECRET = "exo_lead_secret"

LEAKS = [
    "echo $(cat <<'E'\nE)\ngrep -r exo_lead ../..\nE\n)",
    'echo "$(cat <<\'E\'\nE)"\ngrep -r exo_lead ../..\nE\n)"',
    "cat <(cat <<'E'\nE)\ngrep -r exo_lead ../..\nE\n)",
    "x=$(cat <<'E'\nE)\ngrep -r exo_lead ../..\nE\n)",
    "echo $(cat <<E\nE )\ngrep -r exo_lead ../..\nE\n)",
    "echo $(cat <<-E\n\tE)\ngrep -r exo_lead ../..\nE\n)",
    "echo $(echo $(cat <<E\nE)\ngrep -r exo_lead ../..\nE\n)\n)",
    "echo $(cat <<E\nE echo $(grep -r exo_lead ../..))",
    "echo $(cat <<E)\n'\nE\ngrep -r exo_lead ../.. #'",
]


def _project(tmp_path: Path) -> tuple[Path, Path]:
    root, wt = scratch_worktree(tmp_path, token=SECRET)
    (root / "README.md").write_text("hi\n")
    return root, wt


@pytest.mark.parametrize("command", LEAKS)
def test_commands_after_a_here_document_ended_by_its_substitution_are_asked(
    tmp_path: Path, command: str
) -> None:
    root, wt = _project(tmp_path)
    done = run_bash(command, wt)
    assert SECRET in done.stdout, (command, done.stdout, done.stderr)  # the real effect
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Escalate), (command, verdict)


@pytest.mark.parametrize("command", [
    "echo $(cat <<'E'\nE)\necho pwned > ../../README.md; ( :\nE\n)",
    "echo $(cat <<E)\ncd a/b\nE\necho pwned > ../../README.md",
])  # fmt: skip
def test_a_write_outside_after_such_a_here_document_is_asked(tmp_path: Path, command: str) -> None:
    root, wt = _project(tmp_path)
    (wt / "a" / "b").mkdir(parents=True)
    run_bash(command, wt)
    assert (root / "README.md").read_text() == "pwned\n", command  # the real effect
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Escalate), (command, verdict)


@pytest.mark.parametrize("src", ["$(cat <<E\nE x)\n", "$(cat <<E\nEE)\n", "$(cat <<''\na(b)\n",
                                 "<(cat <<E)\nE\n", "$( (cat <<E\nE) )"])  # fmt: skip
def test_the_lexer_does_not_guess_where_such_a_body_ends(src: str) -> None:
    with pytest.raises(ShellSyntaxError):
        lex(f"echo {src}")


@pytest.mark.parametrize("command", [
    "git commit -m \"$(cat <<'EOF'\nFix parser (tests)\n\nEOF is a word\nEOF\n)\"",
    "x=$(cat <<EOF\na (b)\nEOF\n)",
    "cat > f.txt <<'EOF'\nhello E)\nEOF",
    "git commit -F- <<EOF\nmsg (x)\nEOF",
    "echo `cat <<E\nE)\nE\n`",
])  # fmt: skip
def test_ordinary_here_documents_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command
