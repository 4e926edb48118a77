"""A ``~`` whose prefix (up to the first unquoted ``/``) holds a quote or an expansion is
no tilde-prefix to bash: ``~""/x`` is ``x`` in a directory named ``~``.

Found trying the gate as a worker: the lexer expanded the ``~`` before the quote, so
``mkdir '~'; cat ~""/../../../.e*/l*`` was read as a read of ``/.e*/l*``, allowed, and
printed the lead's token (``~/../../..`` from the worktree is the project).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Deny
from exomonad.policy.shell_lex import Word, lex
from tests.policy.worker import bash, run_bash, scratch_worktree

SECRET = "exo_lead_secret"


@pytest.mark.parametrize("command", [
    "mkdir -p '~'; cat ~\"\"/../../../.e*/l*",
    "mkdir -p '~'; cat ~''/../../../.e*/l*",
    "mkdir -p '~'; cat ~\\/../../../.e*/l*",
])  # fmt: skip
def test_the_state_through_a_directory_named_tilde_is_refused(tmp_path: Path, command: str) -> None:
    root, wt = scratch_worktree(tmp_path, token=SECRET)
    done = run_bash(command, wt)
    assert SECRET in done.stdout, (command, done.stdout, done.stderr)  # the real effect
    assert isinstance(bash(command, root=str(root)), Deny), command


@pytest.mark.parametrize(("src", "text"), [
    ('~""/x', "~/x"), ("~root''", "~root"), ("~\\/x", "~/x"), ('~+"x"', "~+x"),
])  # fmt: skip
def test_such_a_word_is_literal(src: str, text: str) -> None:
    word = next(t for t in lex(f"echo {src}")[1:] if isinstance(t, Word))
    assert word.text == text
    done = run_bash(f"printf %s {src}", Path("/"))
    assert done.stdout == text  # as bash prints it


@pytest.mark.parametrize("command", ["cat ~/x", "ls ~", "cd ~/src && ls", "cat ~+/x"])
def test_ordinary_tildes_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command
