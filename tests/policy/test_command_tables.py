"""Bash's tables of commands and aliases are set only by asking, as ``hash -p`` and
``alias`` are.

``BASH_CMDS[ls]=/bin/rm`` makes ``ls`` run ``rm``, as ``hash -p /bin/rm ls`` does, and
``BASH_ALIASES[ls]=rm`` defines an alias, as ``alias ls=rm`` does. Found trying the gate
as a worker: each command in ``LEAKS`` printed the lead's token and each in ``DELETES``
deleted the lead's ``a.txt``, allowed, judged as the ``ls`` or ``head`` it seemed to
run. An assignment to either (plain, subscripted, ``+=``, through ``declare`` and the
like, ``printf -v``, ``read``, ``${...:=}``, an arithmetic one, a name reference's
target), and a name reference whose target is set at run time, is asked.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Escalate
from tests.policy.worker import bash, run_bash, scratch_worktree

SECRET = "exo_lead_secret"

LEAKS = [
    "BASH_CMDS[ls]=/bin/grep; ls -r exo_lead ../..",
    "printf -v 'BASH_CMDS[head]' /bin/grep; head -r exo_lead ../..",
    "read 'BASH_CMDS[head]' <<< /bin/grep; head -r exo_lead ../..",
    "declare 'BASH_CMDS[head]'=/bin/grep; head -r exo_lead ../..",
    "typeset BASH_CMDS[head]=/bin/grep; head -r exo_lead ../..",
    ": ${BASH_CMDS[ls]:=/bin/grep}; ls -r exo_lead ../..",
    "declare -n r=BASH_CMDS; r[head]=/bin/grep; head -r exo_lead ../..",
    "declare -n r; r=BASH_CMDS; r[head]=/bin/grep; head -r exo_lead ../..",
    "declare -n r; read r < g; r[head]=/bin/grep; head -r exo_lead ../..",
    "shopt -s expand_aliases; BASH_ALIASES[ls]=grep\nls -r exo_lead ../..",
    # PS4[0] is PS4, read -a PS4 fills it: set -x runs what it holds
    "printf -v 'PS4[0]' %s '$(grep -r exo_lead ../.. >&2)'; set -x; :",
    "read 'PS4[0]' <<< '$(grep -r exo_lead ../.. >&2)'; set -x; :",
    "read -a PS4 <<< '$(grep${IFS}-r${IFS}exo_lead${IFS}../..>&2)'; set -x; :",
]

#: ``1`` in the worktree is a script that removes its operands.
DELETES = [
    "BASH_CMDS[ls]=/bin/rm; ls ../../a.txt",
    "printf -v 'BASH_CMDS[head]' /bin/rm; head ../../a.txt",
    "shopt -s expand_aliases; BASH_ALIASES[ls]=rm\nls ../../a.txt",
    "(( BASH_CMDS[ls]=1 )); ls ../../a.txt",
    "let 'BASH_CMDS[ls]=1'; ls ../../a.txt",
    "v='BASH_CMDS[ls]=1'; (( v )); ls ../../a.txt",
    "read v <<< 'BASH_CMDS[ls]=1'; (( v )); ls ../../a.txt",
]


def _project(tmp_path: Path) -> tuple[Path, Path]:
    root, wt = scratch_worktree(tmp_path, token=SECRET)
    (root / "a.txt").write_text("x\n")
    (wt / "g").write_text("BASH_CMDS\n")
    (wt / "1").write_text('#!/bin/sh\nrm "$@"\n')
    (wt / "1").chmod(0o755)
    return root, wt


@pytest.mark.parametrize("command", LEAKS)
def test_a_command_table_set_to_read_the_state_is_asked(tmp_path: Path, command: str) -> None:
    root, wt = _project(tmp_path)
    done = run_bash(command, wt)
    assert SECRET in done.stdout + done.stderr, (command, done)  # the real effect
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Escalate), (command, verdict)


@pytest.mark.parametrize("command", DELETES)
def test_a_command_table_set_to_delete_outside_is_asked(tmp_path: Path, command: str) -> None:
    root, wt = _project(tmp_path)
    run_bash(command, wt)
    assert not (root / "a.txt").exists(), command  # the real effect
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Escalate), (command, verdict)


@pytest.mark.parametrize("command", [
    "hash -p /bin/rm ls", "mapfile -t BASH_CMDS < f", "unset BASH_CMDS", "env BASH_ALIASES=x ls",
    "typeset -A BASH_ALIASES=([ls]=rm)", "BASH_CMDS+=([ls]=/bin/rm)", "read -a BASH_CMDS < f",
    "declare -n r=$1", "cat <<EOF | bash\nBASH_CMDS[ls]=/bin/rm\nEOF",
])  # fmt: skip
def test_other_ways_to_set_them_are_asked(command: str) -> None:
    assert isinstance(bash(command), Escalate), command


@pytest.mark.parametrize("command", [
    "ls; hash; hash -r; type ls", "declare -A m; m[k]=v; echo ${m[k]}", "echo $((1 + 2))",
    "printf -v out %s x; echo $out", "read -r line < f; echo $line", "declare -n r=arr",
    "read -ra parts <<< 'a b'", "while read -r k v; do echo $k; done < f",
])  # fmt: skip
def test_ordinary_commands_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command
