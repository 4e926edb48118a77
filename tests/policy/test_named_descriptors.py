"""``{NAME}>file`` opens file on a descriptor bash picks and puts in NAME: ``{NAME}`` is
no word of the command.

Found trying the gate as a worker: the lexer kept ``{fd}`` as an argument, so ``sort -o
{fd}>/dev/null ../../README.md p.txt`` was read as ``sort -o {fd}`` (a file in the
worktree) reading ``../../README.md``, allowed, and bash wrote the lead's README.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Escalate
from exomonad.policy.shell_lex import NAMED_FD, Redir, Word, lex
from tests.policy.worker import bash, run_bash, scratch_worktree


@pytest.mark.parametrize("command", [
    "sort -o {fd}>/dev/null ../../README.md p.txt",
    "sort -o {a[1]}>/dev/null ../../README.md p.txt",
    "sort -o {fd}\\\n>/dev/null ../../README.md p.txt",
])  # fmt: skip
def test_an_option_value_behind_a_named_descriptor_is_judged(tmp_path: Path, command: str) -> None:
    root, wt = scratch_worktree(tmp_path)
    (root / "README.md").write_text("hi\n")
    (wt / "p.txt").write_text("pwned\n")
    run_bash(command, wt)
    assert (root / "README.md").read_text() == "pwned\n", command  # the real effect
    assert isinstance(bash(command, root=str(root)), Escalate), command


def test_the_lexer_reads_a_redirection() -> None:
    tokens = lex("exec {fd}>out.log {x} > f")
    assert [t.text for t in tokens if isinstance(t, Word)] == ["exec", "{x}"]
    assert [(t.fd, t.target.text) for t in tokens if isinstance(t, Redir)] == [
        (NAMED_FD, "out.log"), (None, "f"),
    ]  # fmt: skip


@pytest.mark.parametrize("command", ["exec {fd}>out.log", "cat {a[1]}<a.txt", "echo {x} > f"])
def test_ordinary_named_descriptors_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command
