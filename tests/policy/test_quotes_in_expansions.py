"""Quotes inside ``${...}`` are read as the shells read them.

A double-quoted part of ``${...}`` is one to bash and dash alike: its ``}`` closes
nothing. A single-quoted part of a double-quoted ``"${...}"`` is one to bash, while
dash (``sh -c``, Codex CLI's ``/bin/sh``) and bash's posix mode take its ``'`` for a
character. Found trying the gate as a worker: each command in ``LEAKS`` ran its
``grep``, printing the lead's token, allowed as one ``echo``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow
from tests.policy.worker import bash, run_bash, scratch_worktree

SECRET = "exo_lead_secret"

LEAKS = [
    'echo ${x:-"}"} ; grep -r exo_lead ../.. #"',
    'echo "${x:-"}"}" ; grep -r exo_lead ../.. #"',
    'sh -c "echo \\"\\${x:-\'}\\" ; grep -r exo_lead ../.. ; echo \\"\'}\\""',
    'set -o posix\necho "${x:-\'}" ; grep -r exo_lead ../.. ; echo "\'}"',
]


@pytest.mark.parametrize("command", LEAKS)
def test_a_command_after_a_quoted_brace_is_judged(tmp_path: Path, command: str) -> None:
    root, wt = scratch_worktree(tmp_path, token=SECRET)
    done = run_bash(command, wt)
    assert SECRET in done.stdout, (command, done)  # the real effect
    verdict = bash(command, root=str(root))
    assert not isinstance(verdict, Allow), (command, verdict)


@pytest.mark.parametrize("command", [
    'echo "${x:-"a b"}"', "echo \"${x:-'a'}\"", 'echo "${HOME}/x" "${PWD%/*}" "${x//\\"/}"',
    "git commit -m \"Don't ${x:-use} it\"", "echo ${x:-'a b'}",
])  # fmt: skip
def test_ordinary_expansions_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command
