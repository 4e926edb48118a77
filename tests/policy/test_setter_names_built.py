"""A setter given a name the shell builds when it runs is asked.

``export $x=...``, ``declare``, ``readonly``, ``printf -v "$v"`` and ``read "$v"`` set
the variable the value of ``x`` or ``v`` names: ``GIT_DIR`` points git at the lead's
repository. Found trying the gate as a worker: each command in ``MOVES`` moved the lead's
``main``, allowed (``$x=...`` is no assignment word, and the setter check read only
names written out).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Escalate
from tests.policy.worker import bash, run_bash

_COMMIT = "git -c user.email=a@b -c user.name=a commit -q --allow-empty -m x"

MOVES = [
    f"x=GIT_DIR; export $x=../../.git; {_COMMIT}",
    f"x=GIT; export ${{x}}_DIR=../../.git; {_COMMIT}",
    f'x=GIT_DIR; declare -x "$x=../../.git"; {_COMMIT}',
    f'v=GIT_DIR; printf -v "$v" ../../.git; export GIT_DIR; {_COMMIT}',
    f'v=GIT_DIR; read "$v" <<< ../../.git; export GIT_DIR; {_COMMIT}',
]


def _main(root: Path) -> str:
    return subprocess.run(["git", "-C", str(root), "rev-parse", "main"], capture_output=True,
                          text=True, check=True).stdout  # fmt: skip


@pytest.mark.parametrize("command", MOVES)
def test_a_setter_of_a_built_name_is_asked(tmp_path: Path, command: str) -> None:
    root = tmp_path / "p"
    root.mkdir()
    run_bash(f"git init -q -b main && {_COMMIT} && git worktree add -q -b exo/w1 .worktrees/w1",
             root)  # fmt: skip
    before = _main(root)
    run_bash(command, root / ".worktrees" / "w1")
    assert _main(root) != before, command  # the real effect: the lead's main moved
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Escalate), (command, verdict)


@pytest.mark.parametrize("command", [
    "export PATH=\"$PATH:$HOME/bin\"", "local x=$1", "export NODE_ENV=production",
    "local -r name=\"$1\"", "declare -x FOO=bar", "read -r line < f",
])  # fmt: skip
def test_ordinary_setters_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command
