"""A setter given a name the shell builds when it runs is asked.

``export $x=...``, ``declare``, ``readonly``, ``printf -v "$v"`` and ``read "$v"`` set
the variable the value of ``x`` or ``v`` names: ``GIT_DIR`` points git at the lead's
repository. Found trying the gate as a worker: each command in ``MOVES`` moved the lead's
``main``, allowed (``$x=...`` is no assignment word, and the setter check read only
names written out).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow
from tests.policy.test_setters_behind_prefixes import COMMIT, moves_main_and_is_asked
from tests.policy.worker import bash

MOVES = [
    f"x=GIT_DIR; export $x=../../.git; {COMMIT}",
    f"x=GIT; export ${{x}}_DIR=../../.git; {COMMIT}",
    f'x=GIT_DIR; declare -x "$x=../../.git"; {COMMIT}',
    f'v=GIT_DIR; printf -v "$v" ../../.git; export GIT_DIR; {COMMIT}',
    f'v=GIT_DIR; read "$v" <<< ../../.git; export GIT_DIR; {COMMIT}',
]


@pytest.mark.parametrize("command", MOVES)
def test_a_setter_of_a_built_name_is_asked(tmp_path: Path, command: str) -> None:
    moves_main_and_is_asked(tmp_path, command)


@pytest.mark.parametrize("command", [
    "export PATH=\"$PATH:$HOME/bin\"", "local x=$1", "export NODE_ENV=production",
    "local -r name=\"$1\"", "declare -x FOO=bar", "read -r line < f",
])  # fmt: skip
def test_ordinary_setters_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command
