"""A line continuation (a ``\\`` and a newline) is removed where bash removes it.

Bash drops an unquoted ``\\``-newline before it reads a token, so one may stand inside
an operator (``&\\`` then ``&`` is ``&&``, ``<\\`` then ``<<`` is ``<<<``), between a
``$`` and what it expands (``$\\`` then ``(cmd)`` runs ``cmd``, also in ``${x:-...}`` and
in an expanded here-document's body), or join the lines of such a body (``E\\`` then
``ND`` is the delimiter ``END``). Found trying the gate as a worker: the lexer read
each character apart, so the commands bash ran there were not judged (or were judged
in the worktree), and each command in ``LEAKS`` printed the lead's token, allowed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Deny, Escalate
from exomonad.policy.shell_lex import lex
from tests.policy.worker import bash, run_bash, scratch_worktree

SECRET = "exo_lead_secret"

LEAKS = [
    "cd ../.. &\\\n& grep -r exo_lead .",
    "cat <\\\n<< hi\ngrep -r exo_lead ../..\nhi",
    "cat <<END\nE\\\nND\ngrep -r exo_lead ../..\nEND",
    "echo ${x:-$\\\n(grep -r exo_lead ../..)}",
    "cat <<E\n$\\\n(grep -r exo_lead ../..)\nE",
]

WRITES = [
    "cd ../.. &\\\n& echo pwned > README.md",
    "cat <\\\n<< hi\necho pwned > ../../README.md\nhi",
    "cat <<END\nE\\\nND\necho pwned > ../../README.md\nEND",
    "echo ${x:-$\\\n(echo pwned > ../../README.md)}",
]


def _project(tmp_path: Path) -> tuple[Path, Path]:
    root, wt = scratch_worktree(tmp_path, token=SECRET)
    (root / "README.md").write_text("hi\n")
    return root, wt


@pytest.mark.parametrize("command", LEAKS)
def test_what_a_continuation_joins_is_judged_joined(tmp_path: Path, command: str) -> None:
    root, wt = _project(tmp_path)
    done = run_bash(command, wt)
    assert SECRET in done.stdout, (command, done.stdout, done.stderr)  # the real effect
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Escalate | Deny), (command, verdict)


@pytest.mark.parametrize("command", WRITES)
def test_a_write_outside_behind_a_continuation_is_asked(tmp_path: Path, command: str) -> None:
    root, wt = _project(tmp_path)
    run_bash(command, wt)
    assert (root / "README.md").read_text() == "pwned\n", command  # the real effect
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Escalate), (command, verdict)


@pytest.mark.parametrize(("src", "texts"), [
    ("a &\\\n& b", ["a", "&&", "b"]),
    ("echo x 2\\\n>/dev/null", ["echo", "x", ">"]),
    ("echo $\\\nHOME ~\\\n+", ["echo", "$HOME", "$PWD"]),
    ("cat <\\\n(ls)", ["cat", "<process substitution>"]),
])  # fmt: skip
def test_the_lexer_reads_the_joined_text(src: str, texts: list[str]) -> None:
    assert [getattr(t, "text", getattr(t, "op", None)) for t in lex(src)] == texts


@pytest.mark.parametrize("command", [
    "ls -la \\\n  --color \\\n  src && \\\n  echo done",
    "cat <<END\nfoo\\\\\nEND\necho ok",
    "cat <<'END'\nE\\\nND\nEND",
    "echo 'a\\\nb' \"c\\\nd\"",
    "git commit -m x \\\n  -m y",
])  # fmt: skip
def test_ordinary_continuations_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command
