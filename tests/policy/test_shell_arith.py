"""Variables arithmetic assigns are set at run time (``policy/shell_arith.py``).

Found trying the gate as a worker: with a directory ``1`` in the worktree holding an
``ls`` that removes its operands, ``(( PATH = 1 )); ls ../../a.txt`` deleted the lead's
``a.txt``, allowed as the ``ls`` it seemed (``(( PATH = 1 ))`` read as a command named
``PATH``); so did ``let PATH=1`` and each other arithmetic below.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow
from tests.policy.worker import bash, scratch_worktree

#: Each sets ``PATH`` to ``1`` by arithmetic, then runs ``ls ../../a.txt``.
SETS_PATH = [
    "(( PATH = 1 ))",
    "((PATH=1))",
    "let PATH=1",
    "let 'PATH = 1'",
    ": $((PATH=1))",
    ": $[PATH=1]",
    ": ${x[PATH=1]}",
    "declare -i n=PATH=1",
    "[[ PATH=1 -eq 1 ]]",
    "(( x = 1, PATH = 1 ))",
    "(( ((1)), PATH = 1 ))",
    "v=PATH=1; (( v ))",
    "v=PATH=1; echo $((v))",
    "declare -i x; x=PATH=1",
    "read v <<< PATH=1; (( v ))",
    "for v in PATH=1; do (( v )); done",
    'x=PATH; let "$x=1"',
    "x=PATH; echo $(( $x = 1 ))",
    "x=PATH; : ${a[$x=1]}",
    "declare -n r=PATH; (( r = 1 ))",
    "v=PATH=1; echo ${a[v]}",
]
ORDINARY = [
    "(( i++ )); n=$((n+1)); echo $((N + 1))",
    "for f in *; do c=$((c+1)); done; echo $c",
    "x=$(( $(wc -l < README.md) * 2 )); echo $x",
    "[[ $n -eq 1 ]] && echo one",
    "echo $(( ${#a[@]} + 1 ))",
    "a[i]=1; echo ${a[i]}",
    "COUNT=$((COUNT+1)); echo $COUNT",
    "export PATH=$PATH:/x; echo $((1 + 1))",
]


@pytest.mark.parametrize("setting", SETS_PATH)
def test_an_arithmetic_assignment_to_path_is_not_allowed(tmp_path: Path, setting: str) -> None:
    root, wt = scratch_worktree(tmp_path)
    (wt / "1").mkdir()
    fake = wt / "1" / "ls"
    fake.write_text('#!/bin/sh\n/bin/rm -f "$@"\n')
    fake.chmod(0o755)
    lead = root / "a.txt"
    lead.write_text("lead\n")
    command = f"{setting}; ls ../../a.txt"
    subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True, timeout=30,
                   check=False)  # fmt: skip
    assert not lead.exists(), command  # it really ran the worktree's ls
    assert not isinstance(bash(command, root=str(root)), Allow), command


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_arithmetic_stays_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command


def test_a_long_line_is_read_once() -> None:
    """A word of 20,000 ``a[`` took seconds per thousand (each subscript looked for its
    ``]`` to the end of the line); each bracket's match is now found in one pass."""
    assert isinstance(bash("cat " + "a[" * 20_000), Allow)
    assert not isinstance(bash("let " + "a[" * 20_000 + "PATH=1"), Allow)
