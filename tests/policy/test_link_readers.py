"""A link in the worktree to the state, given to a program that prints what it reads.

Found trying the gate as a worker (reads): a worker plants ``x ->
../../.exomonad/lead.token`` in its worktree with allowed commands only (``echo
../../.rkbzbanq/yrnq.gbxra | tr a-z n-za-m | tr -d '\\n' | git hash-object -w --stdin``,
``git update-index --add --cacheinfo 120000,HASH,x``, ``git checkout -- x``; a checkout
may hold one too). ``cat x`` is refused, the link followed; but ``shuf x``, ``basenc
--base64 x``, ``ptx x``, ``yq . x``, ``openssl base64 -in x`` and ``man -l x`` printed
the token, allowed: none of them was read as a reader of its operands; so did running
it (``python3 x``, ``node x``, ``bash x``, ``source x`` quote it in their error),
compiling it (``cpp x``, ``gcc -E``, ``cpp -include x``) and ``jq -f x``. Now each is a
read of ``x``, the link followed. (Since, any call of a worker whose worktree holds such a
link is refused too, :mod:`exomonad.policy.planted`: these tests check both.)
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from exomonad.policy.actions import ReadFile
from exomonad.policy.classify import classify
from exomonad.policy.decisions import Allow, Deny
from tests.policy.worker import bash, request, scratch_worktree

SECRET = "exo_lead_scratch_secret"

READERS = [
    "shuf x",
    "basenc --base64 x | base64 -d",
    "ptx x",
    "yq . x",
    "openssl base64 -in x | base64 -d",
    "man -l x",
    "cpp x",
    "gcc -E -x c x",
    "cpp -include x /dev/null",
    "jq -f x",
    "source x",
    "bash x",
    "timeout 5 python3 x",
    "node x",
    "diff3 x /dev/null /dev/null",
    "sdiff x /dev/null",
    "join -a1 x /dev/null",
    "file -f x",
]


def _project(tmp_path: Path, *, planted: bool = True) -> tuple[Path, Path]:
    root, wt = scratch_worktree(tmp_path)
    (root / ".exomonad").mkdir()
    (root / ".exomonad" / "lead.token").write_text(SECRET + "\n")
    if planted:
        os.symlink("../../.exomonad/lead.token", wt / "x")
    (wt / "notes.txt").write_text("b\na\n")
    return root, wt


@pytest.mark.parametrize("command", READERS)
def test_a_link_to_the_state_given_to_a_printing_program_is_refused(
    tmp_path: Path, command: str
) -> None:
    program = command.split(maxsplit=1)[0]
    if program != "source" and shutil.which(program) is None:
        pytest.fail(f"{program} is not installed (make setup)")
    root, wt = _project(tmp_path)
    done = subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True, text=True,
                          env={**os.environ, "MANPAGER": "cat", "PAGER": "cat"},
                          check=False)  # fmt: skip
    printed = done.stdout + done.stderr  # an error message quotes it
    assert SECRET in printed, (command, done.stdout, done.stderr)  # the real effect
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Deny), (command, verdict)
    assert _reads(command, wt, wt / "x")  # the reader's own rule, beside the census


def _reads(command: str, wt: Path, path: Path) -> bool:
    """Whether the classifier reads ``path`` for ``command`` run in ``wt``."""
    actions = classify(request("Bash", {"command": command}, str(wt)))
    return any(isinstance(a, ReadFile) and a.path == str(path) for a in actions)


@pytest.mark.parametrize(
    "command",
    [
        "shuf notes.txt",
        "shuf -n 1 -e a b",
        "basenc --base64 notes.txt",
        "yq '.a' notes.txt",
        "yq e '.a' notes.txt",
        "openssl base64 -in notes.txt",
        "openssl rand -hex 4",
        "man git",
        "man -l notes.txt",
        "tsort notes.txt",
        "python3 tools/gen.py a b",
        "python3 -c 'print(1)'",
        "python3 -m pytest -q",
        "bash scripts/build.sh",
        "node index.js",
        "gcc -o app main.c -Iinclude",
        "jq -f filter.jq data.json",
        "source .venv/bin/activate",
        "sdiff notes.txt notes.txt",
        "file notes.txt",
        "file -f notes.txt",
    ],
)
def test_those_programs_on_the_worktrees_files_stay_allowed(tmp_path: Path, command: str) -> None:
    root, _ = _project(tmp_path, planted=False)
    assert isinstance(bash(command, root=str(root)), Allow), bash(command, root=str(root))


@pytest.mark.parametrize(
    "command",
    ["shuf -o ../../Makefile notes.txt", "yq -i .x=1 ../../c.yml", "sdiff -o ../../M a b"],
)
def test_their_writes_outside_are_still_asked(tmp_path: Path, command: str) -> None:
    """Their reads are added beside what they do, not instead of it."""
    root, _ = _project(tmp_path)
    assert not isinstance(bash(command, root=str(root)), Allow), bash(command, root=str(root))


@pytest.mark.parametrize(
    "command",
    ['cat "$(readlink x)"', 'f=$(readlink -f x); cat "$f"', "cat $(realpath x)",
     "readlink x | xargs cat", "readlink -f x | xargs head"],
)  # fmt: skip
def test_where_a_link_leads_handed_to_a_reader_is_refused(tmp_path: Path, command: str) -> None:
    """Found reviewing this round: ``readlink`` and ``realpath`` were taken for programs
    that print only their judged words, but they print where the link leads: each of
    these printed the token, allowed. Now each name they are given is read, its links
    followed when judged."""
    root, wt = _project(tmp_path)
    done = subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True, text=True,
                          check=False)  # fmt: skip
    assert SECRET in done.stdout, (command, done.stdout, done.stderr)
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Deny), (command, verdict)
    assert _reads(command, wt, wt / "x") or _reads(command, wt, root / ".exomonad/lead.token")
    (wt / "x").unlink()
    assert isinstance(bash('cat "$(realpath notes.txt)"', root=str(root)), Allow)
