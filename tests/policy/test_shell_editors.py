"""Editors told to run commands (on their command line, or on stdin) are asked
(:mod:`exomonad.policy.shell_editors`, ``shell_programs``'s editors).

Found trying the gate as a worker: each command in ``OVERWRITES`` was allowed as an edit
in the worktree and, run here for real, overwrote the lead's Makefile.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Escalate
from tests.policy.worker import bash, scratch_worktree

LEAD = "all:\n\techo lead\n"

OVERWRITES = [
    "ex -sc 'w! ../../Makefile|q' x",
    "vim.basic -Nesc 'w! ../../Makefile|q' x",
    "ex -s x <<< 'w! ../../Makefile'",
    "echo 'w! ../../Makefile' | ex -s x",
    "ed -s x <<< 'w ../../Makefile'",
    "printf 'w ../../Makefile\\n' | ed -s x",
    "ed -s x <<'EOF'\nw ../../Makefile\nEOF",
    "printf 'w ../../Makefile\\n' > c.ed && ed -s x < c.ed",
]

#: Asked by their words alone (emacs is not installed on the project's machines).
ASKED = [
    'emacs --batch --eval \'(copy-file "x" "../../Makefile" t)\'',
    "emacs -batch -l x.el",
    "emacs --script x.el",
    "vim -V20../../Makefile -es x",
    "vim -w ../../Makefile x",
    "vim --startuptime ../../Makefile x",
]

ORDINARY = ["vim x.py", "vim -R +42 x.py", "vi -O a b", "vim -d a b", "emacs -nw x.py",
            "ed -s x < /dev/null", "echo hi | vim -"]  # fmt: skip


@pytest.mark.parametrize("command", OVERWRITES)
def test_an_editors_commands_that_overwrite_the_leads_file_are_asked(
    tmp_path: Path, command: str
) -> None:
    for program in ("ed", "ex", "vim.basic"):
        assert shutil.which(program), f"{program} is not installed: run `make setup`"
    root, wt = scratch_worktree(tmp_path)
    (root / "Makefile").write_text(LEAD)
    (wt / "x").write_text("all:\n\techo pwned\n")
    subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True, timeout=60,
                   check=False, stdin=subprocess.DEVNULL)  # fmt: skip
    assert "pwned" in (root / "Makefile").read_text(), command
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Escalate), (command, verdict)


@pytest.mark.parametrize("command", ASKED)
def test_an_editor_told_to_run_code_or_write_a_log_is_asked(command: str) -> None:
    verdict = bash(command)
    assert isinstance(verdict, Escalate), verdict


@pytest.mark.parametrize("command", ORDINARY)
def test_editing_in_the_worktree_stays_allowed(command: str) -> None:
    verdict = bash(command)
    assert isinstance(verdict, Allow), verdict
