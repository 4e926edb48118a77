"""``!(`` (or ``?(``, ``*(``, ``+(``, ``@(``) is a pattern where extglob is on.

With ``shopt -s extglob`` run on a line before (or by a login shell's profile: Codex runs
``bash -lc``), bash reads ``!(x #)`` as one word, a pattern whose ``#`` is no comment; the
lexer read a negated subshell (after ``>``, a subshell) and a comment to the end of the
line. Found trying the gate as a worker: each command in
``test_a_command_behind_such_a_pattern_is_asked`` printed the lead's token, allowed. Such
a ``(`` is now unparsable (asked); ``! (``, with a space, is the same to both.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Escalate
from tests.policy.worker import bash, run_bash, scratch_worktree

SECRET = "exo_lead_secret"


@pytest.mark.parametrize("command", [
    "shopt -s extglob\n!(x #) ; grep -r exo_lead ../..\n)",
    "shopt -s extglob\n> ?(x #) ; grep -r exo_lead ../..\n)",
])  # fmt: skip
def test_a_command_behind_such_a_pattern_is_asked(tmp_path: Path, command: str) -> None:
    root, wt = scratch_worktree(tmp_path, token=SECRET)
    done = run_bash(command, wt)
    assert SECRET in done.stdout, (done.stdout, done.stderr)  # the real effect
    assert isinstance(bash(command, root=str(root)), Escalate)


@pytest.mark.parametrize("command", ["! (true)", "! true", "(! true)", "echo hi!",
                                     "[ ! -f x ] && echo y"])  # fmt: skip
def test_ordinary_negations_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command
