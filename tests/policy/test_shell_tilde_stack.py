"""The directory stack's tildes name what bash makes of them: ``~+`` and ``~+0`` the
command's directory (``$PWD``), ``~-`` the previous one (``$OLDPWD``), ``~N``, ``~+N``
and ``~-N`` a ``pushd`` entry (not known).

Found trying the gate as a worker: each command in ``READS`` printed the lead's token,
allowed: ``~+`` was taken for a directory named ``~+`` in the worktree, one level below
where ``..`` climbs from.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Deny, Escalate
from tests.policy.worker import bash, scratch_worktree

SECRET = "exo_lead_secret"

READS = [
    "cat ~+/../../.e*/l*n",
    "cat ~+0/../../.e*/l*n",
    "pushd . >/dev/null; cat ~1/../../.e*/l*n",
    "head ~+/../../.[a-z]x*/*",
]


@pytest.mark.parametrize("command", READS)
def test_the_state_read_through_the_directory_stack_is_refused(
    tmp_path: Path, command: str
) -> None:
    root, wt = scratch_worktree(tmp_path)
    (root / ".exomonad").mkdir()
    (root / ".exomonad" / "lead.token").write_text(SECRET + "\n")
    done = subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True, text=True,
                          check=False)  # fmt: skip
    assert SECRET in done.stdout, (command, done.stdout, done.stderr)  # the real effect
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Deny), (command, verdict)


def test_the_state_directory_listed_through_the_stack_is_refused(tmp_path: Path) -> None:
    root, wt = scratch_worktree(tmp_path)
    (root / ".exomonad").mkdir()
    (root / ".exomonad" / "lead.token").write_text(SECRET + "\n")
    done = subprocess.run(["bash", "-c", "ls -a ~+/../../.e*"], cwd=wt, capture_output=True,
                          text=True, check=False)  # fmt: skip
    assert "lead.token" in done.stdout, done
    assert isinstance(bash("ls -a ~+/../../.e*", root=str(root)), Deny)


@pytest.mark.parametrize("command", ["echo x > ~+/../../Makefile", "echo x > ~-/x",
                                     "echo x > ~2/x", "cp x ~-3/x"])  # fmt: skip
def test_a_write_through_the_stack_is_asked(command: str) -> None:
    assert isinstance(bash(command), Escalate), command


@pytest.mark.parametrize("command", ["cat ~+/x.py", "ls ~+", "cat ~/x", "ls ~+/src"])
def test_the_worktree_read_through_the_stack_stays_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command
