"""Files that programs' own mini-languages and backup names write outside the worktree.

Found probing the long tail of ordinary programs as a worker, each allowed and each
writing ``<project>/x`` for real: a sed label ends at a blank (``:x w ../../x`` is a
label and a ``w``); a backup suffix or prefix with a ``/`` (``sed -i``, ``perl -i``,
``gzip -S``, ``patch -z``/``-B``/``-Y``: ``FILE + SUFFIX`` with a directory ``FILE..``
in the worktree climbs out of it) and patch's reject file (``-r``); a sed or awk program
read from stdin (a here-string, a pipe) was judged only for the paths it names.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Escalate
from tests.policy.worker import bash, run_bash, scratch_worktree

_DIFF = "--- x\n+++ x\n@@ -1 +1 @@\n-a\n+b\n"
_BAD_DIFF = "--- x\n+++ x\n@@ -1 +1 @@\n-zzz\n+b\n"


@pytest.mark.parametrize("command", [
    "sed ':x w ../../x' a.txt",
    "sed -i../../../../x 's/a/b/' a.txt",
    "sed --in-place=../../../../x 's/a/b/' a.txt",
    "perl -i../../../../x -pe 1 a.txt",
    "gzip -S ../../../../x a.txt",
    "awk -f - a.txt <<< 'BEGIN { print 1 > \"../../x\" }'",
    "sed -f /dev/stdin a.txt <<< 'w ../../x'",
    "echo 'w ../../x' | sed -f - a.txt",
    "printf 'BEGIN { print 1 > \"../../x\" }' | awk -f - a.txt",
    "patch -b -B ../../ x p.diff",
    "patch -b -Y ../../ x p.diff",
    "patch -b --suffix=../../../../x x p.diff",
    "patch -r ../../x x bad.diff",
])  # fmt: skip
def test_a_write_a_program_names_itself_is_not_allowed(tmp_path: Path, command: str) -> None:
    root, wt = scratch_worktree(tmp_path)
    for name in ("a.txt", "x"):
        (wt / name).write_text("a\n")
        (wt / f"{name}..").mkdir()
    (wt / "p.diff").write_text(_DIFF)
    (wt / "bad.diff").write_text(_BAD_DIFF)
    run_bash(command, wt)
    assert (root / "x").exists(), command  # the real effect: the lead's checkout written
    assert isinstance(bash(command, root=str(root)), Escalate), command


@pytest.mark.parametrize("command", [
    "sed -i.bak 's/a/b/' a.txt",
    "sed -ni.orig 's/a/b/p' a.txt",
    "sed ':a;N;$!ba;s/\\n/ /g' a.txt",
    "sed -e :a -e '$!N;ba' a.txt",
    "sed '/x/b end; s/a/b/; :end' a.txt",
    "perl -i.bak -pe 's/a/b/' a.txt",
    "gzip -S .gzz a.txt",
    "sed -f - a.txt <<< 's/a/b/'",
    "awk -f - a.txt <<< '{ print $1 }'",
    "cat a.txt | sed -n p",
    "cat a.txt | awk '{ print $1 }'",
    "patch -p1 < p.diff",
    "patch -b -z .orig x p.diff",
    "patch -p1 -r x.rej -i p.diff",
])  # fmt: skip
def test_ordinary_edits_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command
