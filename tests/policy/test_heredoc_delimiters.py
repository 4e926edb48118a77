"""A here-document's delimiter is its word with the quotes removed, nothing expanded.

Bash neither tilde- nor brace-expands it: ``<<~`` ends at a line ``~``, ``<<{a..a}`` at
a line ``{a..a}``. Found trying the gate as a worker: the lexer read them as ``$HOME``
and ``a``, so the body ran on past the lines bash ran as commands, and each command in
``LEAKS`` printed the lead's token, allowed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Deny
from exomonad.policy.shell_lex import Redir, lex
from tests.policy.worker import bash, run_bash, scratch_worktree

SECRET = "exo_lead_secret"

LEAKS = [
    f"cat <<~\n~\ngrep -r exo_lead ../..\n{os.path.expanduser('~')}",
    "cat <<{a..a}\n{a..a}\ngrep -r exo_lead ../..\na",
    "cat <<-{a,b}\n\t{a,b}\ngrep -r exo_lead ../..\na",
]


@pytest.mark.parametrize("command", LEAKS)
def test_commands_after_such_a_delimiter_are_judged(tmp_path: Path, command: str) -> None:
    root, wt = scratch_worktree(tmp_path, token=SECRET)
    done = run_bash(command, wt)
    assert SECRET in done.stdout, (command, done.stdout, done.stderr)  # the real effect
    assert isinstance(bash(command, root=str(root)), Deny), command


@pytest.mark.parametrize(("src", "delimiter"), [
    ("cat <<~\n", "~"), ("cat <<{a..a}\n", "{a..a}"), ("cat <<'E'F\n", "EF"),
    ("cat <<$'\\x41'\n", "A"), ("cat <<E\\ F\n", "E F"),
])  # fmt: skip
def test_the_delimiter_is_the_word_unexpanded(src: str, delimiter: str) -> None:
    redir = next(t for t in lex(src) if isinstance(t, Redir))
    assert redir.target.text == delimiter


@pytest.mark.parametrize("command", ["cat <<EOF\nhi\nEOF", "cat <<< ~/x.txt", "cat < ~/x.txt"])
def test_ordinary_redirections_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command
