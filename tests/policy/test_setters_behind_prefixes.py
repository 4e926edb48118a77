"""A builtin that sets a variable at run time is read behind what still runs it in the
shell: an assignment (``IFS= read``), ``builtin``, ``command``, ``time``.

``printf -v GIT_DIR ../../.git`` and ``read GIT_DIR`` are asked (they point git at the
lead's repository); found trying the gate as a worker, each command in ``MOVES`` moved
the lead's ``main``, allowed: the check looked at the line's first word only.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Escalate
from tests.policy.worker import bash, run_bash

COMMIT = "git -c user.email=a@b -c user.name=a commit -q --allow-empty -m x"

MOVES = [
    f"IFS= read GIT_DIR <<< ../../.git; export GIT_DIR; {COMMIT}",
    f"builtin printf -v GIT_DIR ../../.git; export GIT_DIR; {COMMIT}",
    f"command read GIT_DIR <<< ../../.git; export GIT_DIR; {COMMIT}",
    f"command -p read GIT_DIR <<< ../../.git; export GIT_DIR; {COMMIT}",
    f"time read GIT_DIR <<< ../../.git; export GIT_DIR; {COMMIT}",
    # found rereading: the setter check and the cd check each knew their own wrappers
    f"command -pp read GIT_DIR <<< ../../.git; export GIT_DIR; {COMMIT}",
    f"time -p X=1 read GIT_DIR <<< ../../.git; export GIT_DIR; {COMMIT}",
]


def _main(root: Path) -> str:
    return subprocess.run(["git", "-C", str(root), "rev-parse", "main"], capture_output=True,
                          text=True, check=True).stdout  # fmt: skip


def moves_main_and_is_asked(tmp_path: Path, command: str) -> None:
    """``command``, run in a worker's worktree, moves the lead's ``main`` (the real
    effect), and the policy asks about it."""
    root = tmp_path / "p"
    root.mkdir()
    run_bash(f"git init -q -b main && {COMMIT} && git worktree add -q -b exo/w1 .worktrees/w1",
             root)  # fmt: skip
    before = _main(root)
    run_bash(command, root / ".worktrees" / "w1")
    assert _main(root) != before, command  # the real effect: the lead's main moved
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Escalate), (command, verdict)


@pytest.mark.parametrize("command", MOVES)
def test_a_setter_behind_a_prefix_is_asked(tmp_path: Path, command: str) -> None:
    moves_main_and_is_asked(tmp_path, command)


@pytest.mark.parametrize("command", [
    "IFS= read -r line < f; echo $line", "while IFS= read -r l; do echo $l; done < f",
    "command -v git", "builtin echo hi", "time make", "IFS=, read -r a b <<< 'x,y'",
])  # fmt: skip
def test_ordinary_reads_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command
