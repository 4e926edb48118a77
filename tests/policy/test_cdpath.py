"""``cd NAME`` looks NAME up in ``$CDPATH`` first: a worker that sets it moves ``cd``
out of its worktree while the policy follows ``cd`` into the worktree.

Found as a worker against a live server (the real hook front, its token):
``CDPATH=../.. cd docs && echo pwned > README.md`` was allowed as a write of the
worktree's ``docs/README.md`` and rewrote the lead's ``docs/README.md``;
``export CDPATH=../..; cd docs; rm -f README.md`` deleted it. Now a ``cd`` that CDPATH
may redirect, in a command line that may set CDPATH, leaves the directory unknown (so
writes and deletes there escalate), while ``cd src && ...`` stays judged in the worktree.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow
from exomonad.policy.shell_parse import parse
from tests.policy.worker import WT, bash

#: Each sets CDPATH (literally, through a builtin, a loop, an expansion, a name built at
#: run time, eval, or for a nested shell or a function called later) and then writes or
#: deletes below a directory ``cd`` looked up in it.
REDIRECTED = [
    "CDPATH=../.. cd docs && echo pwned > README.md",
    "export CDPATH=../..; cd docs; rm -f README.md",
    "CDPATH=../..; cd docs; rm -f README.md",
    'export C"D"PATH=../..; cd docs; rm -f README.md',
    "export $'\\x43DPATH'=../..; cd docs; rm -f README.md",
    "declare -x CDPATH=../..; cd docs; rm -f README.md",
    'v=CD; declare "${v}PATH=../.."; cd docs; rm -f README.md',
    'v=CDPATH; printf -v "$v" ../..; cd docs; rm -f README.md',
    'v=CDPATH; read "$v" <<< ../..; cd docs; rm README.md',
    "read CDPATH <<< ../..; cd docs; rm -f README.md",
    "mapfile -t CDPATH <<< ../..; cd docs; rm README.md",
    ": ${CDPATH:=../..}; cd docs; rm -f README.md",
    'eval "CDPATH=../.."; cd docs; rm -f README.md',
    "for CDPATH in ../..; do cd docs; rm -f README.md; done",
    "declare -n ref=CDPATH; ref=../..; cd docs; rm README.md",
    "CDPATH=../.. sh -c 'cd docs; rm -f README.md'",
    "export CDPATH=../..; bash -c 'cd docs && echo x > README.md'",
    "f() { cd docs; rm -f README.md; }; CDPATH=../.. f",
    "CDPATH=../.. pushd docs; rm -f README.md",
    "(CDPATH=../..; cd docs; touch x)",
    'v=CD; printf -v"${v}PATH" ../..; cd docs; rm -f README.md',
    "source ./env.sh; cd docs; rm -f README.md",
]


@pytest.mark.parametrize("command", REDIRECTED)
def test_a_cd_that_cdpath_may_redirect_is_not_followed_into_the_worktree(command: str) -> None:
    assert not isinstance(bash(command), Allow), command


#: cd's that CDPATH never looks up (absolute, ./ and ../), or command lines that never
#: set it: judged in the directory they name, as before.
KEPT = [
    ("cd docs && echo x > README.md", f"{WT}/docs"),
    ("cd src; rm -f old.txt", f"{WT}/src"),
    ("CDPATH=../..; cd ./docs; touch x", f"{WT}/docs"),
    ("CDPATH=../..; cd ../w1/docs; touch x", f"{WT}/docs"),
    (f"CDPATH=../..; cd {WT}/docs; touch x", f"{WT}/docs"),
    ("export FOO=1; cd docs; touch x", f"{WT}/docs"),
    ('printf "%s" "$x" > a.txt; cd src && rm old.txt', f"{WT}/src"),
]


@pytest.mark.parametrize(("command", "where"), KEPT)
def test_a_cd_cdpath_cannot_redirect_is_followed(command: str, where: str) -> None:
    assert isinstance(bash(command), Allow), command
    assert [c for c in parse(command, WT) if not c.alternative][-1].cwd == where


def test_the_parse_leaves_the_directory_unknown_after_a_redirectable_cd() -> None:
    (rm, *_) = [c for c in parse("CDPATH=/x cd docs; rm f", WT) if c.argv[:1] == ("rm",)]
    assert rm.cwd is None
    (rm, *_) = [c for c in parse("cd docs; rm f", WT) if c.argv[:1] == ("rm",)]
    assert rm.cwd == f"{WT}/docs"


def test_a_redirected_write_outside_the_worktree_really_happens_unless_refused(
    tmp_path: Path,
) -> None:
    """The real effect: bash run with each found command in a worktree layout rewrites
    the lead's ``docs/README.md``; the policy no longer allows any of them."""
    root = tmp_path / "p"
    wt = root / ".worktrees" / "w1"
    (wt / "docs").mkdir(parents=True)
    (root / "docs").mkdir()
    found = REDIRECTED[:2]
    for command in found:
        lead = root / "docs" / "README.md"
        lead.write_text("lead\n")
        (wt / "docs" / "README.md").write_text("worker\n")
        env = {k: v for k, v in os.environ.items() if k != "CDPATH"}
        subprocess.run(["bash", "-c", command], cwd=wt, env=env, check=False,
                       capture_output=True, timeout=30)  # fmt: skip
        assert not lead.exists() or lead.read_text() != "lead\n", command  # it really does
        assert not isinstance(bash(command, root=str(root)), Allow), command
